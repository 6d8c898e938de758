"""The child process of `mkb check` (see dslcheck/__init__.py). Prints one line
`@@mkb-check@@<json list of diagnostics>` on stdout."""

from __future__ import annotations

import argparse
import json
import os
import sys


def _emit(diagnostics: list[dict]) -> None:
    sys.stdout.write("\n@@mkb-check@@" + json.dumps(diagnostics) + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dsl", required=True)
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--problem-dir", required=True)
    parser.add_argument("--arch", required=True)
    parser.add_argument("--sites", default="[]")
    args = parser.parse_args()

    from .. import toolchains
    from .common import syntax_diagnostic

    toolchains.activate(json.loads(args.sites))
    with open(args.kernel, encoding="utf-8", errors="surrogateescape") as f:
        source = f.read()
    # 1. Syntax, as Python itself reports it.
    syntax = syntax_diagnostic(source, args.kernel)
    if syntax is not None:
        _emit([syntax])
        return
    diagnostics: list[dict] = []
    # 2. The judge's static audit: what a submission would be refused for.
    import re

    from .. import _core
    from ..kernel_imports import third_party_roots
    from ..module_aliases import module_aliases

    for finding in _core.static_audit(
        source, args.dsl, True, None, module_aliases=module_aliases(), third_party_roots=third_party_roots()
    ):
        if finding.severity == "violation":
            m = re.match(r"kernel\.py:(\d+):", finding.evidence)
            diagnostics.append(
                {
                    "kind": "audit",
                    "message": f"{finding.code}: {finding.message}",
                    "line": int(m.group(1)) if m else None,
                    "detail": finding.evidence,
                }
            )
    # 3. The problem's small workload, on the CPU, from a fixed seed.
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location(
        "_mkb_check_reference", os.path.join(args.problem_dir, "reference.py")
    )
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    torch.manual_seed(0)
    inputs = list(reference.make_inputs(workload="small", device="cpu"))
    # 4. Import and compile: the DSL's hook.
    hook = importlib.import_module(f"metakernelbench.dslcheck.{args.dsl}")
    try:
        diagnostics += hook.check(args.kernel, inputs, args.arch)
    except BaseException as error:  # a hook must not raise; if it does, say so
        from .common import from_exception

        diagnostics.append(from_exception(error, args.kernel, "runtime"))
    _emit(diagnostics)


if __name__ == "__main__":
    main()
