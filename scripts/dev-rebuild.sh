#!/usr/bin/env bash
# Developer's quick rebuild: the extension module only, copied over the one the editable install
# put in the virtualenv (scripts/setup.sh does the full build, tests and the package data).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${MKB_BUILD_DIR:-build/dev}
PY=${MKB_VENV:-.venv}/bin/python
cmake --build "$BUILD_DIR" --target _core "$@"
# Found without importing the package (whose Python may already need the new module).
dest=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['platlib'])")/metakernelbench
# A new file moved into place: processes running the old module keep their mapping of it.
for so in "$BUILD_DIR"/python/metakernelbench/_core*.so; do
  cp "$so" "$dest/.$(basename "$so").new"
  mv -f "$dest/.$(basename "$so").new" "$dest/$(basename "$so")"
done
echo "installed the extension into $dest"
