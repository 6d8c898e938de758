"""The wrapper the worker puts in place of the DSL's compile and call entry points, so that the
launch monitor knows what loads while they run (docs/judge.md, "The DSL rule").

The wrapper sits in the DSL's modules, where kernel.py can reach it: its `__globals__` are this
module's, which holds nothing but `wrapper`, and its closure holds the original entry point and
a C++ runner (`LaunchMonitor.entry_runner`) that can only call that original. A wrapper written
in worker.py would hand kernel.py the worker's globals and, through its closure, the worker.
"""


def wrapper(run, original):
    """A function standing for `original` (a method too: it binds like one) that calls
    run(args, kwargs)."""

    def entry(*args, **kwargs):
        return run(args, kwargs)

    entry.__name__ = getattr(original, "__name__", "entry")
    entry.__qualname__ = getattr(original, "__qualname__", entry.__name__)
    entry.__doc__ = getattr(original, "__doc__", None)
    entry.__wrapped__ = original
    return entry
