"""The problem suite as Python objects: metadata from the C++ loader, reference callables
imported from each problem's reference.py."""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from . import _core
from ._paths import default_suite_root

_MODULE_LOCK = threading.Lock()

# The optional function of reference.py that the judge computes expected outputs and float64
# anchors with in place of `reference`: a faster formulation of the same computation, for a
# problem whose published reference is a slow Python loop (docs/problem-format.md, "Slow
# references"). `reference` stays the published formulation, which the eager baseline times.
CORRECTNESS_REFERENCE = "correctness_reference"


def correctness_reference_of(module: ModuleType):
    """The function a judge compares against: reference.py's correctness_reference where it
    defines one, else its reference."""
    fn = getattr(module, CORRECTNESS_REFERENCE, None)
    if fn is None:
        return module.reference
    if not callable(fn):
        raise _core.InvalidArgumentError(f"{module.__file__}: {CORRECTNESS_REFERENCE} is not callable")
    return fn


class Problem:
    """One problem: its metadata (an immutable mkb.v1.Problem view) and its reference code.

    >>> p = load_suite().find("fused_add_rmsnorm_h4096_llama31_8b_bf16")
    >>> inputs = p.make_inputs("small", seed=0)
    >>> out, residual = p.reference(*inputs)
    """

    def __init__(self, message: _core.Message):
        self._message = message
        self._module: ModuleType | None = None

    # Metadata -------------------------------------------------------------------------------
    @property
    def message(self) -> _core.Message:
        """The mkb.v1.Problem message (read-only)."""
        return self._message

    @property
    def slug(self) -> str:
        return self._message.slug

    @property
    def number(self) -> int:
        return self._message.number

    @property
    def family(self) -> str:
        return self._message.family

    @property
    def title(self) -> str:
        return self._message.title

    @property
    def description(self) -> str:
        return self._message.description

    @property
    def directory(self) -> Path:
        return Path(self._message.directory)

    @property
    def fingerprint(self) -> str:
        """SHA-256 over problem.textproto and reference.py."""
        return self._message.fingerprint

    @property
    def workload_names(self) -> list[str]:
        return [w.name for w in self._message.workloads]

    def workload(self, name: str = "full") -> _core.Message:
        for w in self._message.workloads:
            if w.name == name:
                return w
        raise _core.NotFoundError(
            f"problem {self.slug} has no workload '{name}'; it has: {', '.join(self.workload_names)}"
        )

    def dimensions(self, spec: _core.Message, workload: str = "full") -> list[tuple[int, int]]:
        """(smallest, largest) size of each dimension of a TensorSpec on a workload: equal for
        fixed sizes, a range for a parameter the workload draws (`param_minimums`)."""
        w = self.workload(workload)
        params, minimums = dict(w.params), dict(w.param_minimums)
        out = []
        for d in spec.shape:
            if d.lstrip("-").isdigit():
                out.append((int(d), int(d)))
            else:
                out.append((minimums.get(d, params[d]), params[d]))
        return out

    def shape_fits(self, shape, spec: _core.Message, workload: str = "full") -> bool:
        """Whether a tensor shape is one the spec allows on the workload."""
        dims = self.dimensions(spec, workload)
        return len(shape) == len(dims) and all(lo <= int(n) <= hi for n, (lo, hi) in zip(shape, dims))

    def roofline(self, workload: str = "full") -> dict[str, float]:
        """{'flops': ..., 'min_bytes': ...} of a workload."""
        r = self.workload(workload).roofline
        return {"flops": r.flops, "min_bytes": r.min_bytes}

    def to_dict(self) -> dict[str, Any]:
        d = self._message.to_dict()
        d.pop("reference_source", None)
        return d

    # Reference code ---------------------------------------------------------------------------
    @property
    def module(self) -> ModuleType:
        """reference.py, imported once under a private module name."""
        with _MODULE_LOCK:
            if self._module is None:
                name = f"_mkb_problem_{self.number:02d}_{self.slug}"
                path = self.directory / "reference.py"
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is None or spec.loader is None:
                    raise _core.InvalidArgumentError(f"{path}: cannot be imported")
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except Exception:
                    del sys.modules[name]
                    raise
                for fn in ("reference", "make_inputs"):
                    if not callable(getattr(module, fn, None)):
                        raise _core.InvalidArgumentError(f"{path}: defines no callable {fn}()")
                extra = getattr(module, CORRECTNESS_REFERENCE, None)
                if extra is not None and not callable(extra):
                    raise _core.InvalidArgumentError(f"{path}: {CORRECTNESS_REFERENCE} is not callable")
                self._module = module
            return self._module

    def reference(self, *inputs: Any) -> Any:
        """The reference computation (the published formulation, which the eager baseline
        times), called on the inputs as solve() would be."""
        return self.module.reference(*inputs)

    @property
    def has_correctness_reference(self) -> bool:
        """Whether reference.py defines a faster correctness_reference beside reference."""
        return getattr(self.module, CORRECTNESS_REFERENCE, None) is not None

    def correctness_reference(self, *inputs: Any) -> Any:
        """What the judge compares against (expected outputs and float64 anchors):
        correctness_reference where reference.py defines one, else reference."""
        return correctness_reference_of(self.module)(*inputs)

    def make_inputs(self, workload: str = "small", device: str = "cpu", seed: int | None = None) -> list:
        """Inputs of a workload. With a seed, torch's generators are seeded first (the judge
        always passes a secret one)."""
        self.workload(workload)  # a clear error for an unknown workload
        if seed is not None:
            import torch

            torch.manual_seed(seed)
        return list(self.module.make_inputs(workload=workload, device=device))

    def __repr__(self) -> str:
        return f"<Problem {self.number:02d} {self.slug} ({self.family})>"


class Suite(Sequence[Problem]):
    """A loaded suite: problems ordered by number, addressable by slug or number."""

    def __init__(self, core: _core.Suite):
        self._core = core
        self._problems = [Problem(m) for m in core.problems]
        self._by_slug = {p.slug: p for p in self._problems}

    @property
    def root(self) -> Path:
        return Path(self._core.root)

    def __len__(self) -> int:
        return len(self._problems)

    def __getitem__(self, index):  # type: ignore[override]
        return self._problems[index]

    def __iter__(self) -> Iterator[Problem]:
        return iter(self._problems)

    def find(self, slug_or_number: str | int) -> Problem:
        """The problem with this slug or number; NotFoundError names near matches."""
        message = self._core.find(str(slug_or_number))
        return self._by_slug[message.slug]

    def in_family(self, family: str) -> list[Problem]:
        return [self._by_slug[m.slug] for m in self._core.in_family(family)]

    def matching(self, glob: str) -> list[Problem]:
        return [self._by_slug[m.slug] for m in self._core.matching(glob)]

    def select(self, globs: Sequence[str] = (), families: Sequence[str] = ()) -> list[Problem]:
        """Problems matching any glob (or all, if none) and in any family (or all)."""
        chosen = self._problems
        if globs:
            wanted = {p.slug for g in globs for p in self.matching(g)}
            wanted |= {p.slug for g in globs if g.isdigit() for p in [self.find(g)]}
            chosen = [p for p in chosen if p.slug in wanted]
        if families:
            for f in families:
                self._core.in_family(f)  # validates the name
            chosen = [p for p in chosen if p.family in set(families)]
        return chosen

    def __repr__(self) -> str:
        families: dict[str, int] = {}
        for p in self._problems:
            families[p.family] = families.get(p.family, 0) + 1
        summary = ", ".join(f"{f}: {n}" for f, n in families.items())
        return f"<Suite {len(self)} problems at {self.root} ({summary})>"


def load_suite(root: str | Path | None = None) -> Suite:
    """Loads and validates the suite at `root` (default: see default_suite_root())."""
    return Suite(_core.Suite.load(str(root if root is not None else default_suite_root())))
