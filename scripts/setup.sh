#!/usr/bin/env bash
# Installs everything MetaKernelBench needs on a fresh Debian 12 or Ubuntu 24.04 machine, and
# builds it. Idempotent: a second run only checks, then rebuilds what changed.
#
#   scripts/setup.sh            system packages, .venv with the Python packages, build
#   MKB_SKIP_APT=1 ...          skip the system packages (you installed them yourself)
#   MKB_SKIP_DSL=1 ...          skip the DSL toolchains (.dsl/, see mkb dsl --help)
#
# System packages come from apt (sudo is used when not root); Python packages go into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${MKB_VENV:-$ROOT/.venv}
BUILD_DIR=${MKB_BUILD_DIR:-build/dev}

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# ---------------------------------------------------------------------------------------------
# System packages
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  python3 python3-venv python3-dev
  libabsl-dev libprotobuf-dev protobuf-compiler libsqlite3-dev libcurl4-openssl-dev
  libdlpack-dev nlohmann-json3-dev bubblewrap
)
# Headless Chromium opens report.html in tests/python/test_report.py. Debian's package is a real
# browser; Ubuntu 24.04's is a snap (that test skips there), so it is added on Debian only.
if [ -r /etc/os-release ] && grep -qx 'ID=debian' /etc/os-release; then
  APT_PACKAGES+=(chromium fonts-dejavu-core)
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
catch2_v3() { installed catch2 && dpkg-query -W -f='${Version}' catch2 | grep -q '^3'; }

if [ -z "${MKB_SKIP_APT:-}" ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  missing=()
  for p in "${APT_PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ] || ! catch2_v3; then
    # shellcheck disable=SC1091
    . /etc/os-release
    catch2_target=()
    if [ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ]; then
      # Catch2 v3 is in bookworm-backports only.
      if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        say "adding bookworm-backports (for Catch2 v3)"
        echo "deb http://deb.debian.org/debian bookworm-backports main" |
          $SUDO tee /etc/apt/sources.list.d/mkb-bookworm-backports.list >/dev/null
      fi
      catch2_target=(-t bookworm-backports)
    fi
    say "installing system packages: ${missing[*]} catch2"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${catch2_target[@]}" catch2 >/dev/null
  fi
  catch2_v3 || { echo "Catch2 v3 could not be installed" >&2; exit 1; }
fi

# ---------------------------------------------------------------------------------------------
# Python environment
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
stamp="$VENV/.mkb-deps-$(cat pyproject.toml scripts/constraints.txt | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  # torch with its CUDA libraries is about 6 GB installed, pip's download cache up to 4 GB more,
  # the build and the DSL toolchains 2 GB (10 GB is asked for: the cache may be warm): a full disk would otherwise surface as an OSError
  # halfway through pip. MKB_MIN_FREE_GB=0 skips the check.
  need_gb=${MKB_MIN_FREE_GB:-10}
  free_kb=$(df -Pk "$(dirname "$VENV")" | awk 'NR == 2 { print $4 }')
  if [ -n "$free_kb" ] && [ "$need_gb" -gt 0 ] && [ "$free_kb" -lt $((need_gb * 1024 * 1024)) ]; then
    echo "setup: $(dirname "$VENV") has $((free_kb / 1024 / 1024)) GB free; installing the Python" \
      "packages needs about $need_gb GB (set MKB_MIN_FREE_GB to change the check)" >&2
    exit 1
  fi
  say "installing Python packages into $VENV (torch is a large download the first time)"
  "$PY" -m pip install -q --disable-pip-version-check --upgrade pip
  "$PY" -m pip install -q --disable-pip-version-check -c scripts/constraints.txt \
    scikit-build-core pybind11 ninja
  # Runtime and test dependencies of the package, without building it yet.
  "$PY" - <<'PYEOF' > "$VENV/.mkb-requirements.txt"
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
deps = list(project["dependencies"])
for extra in ("analysis", "test", "lint"):
    deps += project["optional-dependencies"][extra]
print("\n".join(deps))
PYEOF
  "$PY" -m pip install -q --disable-pip-version-check -c scripts/constraints.txt -r "$VENV/.mkb-requirements.txt"
  rm -f "$VENV"/.mkb-deps-*
  touch "$stamp"
fi

# ---------------------------------------------------------------------------------------------
# Build: the C++ core, its tests and the Python package (editable), in one CMake build.
say "building (CMake build dir: $BUILD_DIR)"
"$PY" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps -e . \
  -Cbuild-dir="$BUILD_DIR" -Ccmake.define.MKB_BUILD_TESTS=ON -Ccmake.build-type=RelWithDebInfo \
  -Ceditable.rebuild=false
# ---------------------------------------------------------------------------------------------
# The DSL toolchains (SPEC §2): one site directory each under .dsl/ (MKB_DSL_HOME), holding only
# what the pinned DSL adds over .venv. Idempotent. MKB_SKIP_DSL=1 skips them.
if [ -z "${MKB_SKIP_DSL:-}" ]; then
  say "DSL toolchains (mkb dsl install)"
  "$PY" -m metakernelbench.cli dsl install
fi
say "ready: source $VENV/bin/activate, then try: mkb problems list"
