"""Options shared by every command (set by the top-level callback), and the console."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from rich.console import Console

suite_root: Optional[Path] = None


def load_suite():
    from .. import load_suite as _load

    return _load(suite_root)


def console(stderr: bool = False) -> Console:
    """A console that does not squeeze tables to 80 columns when output goes to a file or pipe."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 200)
