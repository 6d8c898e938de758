"""The wrapper the worker puts in place of the DSL's compile and call entry points, so that the
launch monitor knows what loads while they run (docs/judge.md, "The DSL rule").

The wrapper sits in the DSL's modules, where kernel.py can reach it: its `__globals__` are this
module's, which holds nothing but `wrapper` and `method`, and its closure holds the original entry
point and a C++ runner (`LaunchMonitor.entry_runner`) that can only call that original. A wrapper written
in worker.py would hand kernel.py the worker's globals and, through its closure, the worker.
"""


def wrapper(run, original):
    """A function standing for `original` (a method too: it binds like one) that calls
    run(args, kwargs), or `original` itself where there is no runner (no launch monitor: the CPU
    judge).

    Its frames also mark the DSL's work on kernel.py's behalf for the runtime audit: the DSL's
    code is trusted (ctypes, frames, code it generates) only between such a frame and the event,
    with no frame of the kernel's in between (runtime_policy.h, AuditCaller::in_dsl_entry). The
    function must be named `entry`.
    """

    def entry(*args, **kwargs):
        if run is None:
            return original(*args, **kwargs)
        return run(args, kwargs)

    entry.__name__ = getattr(original, "__name__", "entry")
    entry.__qualname__ = getattr(original, "__qualname__", entry.__name__)
    entry.__doc__ = getattr(original, "__doc__", None)
    entry.__wrapped__ = original
    return entry


def method(checked):
    """A function standing for `checked` (a C++ callable made by `_core.checked_compile`, which
    does not bind) as a method of the DSL's class: its closure holds `checked` only, whose check
    runs before the DSL's original, which nothing here holds (fourteenth session: with the static
    rules waived, a kernel took the unchecked Compiler.compile out of the closure of the Python
    wrapper this replaced, put it back on the class, compiled a store in host code and passed).
    The worker guards the name too (harness_reach's entries): one replaced is seen when the
    import or call returns."""

    def compile(self, *args, **kwargs):
        return checked(self, *args, **kwargs)

    return compile
