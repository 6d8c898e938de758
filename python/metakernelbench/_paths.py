"""Where the problem suite lives."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def default_suite_root() -> Path:
    """The suite `load_suite()` reads when given no path.

    In order: the MKB_SUITE environment variable; the `problems/` folder of the source checkout
    this package was imported from (development and editable installs); the copy shipped inside
    the installed package.
    """
    override = os.environ.get("MKB_SUITE")
    if override:
        return Path(override).expanduser().resolve()
    checkout = _PACKAGE_DIR.parent.parent / "problems"
    if checkout.is_dir() and (_PACKAGE_DIR.parent.parent / "pyproject.toml").is_file():
        return checkout
    return _PACKAGE_DIR / "problems"


def repository_root() -> Path | None:
    """The source checkout this package was imported from, if any."""
    root = _PACKAGE_DIR.parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def guides_root() -> Path | None:
    """Where the agents' DSL guides live (<root>/<dsl>.md and <root>/<dsl>/, copied into every
    workspace under docs/): MKB_GUIDES, else docs/dsl of the source checkout."""
    override = os.environ.get("MKB_GUIDES")
    if override:
        return Path(override).expanduser().resolve()
    root = repository_root()
    return root / "docs" / "dsl" if root is not None else None
