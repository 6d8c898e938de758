"""The DSL toolchains (SPEC §2): one site directory per DSL, layered on the base environment.

torch, numpy and the CUDA Python bindings are installed once, in the base environment. Each DSL
gets its own *site directory* holding only what its pinned spec adds on top of that base:

    <dsl home>/cutedsl/   nvidia-cutlass-dsl[cu13]==4.7.0 + apache-tvm-ffi==0.1.12 (+ their extras)
    <dsl home>/tirx/      apache-tvm[cuda]==0.25.0.post1 + apache-tvm-ffi==0.1.12 (+ ml_dtypes)

A process activates one of them with `activate(dsl)` (site.addsitedir, so the wheels' .pth files
run, then moved to the front of sys.path). The judge's worker, `mkb check` and the agent's shell do
exactly that, so a variant never sees the other DSL.

The home is MKB_DSL_HOME, else `.dsl/` of the source checkout, else ~/.local/share/metakernelbench/dsl.
The specs are configurable: MKB_CUTEDSL_SPEC / MKB_TIRX_SPEC (space-separated requirements), or
`mkb dsl install --spec ...`. What was installed is recorded in <site>/mkb-toolchain.json and
every verdict records the versions the worker imported.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shlex
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import Error
from ._paths import repository_root

DSLS = ("cutedsl", "tirx")

# The published runs' toolchains (SPEC §2).
DEFAULT_SPECS: dict[str, tuple[str, ...]] = {
    "cutedsl": ("nvidia-cutlass-dsl[cu13]==4.7.0", "apache-tvm-ffi==0.1.12"),
    "tirx": ("apache-tvm[cuda]==0.25.0.post1", "apache-tvm-ffi==0.1.12"),
}

# Packages a spec pulls in that the variant never loads: nvidia-cutlass-dsl requires the CUDA 12
# flavour even when the cu13 extra selects CUDA 13 (the DSL picks the newest flavour the driver
# supports, and our toolkit and driver are CUDA 13).
EXCLUDED: dict[str, tuple[str, ...]] = {
    "cutedsl": ("nvidia-cutlass-dsl-libs-cu12",),
    "tirx": (),
}

# The DSL distributions whose versions a verdict records (those the worker can import).
VERSION_PACKAGES = ("nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-cu13", "apache-tvm", "apache-tvm-ffi")

MARKER = "mkb-toolchain.json"


def check_dsl(dsl: str) -> str:
    name = (dsl or "").strip().lower().replace("-", "").replace("_", "")
    aliases = {"cute": "cutedsl", "cutedsl": "cutedsl", "tvm": "tirx", "tirx": "tirx"}
    if name not in aliases:
        raise Error(f"unknown DSL {dsl!r}: expected one of {', '.join(DSLS)}")
    return aliases[name]


def dsl_home() -> Path:
    override = os.environ.get("MKB_DSL_HOME")
    if override:
        return Path(override).expanduser().resolve()
    root = repository_root()
    if root is not None:
        return root / ".dsl"
    data = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return data / "metakernelbench" / "dsl"


def site_dir(dsl: str) -> Path:
    return dsl_home() / check_dsl(dsl)


def spec(dsl: str) -> tuple[str, ...]:
    dsl = check_dsl(dsl)
    override = os.environ.get(f"MKB_{dsl.upper()}_SPEC")
    return tuple(shlex.split(override)) if override else DEFAULT_SPECS[dsl]


@dataclass
class Toolchain:
    dsl: str
    site: Path
    installed: bool
    spec: list[str] = field(default_factory=list)
    packages: dict[str, str] = field(default_factory=dict)  # distribution -> version
    python: str = ""

    def describe(self) -> str:
        if not self.installed:
            return f"{self.dsl}: not installed (run: mkb dsl install --dsl {self.dsl})"
        pins = ", ".join(f"{k}=={v}" for k, v in sorted(self.packages.items()))
        return f"{self.dsl}: {self.site} ({pins})"


def toolchain(dsl: str) -> Toolchain:
    """What is installed for `dsl` (from the marker the installer writes)."""
    dsl = check_dsl(dsl)
    path = site_dir(dsl)
    marker = path / MARKER
    if not marker.is_file():
        return Toolchain(dsl, path, False)
    try:
        data = json.loads(marker.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise Error(
            f"{marker}: unreadable toolchain record ({error}); reinstall with mkb dsl install --dsl {dsl}"
        ) from None
    return Toolchain(
        dsl,
        path,
        True,
        list(data.get("spec", [])),
        dict(data.get("packages", {})),
        str(data.get("python", "")),
    )


def site_dirs(dsl: str, required: bool = False) -> list[str]:
    """The site directories the judge's worker activates for `dsl` (empty when not installed,
    unless `required`)."""
    tc = toolchain(dsl)
    if tc.installed:
        return [str(tc.site)]
    if required:
        raise Error(
            f"the {tc.dsl} toolchain is not installed at {tc.site}; run: mkb dsl install --dsl {tc.dsl}"
        )
    return []


def python_path(dsl: str) -> list[str]:
    """The sys.path entries the DSL's site directory contributes once its .pth files ran (for a
    PYTHONPATH, e.g. the agent's shell): the site directory first."""
    tc = toolchain(dsl)
    if not tc.installed:
        return []
    try:
        rel = json.loads((tc.site / MARKER).read_text()).get("python_path", ["."])
    except (OSError, json.JSONDecodeError):
        rel = ["."]
    return [str((tc.site / r).resolve()) for r in rel]


def _pth_entries(directory: Path, python: str) -> list[str]:
    """What site.addsitedir(directory) adds to sys.path, relative to directory."""
    code = (
        "import json, os, site, sys; d = sys.argv[1]; b = list(sys.path); site.addsitedir(d); "
        "print(json.dumps([os.path.relpath(p, d) for p in sys.path if p not in b]))"
    )
    done = subprocess.run([python, "-c", code, str(directory)], capture_output=True, text=True)
    try:
        entries = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        entries = []
    return ["."] + [e for e in entries if e != "."]


def activate(directories: list[str] | tuple[str, ...]) -> None:
    """Make `directories` the first entries of sys.path, running their .pth files."""
    for directory in directories:
        before = list(sys.path)
        site.addsitedir(directory)
        added = [p for p in sys.path if p not in before]
        rest = [p for p in sys.path if p not in added]
        sys.path[:] = added + rest


# --- installing -----------------------------------------------------------------------------


def _pip(python: str) -> list[str]:
    return [python, "-m", "pip", "--disable-pip-version-check"]


def resolve(
    dsl: str, requirements: tuple[str, ...] | None = None, python: str = sys.executable
) -> list[tuple[str, str]]:
    """The exact distributions `requirements` add on top of `python`'s environment (pip's own
    resolver, dry run), minus the ones the variant never loads."""
    dsl = check_dsl(dsl)
    requirements = tuple(requirements or spec(dsl))
    report = subprocess.run(
        _pip(python) + ["install", "--dry-run", "--quiet", "--report", "-", *requirements],
        capture_output=True,
        text=True,
    )
    if report.returncode != 0:
        raise Error(f"pip could not resolve {' '.join(requirements)}:\n{report.stderr.strip()[-2000:]}")
    try:
        items = json.loads(report.stdout)["install"]
    except (json.JSONDecodeError, KeyError) as error:
        raise Error(f"unexpected pip report while resolving {dsl}: {error}") from None
    base_has_bindings = (
        subprocess.run(
            [python, "-c", "import importlib.metadata as m; m.version('cuda-bindings')"], capture_output=True
        ).returncode
        == 0
    )
    out = []
    for item in items:
        name = item["metadata"]["name"]
        key = name.lower().replace("_", "-")
        if key in EXCLUDED[dsl]:
            continue
        # The base environment's CUDA Python bindings (a torch dependency) serve every DSL; the
        # cuda-python metapackage would pin a second, different build of them.
        if base_has_bindings and key in ("cuda-python", "cuda-bindings", "cuda-core", "cuda-pathfinder"):
            continue
        out.append((name, item["metadata"]["version"]))
    return sorted(out)


def install(
    dsl: str,
    requirements: tuple[str, ...] | None = None,
    python: str = sys.executable,
    force: bool = False,
    log=print,
) -> Toolchain:
    """Install `dsl` into its site directory (idempotent: an install with the same spec is kept)."""
    dsl = check_dsl(dsl)
    requirements = tuple(requirements or spec(dsl))
    current = toolchain(dsl)
    if current.installed and current.spec == list(requirements) and not force:
        log(f"{dsl}: already installed ({current.site})")
        _byte_compile(Path(current.site), python)  # an install from before it was done (cheap if done)
        return current
    packages = resolve(dsl, requirements, python)
    target = site_dir(dsl)
    staging = target.with_name(target.name + ".partial")
    subprocess.run(["rm", "-rf", str(staging)], check=True)
    log(
        f"{dsl}: installing {len(packages)} packages into {target}: "
        + ", ".join(f"{n}=={v}" for n, v in packages)
    )
    result = subprocess.run(
        _pip(python)
        + [
            "install",
            "--quiet",
            "--no-deps",
            "--no-compile",
            "--target",
            str(staging),
            *[f"{n}=={v}" for n, v in packages],
        ],
        text=True,
    )
    if result.returncode != 0:
        raise Error(f"pip failed to install the {dsl} toolchain (exit {result.returncode})")
    version = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True
    ).stdout.strip()
    (staging / MARKER).write_text(
        json.dumps(
            {
                "dsl": dsl,
                "spec": list(requirements),
                "packages": dict(packages),
                "python": version,
                "python_path": _pth_entries(staging, python),
                "installed_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            },
            indent=2,
        )
        + "\n"
    )
    subprocess.run(["rm", "-rf", str(target)], check=True)
    staging.rename(target)
    log(f"{dsl}: byte-compiling {target}")
    _byte_compile(target, python)
    return toolchain(dsl)


def _byte_compile(site: Path, python: str) -> None:
    """Byte-compiles a site directory for `python` (pip ran with --no-compile). Every judge host
    imports its DSL at its start, and where no .pyc exists or may be written
    (PYTHONDONTWRITEBYTECODE, a read-only site) it compiled some 250 modules each time. Measured
    on the CPU machine: a warm host's start 5.0-5.7 s -> 3.6-3.8 s (CuTe DSL), 5.9-6.2 s ->
    5.0-5.2 s (TIRx). Up-to-date files are skipped; a module that does not compile (a file for
    another Python) is left to the import that needs it."""
    subprocess.run(
        [python, "-m", "compileall", "-q", "-j", "0", str(site)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


# --- carrying a toolchain to a machine without network -----------------------------------------

# Paths (relative to a packed site directory) that pack leaves out: libbacktrace's sources, CuTe
# DSL's iket profiler's injection library and trace schema (its profiler is not imported).
PACK_PRUNE = (
    "tvm_ffi/3rdparty/libbacktrace",
    "nvidia_cutlass_dsl/dsl_packages/iket/profiler/libsmodel_injection.so",
    "nvidia_cutlass_dsl/dsl_packages/iket/profiler/perfetto_trace_pb2.py",
)
GPU_PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_24_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "any",
)


def pack(
    dsl: str,
    out: Path,
    python_version: str = "3.12",
    drop: tuple[str, ...] = (),
    python: str = sys.executable,
    log=print,
) -> dict:
    """A site directory of `dsl` for another interpreter (e.g. the GPU machine's Python 3.12),
    as one .tar.xz (x86 BCJ filter + LZMA2 with a 256 MiB dictionary: the DSLs' shared libraries
    compress to about a quarter). `drop`: distributions to leave out (e.g. ones the target
    machine's base environment already has). Returns what was packed."""
    import tempfile

    dsl = check_dsl(dsl)
    packages = [
        (n, v)
        for n, v in resolve(dsl, python=python)
        if n.lower().replace("_", "-") not in {d.lower() for d in drop}
    ]
    with tempfile.TemporaryDirectory(prefix=f"mkb-pack-{dsl}-") as tmp:
        site_path = Path(tmp) / dsl
        platforms = [a for p in GPU_PLATFORMS for a in ("--platform", p)]
        log(f"{dsl}: fetching {len(packages)} wheels for Python {python_version}")
        result = subprocess.run(
            _pip(python)
            + [
                "install",
                "--quiet",
                "--no-deps",
                "--no-compile",
                "--only-binary=:all:",
                "--python-version",
                python_version,
                "--implementation",
                "cp",
                *platforms,
                "--target",
                str(site_path),
                *[f"{n}=={v}" for n, v in packages],
            ],
            text=True,
        )
        if result.returncode != 0:
            raise Error(f"pip failed to fetch the {dsl} toolchain for Python {python_version}")
        # What no judge, check or DSL compile loads (sources, a profiler's trace format), left out
        # so that a payload and the working tree fit the lent GPU machine's 64 MiB per run
        # (docs/gpu-device.md). Not tvm_ffi/lib/libtvm_ffi_testing.so: tvm_ffi's core loads it.
        pruned = [site_path / rel for rel in PACK_PRUNE if (site_path / rel).exists()]
        for path in pruned:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        record = {
            "dsl": dsl,
            "spec": list(spec(dsl)),
            "packages": dict(packages),
            "python": python_version,
            "python_path": _pth_entries(site_path, python),
            "installed_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        (site_path / MARKER).write_text(json.dumps(record, indent=2) + "\n")
        unpacked = sum(f.stat().st_size for f in site_path.rglob("*") if f.is_file())
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        log(f"{dsl}: compressing {unpacked / 2**20:.0f} MiB (takes minutes)")
        partial = out.with_name(out.name + ".partial")
        with open(partial, "wb") as sink:
            tar = subprocess.Popen(["tar", "-C", tmp, "-cf", "-", dsl], stdout=subprocess.PIPE)
            xz = subprocess.run(
                ["xz", "--x86", "--lzma2=preset=9e,dict=256MiB", "-T1"], stdin=tar.stdout, stdout=sink
            )
            tar.stdout.close()
            if tar.wait() != 0 or xz.returncode != 0:
                raise Error(f"packing {dsl} failed (tar {tar.returncode}, xz {xz.returncode})")
        partial.rename(out)
    record["unpacked_bytes"] = unpacked
    record["packed_bytes"] = out.stat().st_size
    log(f"{dsl}: {out} {record['packed_bytes'] / 2**20:.1f} MiB (from {unpacked / 2**20:.0f} MiB)")
    return record
