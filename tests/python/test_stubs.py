"""The shipped type stubs (python/metakernelbench/_core/*.pyi) cover the C++ module; regenerate
them with scripts/gen-stubs.sh after changing the bindings."""

import ast
from pathlib import Path

from metakernelbench import _core

STUBS = Path(__file__).resolve().parents[2] / "python" / "metakernelbench" / "_core"


def _stub_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def test_every_public_name_of_the_module_has_a_stub():
    stubbed = _stub_names(STUBS / "__init__.pyi")
    public = {n for n in dir(_core) if not n.startswith("_")}
    missing = sorted(public - stubbed)
    assert not missing, f"run scripts/gen-stubs.sh: no stub for {missing}"


def test_submodules_have_stubs():
    for name in ("stats", "store", "protocol") + (("cuda",) if _core.built_with_cuda else ()):
        module = getattr(_core, name)
        stubbed = _stub_names(STUBS / f"{name}.pyi")
        missing = sorted({n for n in dir(module) if not n.startswith("_")} - stubbed)
        assert not missing, f"run scripts/gen-stubs.sh: no stub for {name}.{missing}"
