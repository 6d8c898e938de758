from __future__ import annotations

import platform

from .. import __version__, _core
from . import _state


def version() -> None:
    """Print the version, the build and the environment."""
    console = _state.console()
    console.print(f"metakernelbench {__version__}")
    console.print(f"  libmkb built with CUDA: {'yes' if _core.built_with_cuda else 'no'}")
    console.print(f"  python {platform.python_version()} ({platform.machine()})")
    try:
        import torch

        cuda = torch.version.cuda or "none"
        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU visible"
        console.print(f"  torch {torch.__version__} (CUDA {cuda}; {gpu})")
    except ImportError:
        console.print("  torch: not installed (the judge needs it)")
    from .._paths import default_suite_root

    console.print(f"  suite: {_state.suite_root or default_suite_root()}")
