"""`mkb demo`: the offline tour of the product on this machine."""

from __future__ import annotations

import time

from rich.table import Table

from . import _state


def _describe(value) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).replace('torch.', '')}{list(value.shape)}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_describe(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    return type(value).__name__


def demo() -> None:
    """List the suite and run each problem's reference on its small CPU workload."""
    console = _state.console()
    suite = _state.load_suite()
    console.print(suite)
    table = Table(title="references on the small CPU workload", title_justify="left")
    for column, justify in (("#", "right"), ("slug", "left"), ("family", "left"), ("outputs", "left"),
                            ("ms", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for p in suite:
        inputs = p.make_inputs("small", device="cpu", seed=0)
        start = time.perf_counter()
        out = p.reference(*inputs)
        ms = (time.perf_counter() - start) * 1e3
        table.add_row(f"{p.number:02d}", p.slug, p.family, _describe(out), f"{ms:.2f}")
    console.print(table)
