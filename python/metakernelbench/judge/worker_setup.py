"""What the host sets up for its worker before it runs: the fork (before this process touches
CUDA), the worker's filesystem view (docs/judge.md) and the runtime audit's configuration (C++
runtime_policy.h)."""

from __future__ import annotations

import glob
import os
import sys
import sysconfig

from .. import _core, _paths


def fork_worker(options: dict):
    """Forks the worker (this process must not have initialised CUDA yet)."""
    host_end, worker_end = _core.Channel.pair()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the worker's keeper, then (EnterSandbox forks again) the worker
        os.close(out_r)
        os.close(err_r)
        os.close(host_end.detach())
        fd = worker_end.detach()
        os.set_inheritable(fd, True)
        from . import worker

        worker.run(fd, out_w, err_w, options)
    os.close(out_w)
    os.close(err_w)
    del worker_end
    return pid, host_end, out_r, err_r


def pin_every_thread(cpu: int) -> None:
    """Every thread of this process on `cpu`, and so every thread and process it starts later."""
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), {cpu})
        except (ProcessLookupError, PermissionError):  # a thread that ended since the listing
            pass


def realpaths(paths) -> list[str]:
    """The absolute and the resolved form of each existing path, once each."""
    out = []
    for p in paths:
        if p and os.path.exists(p):
            for q in (os.path.abspath(p), os.path.realpath(p)):
                if q not in out:
                    out.append(q)
    return out


def package_copies() -> list[str]:
    """Every folder of this package the interpreter can see: the one it runs from and the copies
    an install leaves elsewhere on the path (an editable install puts the compiled core and the
    package data, the suite among it, in site-packages beside the source tree it runs)."""
    cfg = sysconfig.get_paths()
    places = [cfg["purelib"], cfg["platlib"], *(p for p in sys.path if p and os.path.isabs(p))]
    found = [str(_paths._PACKAGE_DIR)]
    found += [os.path.join(p, "metakernelbench") for p in places]
    return realpaths(p for p in found if os.path.isdir(p))


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def worker_view(
    device: str,
    dsl_site_dirs: list[str],
    work_dir: str,
    view_root: str,
    hidden: list[str],
    extra_read_only: list[str],
) -> dict:
    """What the worker's filesystem holds (docs/judge.md): the system's libraries, the
    interpreter and its packages, the variant's DSL, the GPU's device nodes, and its own
    workspace; the suite, the judge's data, stores and other workspaces are not there."""
    protected = realpaths(hidden)
    root = _paths.repository_root()
    if root is not None:
        protected += realpaths([str(root)])
    protected += realpaths([os.getcwd()])

    def acceptable(p: str) -> bool:
        # A tree is bound only if nothing protected lies at or inside it.
        return not any(_under(q, p) for q in protected)

    cfg = sysconfig.get_paths()
    candidates = [
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/etc",
        "/sys",
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        cfg["stdlib"],
        cfg["platstdlib"],
        cfg["purelib"],
        cfg["platlib"],
        os.path.dirname(os.path.realpath(sys.executable)),
    ]
    candidates += [p for p in sys.path if p and os.path.isabs(p)]
    candidates += [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    from .worker import cuda_toolkit_home

    candidates += [cuda_toolkit_home()]
    candidates += list(dsl_site_dirs) + list(extra_read_only)
    read_only = [p for p in realpaths(candidates) if acceptable(p)]
    # The shipped suite (references, solutions) in every copy of the package, not only the one
    # this process runs from.
    package_data = [os.path.join(p, "problems") for p in package_copies()]
    devices = sorted(glob.glob("/dev/nvidia*")) if device == "cuda" else []
    return {
        "root": view_root,
        "read_only": read_only,
        "writable": [work_dir],
        "hidden": sorted(set(protected + realpaths(package_data))),
        "devices": devices,
    }


def audit_config(kernel_path: str, dsl: str, view: dict, dsl_site_dirs: list[str], work_dir: str) -> dict:
    """The worker's runtime audit (C++ runtime_policy.h): which trees are code, which the DSL's."""
    cfg = sysconfig.get_paths()
    stdlib = realpaths([cfg["stdlib"], cfg["platstdlib"]])
    return {
        "kernel_path": kernel_path,
        "workspace": os.path.realpath(work_dir),
        "dsl": dsl,
        "stdlib_roots": stdlib,
        "code_roots": [p for p in view["read_only"] if p not in ("/", "/etc", "/sys")],
        "dsl_roots": realpaths(dsl_site_dirs),
        "judge_roots": package_copies(),
        "writable_roots": realpaths([work_dir]) + ["/tmp", "/dev/shm"],
        "readable_paths": [
            "/dev/null",
            "/dev/zero",
            "/dev/urandom",
            "/dev/random",
            "/proc/self/status",
            "/proc/self/stat",
            "/proc/self/cgroup",
            "/proc/self/mountinfo",
            "/proc/self/maps",
            "/proc/cpuinfo",
            "/proc/meminfo",
            "/proc/stat",
            "/etc/passwd",
            "/etc/group",
            "/etc/localtime",
            "/etc/ld.so.cache",
        ],
    }
