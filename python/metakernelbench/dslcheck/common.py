"""Helpers the DSL hooks share: diagnostics from exceptions, with kernel.py's line."""

from __future__ import annotations

import re
import traceback


def kernel_line(error: BaseException, kernel_path: str) -> int | None:
    """The innermost line of kernel.py in the error's traceback (or its chained causes), else a
    `kernel.py:LINE` / `line LINE` mention in the message that names kernel.py."""
    seen = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, SyntaxError) and current.filename == kernel_path and current.lineno:
            return current.lineno
        line = None
        for frame in traceback.extract_tb(current.__traceback__):
            if frame.filename == kernel_path:
                line = frame.lineno
        if line is not None:
            return line
        current = current.__cause__ or current.__context__
    text = str(error)
    where = r"\"?[:,]\s*(?:line\s*)?(\d+)"
    for pattern in (re.escape(kernel_path) + where, r"kernel\.py" + where):
        m = re.search(pattern, text)
        if m:
            return int(m.group(1))
    return None


def from_exception(error: BaseException, kernel_path: str, kind: str) -> dict:
    """A diagnostic dict for `error`: its type and first lines as the message, the formatted
    traceback (kernel.py frames and the DSL's own text) as the detail."""
    text = str(error).strip() or type(error).__name__
    first = text.splitlines()[0] if text else ""
    message = f"{type(error).__name__}: {first}"[:500]
    detail = "".join(traceback.format_exception(type(error), error, error.__traceback__))[-4000:]
    return {"kind": kind, "message": message, "line": kernel_line(error, kernel_path), "detail": detail}
