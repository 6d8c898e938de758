"""The packages installed beside the toolchain that a kernel may not import
(metakernelbench/kernel_imports.py, the static audit's third_party_roots)."""

import sys

from metakernelbench import _core
from metakernelbench.kernel_imports import TOOLCHAIN_ROOTS, third_party_roots


def test_the_list_holds_installed_helpers_and_never_the_toolchain_or_the_standard_library():
    roots = third_party_roots()
    # What this environment installs for the project itself (its tests, plots, CLI).
    for name in ("pytest", "jinja2", "yaml", "sympy"):
        assert name in roots, name
    assert not set(roots) & TOOLCHAIN_ROOTS
    assert not set(roots) & set(sys.stdlib_module_names)
    assert all(name.isidentifier() for name in roots)


def test_the_audit_refuses_them_and_passes_the_toolchain():
    roots = third_party_roots()

    def codes(source):
        return {
            f.code
            for f in _core.static_audit(source, "", False, None, third_party_roots=roots)
            if f.severity == "violation"
        }

    assert "static.forbidden_import" in codes("import sympy\n")
    assert "static.forbidden_import" in codes("from jinja2 import Environment\n")
    assert not codes("import math\nimport torch\nimport numpy as np\nfrom typing import Tuple\n")
