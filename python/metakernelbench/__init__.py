"""MetaKernelBench: does what a kernel agent learns in one DSL help it in another?

    import metakernelbench as mkb
    suite = mkb.load_suite()
    problem = suite.find("fused_add_rmsnorm_h4096_llama31_8b_bf16")

The C++ core (libmkb) does the loading, judging, protocol and statistics; this package is its
Python face. Errors are metakernelbench.Error subclasses whose messages name the file, field or
argument at fault.
"""


def _load_core() -> None:
    """Loads the C++ core with its own symbols bound first (RTLD_DEEPBIND): the same process
    usually holds torch, whose libraries carry other copies of libraries libmkb uses (the CUDA
    runtime, protobuf); a symbol of one resolving to the other corrupts both. MKB_DLOPEN=now
    or =default loads it without DEEPBIND (e.g. under a preloaded malloc or a sanitizer)."""
    import os
    import sys

    mode = os.environ.get("MKB_DLOPEN", "deepbind")
    saved = sys.getdlopenflags()
    if mode == "deepbind" and hasattr(os, "RTLD_DEEPBIND"):
        sys.setdlopenflags(os.RTLD_NOW | os.RTLD_LOCAL | os.RTLD_DEEPBIND)
    elif mode == "now":
        sys.setdlopenflags(os.RTLD_NOW | os.RTLD_LOCAL)
    try:
        from . import _core  # noqa: F401
    finally:
        sys.setdlopenflags(saved)


_load_core()

from . import agent, experiments, stats, store  # noqa: E402
from ._core import (  # noqa: E402
    AlreadyExistsError,
    CancelledError,
    DeadlineExceededError,
    Error,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    Message,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnavailableError,
    default_budget,
    default_toolchain,
    families,
    message,
    parse_message,
    standard_arms,
)
from ._core import __version__ as __version__  # noqa: E402
from ._paths import default_suite_root  # noqa: E402
from .experiments import Experiment, fixed_skill, skill_from_arm  # noqa: E402
from .judge import evaluate, report  # noqa: E402
from .store import Store  # noqa: E402
from .suite import Problem, Suite, load_suite  # noqa: E402

__all__ = [
    "AlreadyExistsError",
    "CancelledError",
    "DeadlineExceededError",
    "Error",
    "Experiment",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "Message",
    "NotFoundError",
    "PermissionDeniedError",
    "Problem",
    "ResourceExhaustedError",
    "Store",
    "Suite",
    "UnavailableError",
    "agent",
    "default_budget",
    "default_suite_root",
    "default_toolchain",
    "evaluate",
    "experiments",
    "families",
    "fixed_skill",
    "load_suite",
    "message",
    "parse_message",
    "report",
    "skill_from_arm",
    "standard_arms",
    "stats",
    "store",
]
