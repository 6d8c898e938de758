"""MetaKernelBench: does what a kernel agent learns in one DSL help it in another?

    import metakernelbench as mkb
    suite = mkb.load_suite()
    problem = suite.find("fused_add_rmsnorm_h4096_llama31_8b_bf16")

The C++ core (libmkb) does the loading, judging, protocol and statistics; this package is its
Python face. Errors are metakernelbench.Error subclasses whose messages name the file, field or
argument at fault.
"""

from . import stats
from ._core import (
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
from ._core import __version__ as __version__
from ._paths import default_suite_root
from .judge import evaluate, report
from .suite import Problem, Suite, load_suite

__all__ = [
    "AlreadyExistsError",
    "CancelledError",
    "DeadlineExceededError",
    "Error",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "Message",
    "NotFoundError",
    "PermissionDeniedError",
    "Problem",
    "ResourceExhaustedError",
    "Suite",
    "UnavailableError",
    "default_budget",
    "default_suite_root",
    "default_toolchain",
    "evaluate",
    "families",
    "load_suite",
    "message",
    "parse_message",
    "report",
    "standard_arms",
    "stats",
]
