"""Writes tests/data/upstream-results/: a small synthetic results tree in the layout of the
published Python harness (github.com/YIGE24/MetaKernelBench, results/<model>/), for the import
tests. Run it again after changing it: `python tests/data/make_upstream_results.py`.

Two models on problems 02, 25 and 28 (one per family of the bundled suite):

- glm-5.3 (openrouter/z-ai/glm-5.3), replicates 1 and 2, with the harness's edge cases: a solo
  that failed after its retries (`error`; its conditioned trial never ran), a solo that wrote no
  SKILL.md (its conditioned trial `skipped`), a timed-out trial that still passed, a kernel that
  imported but mismatched, a trial folder without record.json (the harness died mid-trial),
  usage with a missing cost, skills handed over as attachments only, submissions.jsonl,
  verdict.json and Harbor's result.json;
- qwen3.8-flash (dashscope/qwen3.8-flash), replicate 1, every trial clean.

results.json is the harness's snapshot with its aggregates (n_cell_replicates, n_resolved,
source_coverage, skill_coverage; R@t, S; base / skill / lift; with_skill, by_source_verdict;
usage per arm; for the whole tree, by_direction, by_category and each cell), computed here the
way its results.py does, so that a test can check ours against them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "upstream-results"
THRESHOLDS = (0.0, 0.5, 1.0, 2.0, 4.0)
PROBLEMS = {
    "02_gqa_paged_decode_h5_kv1_d128_ps1_bf16": "attention",
    "25_batched_kv_cache_block_copy_remap_uint8": "kv_cache",
    "28_fused_add_rmsnorm_h4096_llama31_8b_bf16": "mlp_norm",
}
DIRECTIONS = {"cutedsl2tirx": ("cutedsl", "tirx"), "tirx2cutedsl": ("tirx", "cutedsl")}
HEADER = (
    "## Skill from a prior attempt\n\n"
    "This skill was distilled while working on this same problem in a different kernel DSL.\n\n"
)


def passed(speedup: float, **extra) -> dict:
    return {"rewards": {"imported": 1.0, "correct": 1.0, "speedup_vs_eager": speedup, "passed": 1.0}, **extra}


def mismatch(**extra) -> dict:
    return {"rewards": {"imported": 1.0, "correct": 0.0, "speedup_vs_eager": 0.0, "passed": 0.0}, **extra}


def not_imported(**extra) -> dict:
    return {"rewards": {"imported": 0.0, "correct": 0.0, "speedup_vs_eager": 0.0, "passed": 0.0}, **extra}


# model dir -> (model id, {(problem number, k, arm): outcome}); an outcome is a dict with the
# record's fields (rewards, timed_out, error, skipped, usage override) and test-only keys:
# "skill" (the SKILL.md a solo leaves: text, None for none, "attachment" to ship it only as the
# handed-over attachment), "no_record", "verdict", "submissions", "harbor".
MODELS = {
    "glm-5.3": (
        "openrouter/z-ai/glm-5.3",
        {
            (2, 1, "solo_cutedsl"): passed(1.42, skill="Use one warp per (batch, head); log2-domain LSE."),
            (2, 1, "solo_tirx"): mismatch(
                verdict="output[0] max abs error 3.1e-02 exceeds the allowance 4.0e-03"
            ),
            (2, 1, "cutedsl2tirx_skill"): passed(1.18, submissions=[(True, 0.0), (True, 1.18)]),
            (2, 1, "tirx2cutedsl_skill"): passed(1.60),
            (2, 2, "solo_cutedsl"): passed(0.90, skill="attachment"),
            (2, 2, "solo_tirx"): passed(1.05, skill="Stage K/V pages through shared memory."),
            (2, 2, "cutedsl2tirx_skill"): passed(2.30, timed_out=True, harbor=True),
            (2, 2, "tirx2cutedsl_skill"): mismatch(),
            (25, 1, "solo_cutedsl"): passed(3.10, skill="A block copy is bandwidth bound: 16-byte vectors."),
            (25, 1, "solo_tirx"): passed(2.40, skill="Vectorise the uint8 copy as uint4."),
            (25, 1, "cutedsl2tirx_skill"): passed(4.50),
            (25, 1, "tirx2cutedsl_skill"): passed(1.90),
            (25, 2, "solo_cutedsl"): passed(2.80, skill="Remap the block table once per launch."),
            (25, 2, "solo_tirx"): {
                "rewards": {},
                "error": "RateLimitError: provider returned 429 after 3 tries",
            },
            (25, 2, "cutedsl2tirx_skill"): passed(2.95, usage={"cost_usd": None}),
            (28, 1, "solo_cutedsl"): passed(1.10, skill=None),
            (28, 1, "solo_tirx"): passed(0.95, skill="Fuse the residual add into the reduction pass."),
            (28, 1, "cutedsl2tirx_skill"): {"rewards": {}, "skipped": "the source solo wrote no SKILL.md"},
            (28, 1, "tirx2cutedsl_skill"): not_imported(),
            (28, 2, "solo_cutedsl"): passed(1.30, skill="One CTA per row, 4096 / 8 elements per thread."),
            (28, 2, "solo_tirx"): passed(1.25, skill="Welford is unnecessary: sum of squares in fp32."),
            (28, 2, "cutedsl2tirx_skill"): passed(1.28),
            (28, 2, "tirx2cutedsl_skill"): {"no_record": True},
        },
    ),
    "qwen3.8-flash": (
        "dashscope/qwen3.8-flash",
        {
            (2, 1, "solo_cutedsl"): passed(0.70, skill="Paged gathers dominate; coalesce along head_dim."),
            (2, 1, "solo_tirx"): passed(0.80, skill="T.copy of a page row into shared memory."),
            (2, 1, "cutedsl2tirx_skill"): passed(0.65),
            (2, 1, "tirx2cutedsl_skill"): passed(1.10),
            (25, 1, "solo_cutedsl"): mismatch(skill="Index with int64 slot ids."),
            (25, 1, "solo_tirx"): passed(1.50, skill="Copy whole blocks with 128-bit loads."),
            (25, 1, "cutedsl2tirx_skill"): passed(1.70),
            (25, 1, "tirx2cutedsl_skill"): passed(1.40),
            (28, 1, "solo_cutedsl"): passed(1.15, skill="A single pass over the row with warp shuffles."),
            (28, 1, "solo_tirx"): mismatch(skill="Reduce in fp32 before casting back to bf16."),
            (28, 1, "cutedsl2tirx_skill"): passed(1.20),
            (28, 1, "tirx2cutedsl_skill"): mismatch(),
        },
    ),
}


def usage_of(key: tuple[int, int, str], override: dict | None) -> dict:
    number, k, arm = key
    seed = int(hashlib.sha256(repr(key).encode()).hexdigest(), 16)
    skill = arm.endswith("_skill")
    usage = {
        "n_input_tokens": 200_000 + seed % 300_000 - (60_000 if skill else 0),
        "n_cache_tokens": 120_000 + seed % 50_000,
        "n_output_tokens": 8_000 + seed % 12_000,
        "cost_usd": round(0.35 + (seed % 1000) / 1000 - (0.15 if skill else 0.0), 4),
        "agent_sec": round(600 + seed % 1800 - (200 if skill else 0), 1),
    }
    usage.update(override or {})
    return usage


def write_json(path: Path, payload) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")


# The harness's aggregates (its metakernelbench/results.py), for results.json.
def attains(record: dict, t: float) -> bool:
    return record["rewards"].get("passed", 0.0) >= 1.0 and record["rewards"].get("speedup_vs_eager", 0.0) >= t


def ladder(records: list[dict]) -> dict:
    rates = {f"R@{t:g}": statistics.mean(attains(r, t) for r in records) for t in THRESHOLDS}
    return {**rates, "S": 100 * statistics.mean(rates.values())}


def contrast(reps: list[tuple[dict, dict, dict]]) -> dict:
    if not reps:
        return {"base": None, "skill": None, "lift": None}
    base = ladder([b for _, b, _ in reps])
    skill = ladder([b if s.get("skipped") else s for _, b, s in reps])
    return {"base": base, "skill": skill, "lift": {k: skill[k] - base[k] for k in base}}


def resolved(trio: tuple) -> bool:
    return all(r is not None and r.get("error") is None for r in trio)


def mean_or_none(values: list) -> float | None:
    return statistics.mean(values) if values else None


def total_or_none(values: list) -> float | None:
    return sum(values) if values and None not in values else None


def usage_by_arm(trials: dict) -> dict:
    """The harness's _usage_by_arm: per arm, every trial holding a record with usage, once."""
    out = {}
    for arm in sorted({a for (_, _, a) in trials}):
        usages = [r["usage"] for (_, _, a), r in trials.items() if a == arm and r and r.get("usage")]
        out[arm] = {
            "n_trials": len(usages),
            "cost_usd": total_or_none([u["cost_usd"] for u in usages]),
            "n_input_tokens": total_or_none([u["n_input_tokens"] for u in usages]),
            "n_cache_tokens": total_or_none([u["n_cache_tokens"] for u in usages]),
            "n_output_tokens": total_or_none([u["n_output_tokens"] for u in usages]),
            "agent_sec": mean_or_none([u["agent_sec"] for u in usages]),
        }
    return out


def group(every: list[tuple[tuple, dict]]) -> dict:
    """The harness's _group_metrics over cell-replicates ((problem, k, arms), trio), resolved or
    not."""
    reps = [trio for _, trio in every if resolved(trio)]
    trials = {}
    for (number, k, arms), trio in every:
        for arm, record in zip(arms, trio, strict=True):
            trials[(number, k, arm)] = record
    return {
        "n_cell_replicates": len(every),
        "n_resolved": len(reps),
        "source_coverage": mean_or_none([attains(r[0], 0.0) for r in reps]),
        "skill_coverage": mean_or_none([not r[2].get("skipped") for r in reps]),
        **contrast(reps),
        "with_skill": contrast([r for r in reps if not r[2].get("skipped")]),
        "by_source_verdict": {
            "passed": contrast([r for r in reps if attains(r[0], 0.0)]),
            "failed": contrast([r for r in reps if not attains(r[0], 0.0)]),
        },
        "usage": usage_by_arm(trials),
    }


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    for folder, (model, trials) in MODELS.items():
        root = OUT / folder
        prefix = hashlib.sha256(model.encode()).hexdigest()[:6]
        write_json(
            root / "store.json", {"model": model, "prefix": prefix, "created_at": "2026-05-02T10:00:00+08:00"}
        )
        records: dict[tuple[int, int, str], dict] = {}
        folders: set[tuple[int, int]] = set()  # (problem, k) with any trial folder
        for key, outcome in sorted(trials.items()):
            number, k, arm = key
            folders.add((number, k))
            problem = next(p for p in PROBLEMS if int(p[:2]) == number)
            trial_dir = root / "problems" / problem / f"{prefix}_p{number:02d}_r{k}_{arm}"
            trial_dir.mkdir(parents=True, exist_ok=True)
            if outcome.get("no_record"):  # the harness died mid-trial: Harbor's log, no record
                (trial_dir / "trial.log").write_text(
                    f"[{problem}_{arm.split('_')[0]}] sandbox phase started\n"
                )
                continue
            record = {
                "rewards": outcome["rewards"],
                "timed_out": outcome.get("timed_out", False),
                "error": outcome.get("error"),
                "skipped": outcome.get("skipped"),
                "usage": None
                if outcome.get("error") or outcome.get("skipped")
                else usage_of(key, outcome.get("usage")),
                "stamps": {
                    "task_fingerprint": hashlib.sha256(
                        f"{problem}/{arm.split('_')[-1]}".encode()
                    ).hexdigest(),
                    "skill_sha256": None,
                },
            }
            if arm.endswith("_skill") and not outcome.get("skipped"):
                source = trials[(number, k, "solo_" + arm.split("2")[0])]
                text = source.get("skill") if source.get("skill") != "attachment" else "From the attachment."
                record["stamps"]["skill_sha256"] = hashlib.sha256(
                    (HEADER + (text or "")).encode()
                ).hexdigest()
            write_json(trial_dir / "record.json", record)
            records[key] = record
            if not outcome.get("error") and not outcome.get("skipped"):
                details = {
                    "error": None,
                    "mismatch": outcome.get("verdict"),
                    "n_correct_draws": 5 if record["rewards"].get("correct") else 0,
                }
                write_json(
                    trial_dir / "verdict.json",
                    {
                        "rewards": record["rewards"],
                        "details": details,
                        "report": "passed: yes\n" if record["rewards"].get("passed") else "passed: no\n",
                        "stderr": "",
                        "eval_sec": 41.5,
                    },
                )
            if "submissions" in outcome:
                lines = [
                    {
                        "id": f"s{i}",
                        "elapsed_sec": 300.0 * (i + 1),
                        "counted": counted,
                        "rewards": {"passed": float(s > 0), "speedup_vs_eager": s},
                        "note": None,
                    }
                    for i, (counted, s) in enumerate(outcome["submissions"])
                ]
                (trial_dir / "submissions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
            if outcome.get("harbor"):
                write_json(
                    trial_dir / "result.json",
                    {
                        "task_name": f"{problem}_tirx",
                        "trial_name": trial_dir.name,
                        "agent_info": {
                            "name": "terminus-2",
                            "version": "2.0.0",
                            "model_info": {"name": "z-ai/glm-5.3", "provider": "openrouter"},
                        },
                        "agent_result": {
                            "n_input_tokens": 1,
                            "n_cache_tokens": 0,
                            "n_output_tokens": 1,
                            "cost_usd": 0.01,
                        },
                        "verifier_result": None,
                        "exception_info": {
                            "exception_type": "AgentTimeoutError",
                            "exception_message": "agent ran past 2400s",
                            "exception_traceback": "",
                            "occurred_at": "2026-05-02T11:40:00+08:00",
                        },
                        "started_at": "2026-05-02T11:00:00+08:00",
                        "finished_at": "2026-05-02T11:41:10+08:00",
                    },
                )
            skill = outcome.get("skill")
            if arm.startswith("solo_") and skill:
                direction = arm.removeprefix("solo_") + "2" + ("tirx" if arm == "solo_cutedsl" else "cutedsl")
                attachment = root / "problems" / problem / "skills" / f"r{k}_{direction}.md"
                if skill == "attachment":
                    attachment.parent.mkdir(parents=True, exist_ok=True)
                    attachment.write_text(HEADER + "From the attachment.\n")
                else:
                    (trial_dir / "artifacts" / "app").mkdir(parents=True, exist_ok=True)
                    (trial_dir / "artifacts" / "app" / "SKILL.md").write_text(skill + "\n")
        # results.json: the harness's snapshot, from the records written above
        cells, by_cell = [], {}
        for problem, category in PROBLEMS.items():
            number = int(problem[:2])
            for direction, (src, dst) in DIRECTIONS.items():
                arms = (f"solo_{src}", f"solo_{dst}", f"{direction}_skill")
                reps = []
                for k in sorted(kk for (n, kk) in folders if n == number):
                    trio = tuple(records.get((number, k, arm)) for arm in arms)
                    reps.append(((number, k, arms), trio))
                by_cell[(problem, category, direction)] = reps
                cells.append(
                    {
                        "cell": {
                            "problem": problem,
                            "category": category,
                            "direction": direction,
                            "source_task": f"{problem}_{src}",
                            "target_task": f"{problem}_{dst}",
                        },
                        **group(reps),
                    }
                )
        every = [r for reps in by_cell.values() for r in reps]
        overall = {
            "n_cells": len(cells),
            **group(every),
            "by_direction": {
                d: group([r for (p, c, dd), reps in by_cell.items() if dd == d for r in reps])
                for d in DIRECTIONS
            },
            "by_category": {
                c: group([r for (p, cc, d), reps in by_cell.items() if cc == c for r in reps])
                for c in sorted(set(PROBLEMS.values()))
            },
        }
        write_json(
            root / "results.json",
            {
                "legend": {"note": "synthetic test data"},
                "model": model,
                "harbor_version": "0.20.0",
                "overall": overall,
                "cells": cells,
            },
        )


if __name__ == "__main__":
    main()
