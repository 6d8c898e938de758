#!/usr/bin/env bash
# The GPU check: builds libmkb and the Python package on a GPU machine, runs every test with the
# GPU-tagged ones enabled, then the GPU benchmarks, and prints a short table.
#
#   scripts/gpu-check.sh              build, GPU tests, benchmarks (benchmarks/*/run.py)
#   MKB_SKIP_TESTS=1 MKB_BENCHMARKS="benchmarks/x/run.py" scripts/gpu-check.sh   a subset
#   MKB_SKIP_PYTEST=1 ...                                                          C++ tests only
#   MKB_SKIP_CTEST=1 ...                                                           Python tests only
#   MKB_PYTEST_ARGS="tests/python/test_adversarial.py" ...                         some GPU tests
#   MKB_SKIP_BUILD=1 ...             reuse the installed build of an earlier run on this warm
#                                    machine (source changes since then are not in it)
#   MKB_BENCH_ARGS="--problems 28" ...   arguments for the benchmarks
#   MKB_THEN="cmd" ...               then runs cmd in the same environment ($MKB_PY, $OUT_DIR)
#   MKB_DEADLINE=$(( $(date +%s) + 570 )) ...   every long step stopped by then (a call's limit)
#   MKB_SKIP_SOLUTIONS=1 scripts/gpu-check.sh --dsl   the DSLs without verify-solutions
#   MKB_ONLY_DSL=cutedsl ... --dsl   one DSL in one call (carrying .gpu/dsl/cutedsl.tar.xz and
#                                    .gpu/debs fits the carry limit): the other is not required,
#                                    and the smoke test and verify-solutions judge this one only
#   MKB_NO_SMOKE=1 ... --dsl         without the smoke test (problem 28's two solutions, judged
#                                    first; when every one fails, verify-solutions is skipped)
#   scripts/gpu-check.sh --prepare    here, with network: fetch the system packages the lent
#                                     GPU machine lacks into .gpu/debs, and pack both DSL
#                                     toolchains for its Python into .gpu/dsl (docs/gpu-device.md)
#   scripts/gpu-check.sh --dsl-stage  there: unpack the carried .gpu/dsl/*.tar.xz into
#                                     /tmp/mkb-dsl and stop (the first of two runs: one run
#                                     cannot carry both DSLs)
#   scripts/gpu-check.sh --dsl        there: as the plain check, plus the DSLs: unpack what was
#                                     carried, then `mkb suite verify-solutions` and the DSL tests
#   MKB_GPU_DEMO=1 ... --dsl          also the GPU demo (`mkb demo --device cuda`: the protocol's
#                                     four arms with DSL kernels, the agent's shell sandbox and
#                                     the GPU judge); its log and its store's export (JSON Lines,
#                                     with the store, in gpu-demo-export.tar.gz) go to $OUT
#
# On a machine set up by scripts/setup.sh it uses .venv. On the lent H200 machine (no network,
# its own python3 with torch) it unpacks .gpu/debs into a private prefix and builds against
# that python3. Logs and JSON go to $OUT (the device tool's output folder) or build/gpu-check.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT_DIR=${OUT:-$ROOT/build/gpu-check}
mkdir -p "$OUT_DIR"
BUILD_DIR=build/gpu
SYSROOT=/tmp/mkb-sysroot
SITE=/tmp/mkb-site
declare -a SUMMARY=()
status=0

note() { printf '\033[1m[gpu-check]\033[0m %s\n' "$*"; }
row() { SUMMARY+=("$(printf '%-34s %s' "$1" "$2")"); }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }
# MKB_DEADLINE=EPOCH_SECONDS: every long step is stopped by then (the device tool's per-call limit),
# so that the summary and $OUT still come back. limit CAP prints the seconds a step may take: the
# smaller of CAP and what is left (at least 1); with no deadline and no cap, nothing.
limit() {
  local cap=${1:-} left
  if [ -n "${MKB_DEADLINE:-}" ]; then
    left=$(( MKB_DEADLINE - $(date +%s) )); [ "$left" -ge 1 ] || left=1
    if [ -z "$cap" ] || [ "$cap" -gt "$left" ]; then cap=$left; fi
  fi
  echo "$cap"
}
with_limit() {  # with_limit CAP cmd...: cmd under timeout when limit gives a number
  local s; s=$(limit "$1"); shift
  if [ -n "$s" ]; then timeout "$s" "$@"; else "$@"; fi
}

MODE=${1:-}
DSL_HOME=/tmp/mkb-dsl
GPU_PYTHON=${MKB_GPU_PYTHON:-3.12}

if [ "$MODE" = "--prepare" ]; then
  mkdir -p .gpu/debs .gpu/dsl
  # bubblewrap: the agent's shell sandbox (the GPU demo's attempts); the lent machine has none.
  (cd .gpu/debs && apt-get download libabsl-dev libabsl20220623 libdlpack-dev libsqlite3-dev bubblewrap)
  PY=${MKB_VENV:-$ROOT/.venv}/bin/python
  for dsl in cutedsl tirx; do
    if [ ! -f ".gpu/dsl/$dsl.tar.xz" ]; then
      "$PY" -m metakernelbench.cli dsl pack --dsl "$dsl" --python-version "$GPU_PYTHON" --out ".gpu/dsl/$dsl.tar.xz"
    fi
  done
  ls -l .gpu/debs .gpu/dsl
  echo "prepared .gpu; run 1 carries .gpu/dsl/cutedsl.tar.xz (--dsl-stage), run 2 carries"
  echo ".gpu/debs and .gpu/dsl/tirx.tar.xz (--dsl), within 30 s of each other"
  exit 0
fi

# Unpacks the DSL payloads this run carried into $DSL_HOME (kept while the machine stays warm).
unpack_dsls() {
  mkdir -p "$DSL_HOME"
  for payload in .gpu/dsl/*.tar.xz; do
    [ -f "$payload" ] || continue
    dsl=$(basename "$payload" .tar.xz)
    t0=$(date +%s)
    rm -rf "${DSL_HOME:?}/$dsl"
    if tar -C "$DSL_HOME" -xJf "$payload"; then
      # Packed without .pyc files (mkb dsl pack fetches with --no-compile for another Python):
      # byte-compiled here once, or every host would compile the DSL's modules at each import.
      python3 -m compileall -q -j 0 "$DSL_HOME/$dsl" > /dev/null 2>&1 || true
      row "unpack $dsl" "ok ($(du -sm "$DSL_HOME/$dsl" | cut -f1) MiB, byte-compiled, $(elapsed "$t0"))"
    else
      row "unpack $dsl" "FAILED"; status=1
    fi
  done
}

if [ "$MODE" = "--dsl-stage" ]; then
  unpack_dsls
  ls "$DSL_HOME"
  printf '%s\n' "${SUMMARY[@]}"
  exit $status
fi

# --- environment ---------------------------------------------------------------------------
note "environment"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader \
  | tee "$OUT_DIR/gpu.txt" || { echo "no GPU visible"; exit 1; }
if [ -x "$ROOT/.venv/bin/python" ]; then PY=$ROOT/.venv/bin/python; else PY=$(command -v python3); fi
"$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'

# --- dependencies the lent machine lacks -----------------------------------------------------
if [ ! -f /usr/include/absl/status/status.h ] && [ -d .gpu/debs ]; then
  note "unpacking .gpu/debs into $SYSROOT"
  rm -rf "$SYSROOT"
  for deb in .gpu/debs/*.deb; do dpkg -x "$deb" "$SYSROOT"; done
  export CMAKE_PREFIX_PATH="$SYSROOT/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export CPATH="$SYSROOT/usr/include${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$SYSROOT/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$SYSROOT/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # libsqlite3-dev's .so link points at the runtime library the machine already has.
  ln -sf "$(ldconfig -p | awk '/libsqlite3.so.0 /{print $NF; exit}')" "$SYSROOT/usr/lib/x86_64-linux-gnu/libsqlite3.so"
fi
# The agent's shell sandbox needs bwrap: Debian's bubblewrap package, carried in .gpu/debs.
if ! command -v bwrap > /dev/null && compgen -G ".gpu/debs/bubblewrap_*.deb" > /dev/null; then
  mkdir -p "$SYSROOT"
  for deb in .gpu/debs/bubblewrap_*.deb; do dpkg -x "$deb" "$SYSROOT"; done
  export PATH="$SYSROOT/usr/bin:$PATH"
  note "bwrap from .gpu/debs: $(bwrap --version 2>&1 | head -1)"
fi
CUDA_LIB=$(dirname "$(find /usr/local/cuda/ -name 'libcupti.so' 2>/dev/null | head -1)" 2>/dev/null)
[ -n "$CUDA_LIB" ] && export LD_LIBRARY_PATH="$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

if [ "$MODE" = "--dsl" ]; then
  unpack_dsls
  for dsl in ${MKB_ONLY_DSL:-cutedsl tirx}; do
    [ -f "$DSL_HOME/$dsl/mkb-toolchain.json" ] || { row "dsl $dsl" "MISSING (run --dsl-stage first)"; status=1; }
  done
  [ -z "${MKB_ONLY_DSL:-}" ] || row "dsl" "only $MKB_ONLY_DSL (MKB_ONLY_DSL)"
  export MKB_DSL_HOME=$DSL_HOME
fi

# --- build -----------------------------------------------------------------------------------
t0=$(date +%s)
if [ -n "${MKB_SKIP_BUILD:-}" ] && [ -f "$SITE/metakernelbench/__init__.py" ]; then
  note "reusing the build in $SITE (MKB_SKIP_BUILD)"
  row "build" "reused $SITE"
elif note "building the package and the tests (MKB_WITH_CUDA=ON)" && "$PY" -m pip install --no-build-isolation --no-deps --no-index --upgrade --target "$SITE" . \
     -Cbuild-dir="$BUILD_DIR" -Ccmake.define.MKB_BUILD_TESTS=ON -Ccmake.define.MKB_WITH_CUDA=ON \
     -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=native \
     -Ccmake.build-type=RelWithDebInfo -Cbuild.verbose=false > "$OUT_DIR/build.log" 2>&1; then
  row "build" "ok ($(elapsed "$t0"))"
else
  row "build" "FAILED (see build.log)"
  tail -40 "$OUT_DIR/build.log"
  printf '%s\n' "${SUMMARY[@]}"
  exit 1
fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$SITE/bin:$PATH"

# --- tests -----------------------------------------------------------------------------------
if [ -z "${MKB_SKIP_TESTS:-}" ]; then
note "C++ tests"
t0=$(date +%s)
if [ -n "${MKB_SKIP_CTEST:-}" ]; then
  row "ctest" "skipped (MKB_SKIP_CTEST)"
elif ctest --test-dir "$BUILD_DIR" --output-on-failure -j 8 > "$OUT_DIR/ctest.log" 2>&1; then
  row "ctest" "$(grep -E 'tests passed' "$OUT_DIR/ctest.log" | tail -1) ($(elapsed "$t0"))"
else
  row "ctest" "FAILED: $(grep -E 'tests passed|tests failed' "$OUT_DIR/ctest.log" | tail -1)"
  grep -E 'Failed|\*\*\*' "$OUT_DIR/ctest.log" | head -20
  status=1
fi

if [ -z "${MKB_SKIP_PYTEST:-}" ]; then
note "Python tests: the GPU-tagged ones (CI runs the rest)"
t0=$(date +%s)
# MKB_PYTEST_ARGS="tests/python/test_adversarial.py" limits it (default: every GPU test). Every
# adversarial case's verdict is kept, one JSON line each, in $OUT_DIR/adversarial.jsonl.
rm -f "$OUT_DIR/adversarial.jsonl"
if MKB_ADVERSARIAL_RECORD=${MKB_ADVERSARIAL_RECORD:-$OUT_DIR/adversarial.jsonl} \
   with_limit "" "$PY" -m pytest -q -ra -p no:cacheprovider -m gpu -s ${MKB_PYTEST_ARGS:-tests/python} > "$OUT_DIR/pytest.log" 2>&1; then
  row "pytest" "$(tail -1 "$OUT_DIR/pytest.log") ($(elapsed "$t0"))"
else
  row "pytest" "FAILED: $(tail -1 "$OUT_DIR/pytest.log")"
  grep -E '^(FAILED|ERROR)' "$OUT_DIR/pytest.log" | head -20
  status=1
fi

fi
fi

# --- the DSLs: every shipped solution through the judge -------------------------------------
# A smoke test first: problem 28's two solutions, one evaluation each (about 20 s). When both
# fail, the long run would fail alike (a judge change the GPU has not seen): it is skipped, and
# the two verdicts say why (MKB_NO_SMOKE_STOP=1 runs it anyway).
smoke_failed=0
if [ "$MODE" = "--dsl" ] && [ -z "${MKB_SKIP_SOLUTIONS:-}" ] && [ -z "${MKB_NO_SMOKE:-}" ]; then
  note "smoke: problem 28's solutions"
  bad=0; ran=0
  for dsl in ${MKB_ONLY_DSL:-cutedsl tirx}; do
    kernel=$(ls problems/mlp_norm/28_*/solutions/$dsl.py 2>/dev/null | head -1)
    [ -n "$kernel" ] || continue
    ran=$((ran + 1))
    "$PY" -m metakernelbench.cli eval "$kernel" --problem 28 --dsl "$dsl" --device cuda --json \
      > "$OUT_DIR/smoke-$dsl.json" 2> "$OUT_DIR/smoke-$dsl.err"
    verdict=$("$PY" -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no verdict (" + type(e).__name__ + ")"); sys.exit()
codes = sorted({f["code"] for f in d["findings"] if f["severity"] == "violation"})
print(d["status"], "|", d["message"][:200], "|", " ".join(codes))' "$OUT_DIR/smoke-$dsl.json")
    echo "  $dsl: $verdict"
    row "smoke 28 $dsl" "$verdict"
    case "$verdict" in passed*) ;; *) bad=$((bad + 1)) ;; esac
  done
  if [ "$bad" -ge 1 ] && [ "$bad" = "$ran" ] && [ -z "${MKB_NO_SMOKE_STOP:-}" ]; then
    smoke_failed=1; status=1
    note "every smoke evaluation failed: verify-solutions skipped (MKB_NO_SMOKE_STOP=1 runs it)"
    tail -20 "$OUT_DIR"/smoke-*.err
  fi
fi
if [ "$MODE" = "--dsl" ] && [ -z "${MKB_SKIP_SOLUTIONS:-}" ] && [ "$smoke_failed" = 0 ]; then
  note "DSL toolchains"
  "$PY" -m metakernelbench.cli dsl info | tee "$OUT_DIR/dsl-info.txt"
  note "shipped solutions (mkb suite verify-solutions)"
  t0=$(date +%s)
  # MKB_SOLUTIONS="28 36" limits it; MKB_KEEP=1 keeps (resumes) the table of an earlier run on
  # this machine (it lives in /tmp while the machine stays warm).
  table=/tmp/mkb-solutions.json
  # MKB_SOLUTIONS_TIMEOUT=S stops it after S seconds (the table keeps the rows judged so far).
  with_limit "${MKB_SOLUTIONS_TIMEOUT:-}" \
  "$PY" -m metakernelbench.cli suite verify-solutions --device cuda $([ -n "${MKB_KEEP:-}" ] || echo --fresh) \
      --call-timeout "${MKB_CALL_TIMEOUT:-120}" --out "$table" ${MKB_ONLY_DSL:+--dsl "$MKB_ONLY_DSL"} \
      $(for p in ${MKB_SOLUTIONS:-}; do printf -- '--problems %s ' "$p"; done) > "$OUT_DIR/solutions.log" 2>&1
  rc=$?
  cp "$table" "$OUT_DIR/solutions.json" 2>/dev/null
  tail -40 "$OUT_DIR/solutions.log"
  row "verify-solutions" "$([ $rc = 0 ] && echo ok || echo FAILED) ($(elapsed "$t0"))"
  [ $rc = 0 ] || status=1
fi

# --- the GPU demo: the whole protocol with DSL kernels on this GPU ---------------------------
if [ -n "${MKB_GPU_DEMO:-}" ]; then
  note "GPU demo (mkb demo --device cuda)"
  t0=$(date +%s)
  stamp="gpu_demo_$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($NF)}')_$(date -u +%Y-%m-%d)"
  demo_dir=/tmp/mkb-gpu-demo
  rm -rf "$demo_dir" && mkdir -p "$demo_dir/$stamp"
  # MKB_DEMO_ARGS="--problems 28 --problems 36" narrows it.
  # shellcheck disable=SC2086
  with_limit "" "$PY" -m metakernelbench.cli demo --device cuda --store "$demo_dir/demo.db" ${MKB_DEMO_ARGS:-} > "$OUT_DIR/gpu-demo.log" 2>&1
  rc=$?
  tail -60 "$OUT_DIR/gpu-demo.log"
  "$PY" -m metakernelbench.cli export "$demo_dir/demo.db" --format jsonl --out "$demo_dir/$stamp" > /dev/null 2>&1 \
    && cp "$OUT_DIR/gpu-demo.log" "$demo_dir/$stamp/demo-output.txt" \
    && cp "$demo_dir/demo.db" "$demo_dir/$stamp/demo.db" \
    && tar -C "$demo_dir" -czf "$OUT_DIR/gpu-demo-export.tar.gz" "$stamp"
  row "gpu demo" "$([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)") ($(elapsed "$t0")) -> gpu-demo-export.tar.gz ($stamp)"
  [ $rc = 0 ] || status=1
fi

# --- benchmarks ------------------------------------------------------------------------------
for bench in ${MKB_BENCHMARKS:-benchmarks/*/run.py}; do
  [ -f "$bench" ] || continue
  name=$(basename "$(dirname "$bench")")
  note "benchmark $name"
  t0=$(date +%s)
  # shellcheck disable=SC2086  # MKB_BENCH_ARGS is a list of arguments
  if with_limit "" "$PY" "$bench" --out "$OUT_DIR/$name.json" ${MKB_BENCH_ARGS:-} > "$OUT_DIR/$name.log" 2>&1; then
    row "bench $name" "ok ($(elapsed "$t0"))"
  else
    row "bench $name" "FAILED (see $name.log)"
    tail -20 "$OUT_DIR/$name.log"
    status=1
  fi
done

# --- anything else, in the same environment (MKB_THEN="mkb suite validate --device cuda ...") -
if [ -n "${MKB_THEN:-}" ]; then
  note "MKB_THEN: $MKB_THEN"
  t0=$(date +%s)
  if MKB_PY="$PY" OUT_DIR="$OUT_DIR" with_limit "" bash -c "$MKB_THEN" > "$OUT_DIR/then.log" 2>&1; then
    row "MKB_THEN" "ok ($(elapsed "$t0"))"
  else
    row "MKB_THEN" "FAILED (see then.log)"; tail -20 "$OUT_DIR/then.log"; status=1
  fi
fi

echo
echo "=== gpu-check summary ($(head -1 "$OUT_DIR/gpu.txt")) ==="
printf '%s\n' "${SUMMARY[@]}"
exit $status
