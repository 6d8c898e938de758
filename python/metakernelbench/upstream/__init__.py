"""Results of the published Python harness, imported into a store.

    import metakernelbench as mkb
    from metakernelbench import upstream
    imported = upstream.import_results("MetaKernelBench/results", "results.db")
    mkb.Store("results.db").stats(imported[0].experiment)

The published harness (github.com/YIGE24/MetaKernelBench: Harbor agents in Modal sandboxes,
graded on B200s) keeps one results tree per model, `results/<model>/`:

    store.json                       {"model": <LiteLLM id>, "prefix": sha256(model)[:6], ...}
    results.json                     its snapshot: aggregates, and each problem's category
    problems/<NN>_<problem>/
        <prefix>_p<NN>_r<k>_<arm>/   one trial: replicate k (from 1), arm solo_cutedsl, solo_tirx,
            record.json              cutedsl2tirx_skill or tirx2cutedsl_skill
            verdict.json             the final verdict's rewards and details (optional)
            submissions.jsonl        one line per submission (optional)
            artifacts/app/SKILL.md   the skill a solo left (optional)
            result.json              Harbor's TrialResult (optional; only its times are read)
        skills/r<k>_<direction>.md   the skill handed to a conditioned trial (optional)
    archive/                         earlier tries (not imported)

record.json holds the trial's outcome: `rewards` (`passed`, `speedup_vs_eager`, `imported`,
`correct`), `timed_out`, `error` (the trial failed after the harness's retries), `skipped` (a
conditioned arm whose source wrote no SKILL.md), `usage` (`n_input_tokens` including cache,
`n_cache_tokens`, `n_output_tokens`, `cost_usd`, `agent_sec`) and `stamps` (`task_fingerprint`,
`skill_sha256`). Each model's tree becomes one experiment of the four standard arms, stored by the
protocol itself (libmkb/protocol) with an executor that replays the records instead of running
agents: every stored attempt, skill hand-over, skip and failure goes through the same code as a
run of our own. docs/statistics.md ("Importing the published harness's results") gives the
mapping field by field. Reading is strict: a malformed file or field is an InvalidArgumentError
naming the file and the field; optional files and fields may be missing.
"""

from __future__ import annotations

from .importing import (
    ImportResult,
    PreparedImport,
    experiment_for,
    import_model_results,
    import_results,
    prepare_model_import,
    store_model_import,
)
from .replay import Replay
from .tree import (
    ARMS,
    DEPENDENT_SKILL,
    DIRECTION,
    EXPERIMENT_PREFIX,
    FAMILIES,
    MAPPING_VERSION,
    SKILL_SOURCE,
    ModelResults,
    Record,
    Trial,
    Usage,
    is_model_tree,
    model_trees,
    read_model_results,
    read_record,
)

__all__ = [
    "ARMS",
    "DEPENDENT_SKILL",
    "DIRECTION",
    "EXPERIMENT_PREFIX",
    "FAMILIES",
    "MAPPING_VERSION",
    "SKILL_SOURCE",
    "ImportResult",
    "ModelResults",
    "Record",
    "PreparedImport",
    "Replay",
    "Trial",
    "Usage",
    "experiment_for",
    "import_model_results",
    "import_results",
    "is_model_tree",
    "model_trees",
    "prepare_model_import",
    "read_model_results",
    "store_model_import",
    "read_record",
]
