#!/usr/bin/env bash
# Regenerates the type stubs of the C++ module (python/metakernelbench/_core/*.pyi) from the
# built extension. Run after changing bindings/; tests/python/test_stubs.py checks they cover it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -m pip install -q --disable-pip-version-check pybind11-stubgen
out=$(mktemp -d)
"$PY" -m pybind11_stubgen metakernelbench._core -o "$out"
cp "$out"/metakernelbench/_core/*.pyi python/metakernelbench/_core/
rm -rf "$out"
echo "stubs written to python/metakernelbench/_core/"
