"""The packages installed beside the toolchain that a kernel may not import, for the static audit.

A variant's kernel is torch, numpy, the variant's DSL (with its runtimes: cuda-python, tvm_ffi,
ml_dtypes) and Python's standard library. Whatever else the judge's environment has
installed (sympy, jinja2, PyYAML, pytest, scipy, ...) is a library of helpers that import
modules, read attributes or evaluate text on a kernel's behalf: red teams reached ctypes through
sympy's `import_module`, jinja2's `Environment.getattr` and YAML's python-module tag
(2026-12-06). The static audit (C++ StaticAuditOptions.third_party_roots) refuses an import of
any of them. The list is read from the installed distributions' metadata, so it follows the
environment; a warm host computes it once, before it forks. Outside the judge package:
`mkb check` in the agent's shell lists them too."""

from __future__ import annotations

import sys
from importlib import metadata

from . import _core

# Top-level packages of the toolchain: what a kernel may import beside the standard library's
# allowed modules (the C++ core's list: the static audit refuses every other root).
TOOLCHAIN_ROOTS = frozenset(_core.kernel_import_roots()["toolchain"])

_CACHE: list[str] | None = None


def third_party_roots() -> list[str]:
    """Top-level import names of the installed distributions, less the toolchain's and the
    standard library's (a distribution that installs a module under a standard name does not
    take that name from the standard library). Cached: the environment does not change under
    a running judge."""
    global _CACHE
    if _CACHE is None:
        names: dict[str, list[str]]
        try:
            names = dict(metadata.packages_distributions())
        except Exception:  # unreadable metadata: no list, the rule tables still apply
            names = {}
        stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
        _CACHE = sorted(
            name
            for name in names
            if name.isidentifier() and name not in TOOLCHAIN_ROOTS and name not in stdlib
        )
    return _CACHE
