#!/usr/bin/env bash
# Developer's quick rebuild: the extension module only, copied over the one the editable install
# put in the virtualenv (scripts/setup.sh does the full build, tests and the package data).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${MKB_BUILD_DIR:-build/dev}
PY=${MKB_VENV:-.venv}/bin/python
cmake --build "$BUILD_DIR" --target _core "$@"
dest=$("$PY" -c "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('metakernelbench._core').origin))")
cp "$BUILD_DIR"/python/metakernelbench/_core*.so "$dest"/
echo "installed the extension into $dest"
