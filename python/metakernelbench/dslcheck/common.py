"""What `mkb check` and the DSL hooks share: diagnostics (from a syntax error or an exception,
with kernel.py's line), importing a file as a named module, and patches undone afterwards."""

from __future__ import annotations

import contextlib
import importlib.util
import re
import sys
import traceback
from collections.abc import Iterator

ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colour codes in DSL error texts


def syntax_diagnostic(source: str, path: str) -> dict | None:
    """The "syntax" diagnostic of `source` as Python's parser reports it, or None."""
    try:
        compile(source, path, "exec")
    except SyntaxError as error:
        return {
            "kind": "syntax",
            "message": str(error.msg),
            "line": error.lineno,
            "detail": (error.text or "").rstrip(),
        }
    except (ValueError, TypeError, RecursionError, MemoryError) as error:  # NUL bytes, deep nesting
        return {"kind": "syntax", "message": f"{type(error).__name__}: {error}", "line": None, "detail": ""}
    return None


def error_chain(error: BaseException | None) -> Iterator[BaseException]:
    """`error`, then its causes / contexts, each once."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def kernel_line(error: BaseException, kernel_path: str) -> int | None:
    """The innermost line of kernel.py in the error's traceback (or its chained causes), else a
    `kernel.py:LINE` / `line LINE` mention in the message that names kernel.py."""
    for current in error_chain(error):
        if isinstance(current, SyntaxError) and current.filename == kernel_path and current.lineno:
            return current.lineno
        line = None
        for frame in traceback.extract_tb(current.__traceback__):
            if frame.filename == kernel_path:
                line = frame.lineno
        if line is not None:
            return line
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


def import_file(path: str, name: str):
    """Executes the file at `path` as module `name`, registered in sys.modules (the DSLs find a
    function's globals through its module). What sys.modules held under `name` comes back when
    the import fails, and always for `__main__`."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(name)

    def restore():
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous

    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        restore()
        raise
    if name == "__main__":
        restore()
    return module


_MISSING = object()


class Patches:
    """Attributes set for the length of a check, then put back as they were (an attribute the
    owner did not have itself is removed again, so an inherited one shows through)."""

    def __init__(self):
        self._undo: list[tuple[object, str, object]] = []

    def set(self, owner, name: str, value) -> None:
        self._undo.append((owner, name, vars(owner).get(name, _MISSING)))
        setattr(owner, name, value)

    def stand_in_streams(self, torch) -> None:
        """torch.cuda.current_stream() / default_stream() answer a stand-in (handle 0), so kernels
        that pass torch's stream on explicitly still reach their compile without a GPU."""

        class _Stream:
            cuda_stream = 0
            stream_id = 0
            device = torch.device("cuda", 0)

            def synchronize(self):
                pass

        self.set(torch.cuda, "current_stream", lambda device=None: _Stream())
        self.set(torch.cuda, "default_stream", lambda device=None: _Stream())

    def restore(self) -> None:
        for owner, name, value in reversed(self._undo):
            if value is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(owner, name)
            else:
                setattr(owner, name, value)
        self._undo.clear()
