"""The published harness's problem files, as they are: importing a user's checkout into a suite
folder (`mkb import upstream-problems`) and comparing our references with the published ones
(`mkb suite compare-upstream`).

A checkout holds `problems/<family>/NN_<slug>.py` files, each defining `reference(*inputs)` and
a no-argument `make_inputs()` that draws the full workload (on CUDA in the published files), and
opening with a docstring and `# Source:` / `# Reference:` / `# Workload:` / `# License:` /
`# Notice:` header comments. The 42 SOL-ExecBench problems ship as recipes
(`problems/_sol_execbench/NN_<slug>.json`: the file's layout with the dataset's spans blanked,
and runs of the dataset reference's tokens that fill them); with the user's copy of the dataset
(L1.parquet, L2.parquet, Quant.parquet) they are assembled here the way the published harness
assembles them, each checked against the recipe's SHA-256.

Nothing of the checkout or the dataset is copied into this repository: the suite folder written
here is the user's, and it holds a .gitignore that keeps it out of git.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import torch

from . import _core
from .judge import values
from .peak_memory import cpu_peak_bytes, cuda_peak_bytes

HEADER_FIELDS = ("Source", "Reference", "Workload", "License", "Notice")
FILE_NAME = re.compile(r"(?P<number>[0-9]{2,})_(?P<slug>[a-z][a-z0-9_]*)")
# What a published `# Source:` line names, as the suite's provenance codes.
SOURCE_CODES = (("flashinfer", "FI"), ("vllm", "vL"), ("flash-linear-attention", "FLA"), ("fla", "FLA"))
SOL_SUBSET_CODES = {"L1": "S1", "L2": "S2", "Quant": "SQ"}

# The SOL-ExecBench recipe format: the layout's placeholders and how the dataset reference is cut
# into the units the recipe's runs count (words, and single non-space, non-word characters).
SOL_SUBSETS = ("L1", "L2", "Quant")
HOLE, ENTRY_NAME, WORKLOAD_ID = "\ue000", "\ue001", "\ue002"
SOL_UNIT = re.compile(r"\w+|[^\w\s]")

ADAPTER_MARK = "# ---- MetaKernelBench adapter"


class UpstreamError(_core.InvalidArgumentError):
    """A published file or recipe that cannot be imported or compared, with the reason."""


# --- the checkout ----------------------------------------------------------------------------


@dataclass
class PublishedFile:
    """One published problem file (shipped, or assembled from a recipe)."""

    relative: str  # problems/<family>/NN_<slug>.py
    family: str
    number: int
    slug: str
    text: str
    path: Path | None = None  # on disk (shipped files); None for files assembled in memory

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def header(self) -> tuple[str, dict[str, str]]:
        return read_header(self.text)

    def module(self) -> ModuleType:
        """The file imported as a private module (it runs the file's top level)."""
        name = f"_mkb_upstream_{self.number:02d}_{self.slug}_{self.sha256[:12]}"
        if name in sys.modules:
            return sys.modules[name]
        module = ModuleType(name)
        module.__file__ = str(self.path) if self.path else self.relative
        code = compile(self.text, module.__file__, "exec")
        sys.modules[name] = module
        try:
            exec(code, module.__dict__)  # noqa: S102 - the user's own checkout, run as the harness runs it
        except BaseException:
            del sys.modules[name]
            raise
        for fn in ("reference", "make_inputs"):
            if not callable(getattr(module, fn, None)):
                raise UpstreamError(f"{self.relative}: defines no callable {fn}()")
        return module


def _problems_dir(checkout: Path) -> Path:
    problems = Path(checkout) / "problems"
    if not problems.is_dir():
        raise _core.NotFoundError(
            f"{checkout}: no problems/ folder (is this a checkout of the published harness?)"
        )
    return problems


def published_files(checkout: str | Path) -> list[PublishedFile]:
    """The shipped problem files of a checkout, ordered by number (folders starting with '.' or
    '_' are not problems, as in the published catalog)."""
    problems = _problems_dir(Path(checkout))
    families = set(_core.families())
    found: dict[int, PublishedFile] = {}
    for path in sorted(problems.glob("*/*.py")):
        family = path.parent.name
        if family.startswith((".", "_")):
            continue
        relative = path.relative_to(problems.parent).as_posix()
        match = FILE_NAME.fullmatch(path.stem)
        if family not in families or match is None:
            raise UpstreamError(
                f"{relative}: expected problems/<family>/NN_<slug>.py with a family of "
                f"{', '.join(sorted(families))}"
            )
        number = int(match["number"])
        if number in found:
            raise UpstreamError(f"{relative}: number {number:02d} is also {found[number].relative}")
        found[number] = PublishedFile(
            relative, family, number, match["slug"], path.read_text(encoding="utf-8"), path
        )
    return [found[n] for n in sorted(found)]


def read_header(text: str) -> tuple[str, dict[str, str]]:
    """The module docstring and the header comments (`# Field: value`, continued by `#   ...`
    lines), as the published files open."""
    try:
        import ast

        docstring = ast.get_docstring(ast.parse(text)) or ""
    except SyntaxError:
        docstring = ""
    fields: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if not line.startswith("#"):
            if fields and line.strip() and not line.startswith(('"""', "'''")):
                break
            current = None
            continue
        body = line[1:].strip()
        m = re.match(r"([A-Z][A-Za-z]*):\s*(.*)", body)
        if m and m.group(1) in HEADER_FIELDS:
            current = m.group(1)
            fields[current] = m.group(2).strip()
        elif current and line.startswith("#  "):
            fields[current] = (fields[current] + " " + body).strip()
    return docstring, fields


# --- SOL-ExecBench recipes -------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetEntry:
    name: str
    reference: str
    workload_ids: tuple[str, ...]


def sol_recipes(checkout: str | Path) -> list[Path]:
    folder = _problems_dir(Path(checkout)) / "_sol_execbench"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def read_dataset(dataset_dir: str | Path) -> dict[tuple[str, int], DatasetEntry]:
    """Every row of the user's SOL-ExecBench copy: (subset, row) -> name, reference, workload ids."""
    try:
        import pyarrow.parquet as pq
    except ImportError as missing:
        raise _core.FailedPreconditionError(
            "reading the SOL-ExecBench dataset needs pyarrow (pip install 'metakernelbench[analysis]')"
        ) from missing
    entries: dict[tuple[str, int], DatasetEntry] = {}
    for subset in SOL_SUBSETS:
        path = Path(dataset_dir) / f"{subset}.parquet"
        if not path.is_file():
            raise _core.NotFoundError(
                f"{path}: missing (the dataset folder holds L1.parquet, L2.parquet, Quant.parquet)"
            )
        table = pq.read_table(path, columns=["name", "reference", "workloads"])
        names, references, workloads = (
            table.column(c).to_pylist() for c in ("name", "reference", "workloads")
        )
        for row, (name, reference, records) in enumerate(zip(names, references, workloads)):
            ids = tuple(record["uuid"] for record in json.loads(records))
            entries[(subset, row)] = DatasetEntry(name, reference, ids)
    return entries


def assemble_recipe(recipe_path: Path, entries: dict[tuple[str, int], DatasetEntry]) -> PublishedFile:
    """The problem file a recipe describes, filled from the dataset; refused unless its SHA-256 is
    the recipe's (the dataset copy differs from the one the recipes were made from)."""
    where = recipe_path.name
    try:
        recipe = json.loads(recipe_path.read_text(encoding="utf-8"))
        subset, row, layout = recipe["subset"], int(recipe["row"]), recipe["layout"]
        problem, family, runs, want = recipe["problem"], recipe["category"], recipe["runs"], recipe["sha256"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UpstreamError(f"{where}: not a recipe ({type(error).__name__}: {error})") from None
    entry = entries.get((subset, row))
    if entry is None:
        raise UpstreamError(f"{where}: the dataset has no row {row} in {subset}")
    units = SOL_UNIT.findall(entry.reference)
    filling = [unit for start, length in runs for unit in units[start : start + length]]
    if len(filling) != layout.count(HOLE):
        raise UpstreamError(f"{where}: its runs give {len(filling)} units for {layout.count(HOLE)} holes")
    workload = int(recipe.get("workload", 0))
    if not 0 <= workload < len(entry.workload_ids):
        raise UpstreamError(f"{where}: workload {workload} is not one of the row's {len(entry.workload_ids)}")
    pieces = iter(filling)
    substitutes = {ENTRY_NAME: entry.name, WORKLOAD_ID: entry.workload_ids[workload]}
    text = "".join(next(pieces) if c == HOLE else substitutes.get(c, c) for c in layout)
    got = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if got != want:
        raise UpstreamError(
            f"{where}: assembled from the dataset, the file's SHA-256 is {got}, the recipe "
            f"records {want}: this copy of the dataset differs from the one the recipes "
            "were made from; refused"
        )
    match = FILE_NAME.fullmatch(problem)
    if match is None:
        raise UpstreamError(f"{where}: problem {problem!r} is not NN_<slug>")
    return PublishedFile(f"problems/{family}/{problem}.py", family, int(match["number"]), match["slug"], text)


# --- drawing and describing ------------------------------------------------------------------


def draw(file: PublishedFile, seed: int, cuda_on_cpu: bool = False) -> list:
    """The published inputs for a seed, as the published grader draws them (torch seeded, then
    make_inputs()), with the reference numerics on. With `cuda_on_cpu` (a comparison where no GPU
    is visible) the CUDA tensors the published file asks for are made on the CPU (`published_code`):
    the same shapes, dtypes and structure, other values (the CPU's generator)."""
    module = file.module()
    with values_numerics(), torch.random.fork_rng(devices=_cuda_devices()), published_code(cuda_on_cpu):
        torch.manual_seed(seed)
        try:
            return list(module.make_inputs())
        except (RuntimeError, AssertionError) as error:
            text = str(error).lower()
            if not torch.cuda.is_available() and ("cuda" in text or "nvidia" in text):
                raise UpstreamError(
                    f"{file.relative}: its make_inputs() draws on CUDA, and no GPU is "
                    "visible here: run with --device cuda on a GPU"
                ) from None
            raise


def _to_cpu(device):
    if isinstance(device, torch.device):
        return torch.device("cpu") if device.type == "cuda" else device
    if isinstance(device, str) and device.split(":")[0] == "cuda":
        return "cpu"
    if isinstance(device, int) and not isinstance(device, bool):
        return "cpu"  # a CUDA ordinal
    return device


class _CudaOnCpu(torch.overrides.TorchFunctionMode):
    """Makes on the CPU what published code asks to make on CUDA: a `device=` argument of any
    torch function, and Tensor.to(device) / .cuda(). Only published code runs under it."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if "device" in kwargs:
            kwargs["device"] = _to_cpu(kwargs["device"])
        if func is torch.Tensor.cuda:
            return args[0]
        if func is torch.Tensor.to:
            args = tuple(_to_cpu(a) for a in args)
        return func(*args, **kwargs)


def published_code(cuda_on_cpu: bool):
    """Where published code runs: as it is, or with its CUDA tensors made on the CPU."""
    import contextlib

    return _CudaOnCpu() if cuda_on_cpu else contextlib.nullcontext()


def _cuda_devices() -> list[int]:
    return list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []


def values_numerics():
    from .judge.reference_numerics import StrictNumerics

    return StrictNumerics()


def _kind(x) -> str:
    if isinstance(x, torch.Tensor):
        return "tensor"
    if values.is_scalar(x):
        return type(x).__name__
    return f"{type(x).__module__}.{type(x).__qualname__}"


def _dtype(x: torch.Tensor, what: str) -> str:
    name = values.dtype_name(x)
    if not name:
        raise UpstreamError(f"{what} has dtype {x.dtype}, which the suite's data model has no name for")
    return name


def input_names(module: ModuleType, count: int) -> list[str]:
    """reference's parameter names, in order (input_<i> for *args)."""
    names = []
    for p in inspect.signature(module.reference).parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
    names += [f"input_{i}" for i in range(len(names), count)]
    return names[:count]


def _flat_outputs(out, where: str) -> tuple[str, list[torch.Tensor]]:
    if isinstance(out, torch.Tensor):
        return "SINGLE_TENSOR", [out]
    if type(out) in (tuple, list) and all(isinstance(o, torch.Tensor) for o in out):
        return ("TUPLE" if type(out) is tuple else "LIST"), list(out)
    raise UpstreamError(
        f"{where}: reference returns a {type(out).__name__} that is not a tensor or a flat "
        "tuple / list of tensors, which the suite's data model cannot state"
    )


@dataclass
class Observation:
    """What draws of a published file show: inputs, outputs, in-place updates, memory, flops."""

    names: list[str]
    draws: list[list]  # the inputs of each draw
    container: str
    outputs: list[torch.Tensor]  # of the first draw
    output_of_input: list[int | None]  # for each output: the input it is, if any
    mutated: list[int]
    device: str
    peak_memory_bytes: int
    flops: float
    memory_method: str


def observe(file: PublishedFile, seeds: Sequence[int], device: str) -> Observation:
    """Draws the published inputs for every seed and runs the reference on the first draw: at the
    input dtypes (outputs, in-place updates, flops) and with the anchor's float64 inputs (memory)."""
    module = file.module()
    if device == "cuda" and not torch.cuda.is_available():
        raise _core.FailedPreconditionError("--device cuda: no GPU is visible")
    draws = []
    for seed in seeds:
        inputs = draw(file, seed)
        draws.append([x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs])
    first = draws[0]
    for i, x in enumerate(first):
        if not isinstance(x, torch.Tensor) and not values.is_scalar(x):
            raise UpstreamError(
                f"{file.relative}: input {i} is a {_kind(x)}: inputs are tensors or Python scalars"
            )
    names = input_names(module, len(first))
    kept = [values.clone(x) for x in first]
    call = [values.clone(x) for x in first]
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with values_numerics(), counter:
        out = module.reference(*call)
    container, outputs = _flat_outputs(out, file.relative)
    mutated = [
        i for i, (a, b) in enumerate(zip(call, kept)) if isinstance(a, torch.Tensor) and not torch.equal(a, b)
    ]
    output_of_input = [
        next((i for i, x in enumerate(call) if isinstance(x, torch.Tensor) and o is x), None) for o in outputs
    ]

    def judged_draw():
        inputs = draw(file, seeds[0])
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
        with values_numerics():
            expected = module.reference(*[values.clone(x) for x in inputs])
            anchor = module.reference(*values.upcast(inputs))
        return inputs, expected, anchor

    if device == "cuda":
        peak, method = cuda_peak_bytes(judged_draw), f"measured on {torch.cuda.get_device_name()}"
    else:
        peak, method = int(cpu_peak_bytes(judged_draw) * 1.3), "a CPU estimate x1.3 (every storage followed)"
    return Observation(
        names,
        draws,
        container,
        outputs,
        output_of_input,
        mutated,
        device,
        max(peak, 1),
        float(counter.get_total_flops()),
        method,
    )


# --- the suite folder ------------------------------------------------------------------------


def _provenance(
    file: PublishedFile, docstring: str, fields: dict[str, str], observation: Observation, checkout: Path
) -> dict:
    source_line = fields.get("Source", "")
    code = "custom"
    if "sol-execbench" in source_line.lower():
        subset = re.search(r"benchmark/(L1|L2|Quant)/", fields.get("Reference", ""))
        code = SOL_SUBSET_CODES.get(subset.group(1), "S1") if subset else "S1"
    else:
        code = next((c for key, c in SOURCE_CODES if key in source_line.lower()), "custom")
    model = re.search(
        r"\bfrom (.+?)(?: at | with |\s*\(|\.$|$)", docstring.splitlines()[0] if docstring else ""
    )
    license_text = " ".join(x for x in (fields.get("License", ""), fields.get("Notice", "")) if x)
    return {
        "source": code,
        "model": model.group(1).strip() if model else "as the published file's docstring states",
        "location": fields.get("Reference", "") or file.relative,
        "url": "https://github.com/YIGE24/MetaKernelBench",
        "license": license_text or "as the published file states",
        "notes": (
            f"Imported by `mkb import upstream-problems` from {checkout / file.relative} "
            f"(SHA-256 {file.sha256}). Source: {source_line or 'not stated'}. Workload: "
            f"{fields.get('Workload', 'not stated')}. Input and output specs from {len(observation.draws)} "
            f"draw(s) on {observation.device}; peak memory {observation.memory_method}."
        ),
    }


def _tensor_specs(names: list[str], draws: list[list], mutated: list[int], file: PublishedFile):
    """Input specs and the workload parameters of the dimensions that change between draws."""
    specs, params, minimums = [], {}, {}
    first = draws[0]
    for i, x in enumerate(first):
        kinds = {_kind(d[i]) for d in draws}
        if len(kinds) != 1:
            raise UpstreamError(
                f"{file.relative}: input {names[i]} is a {' or a '.join(sorted(kinds))} between draws"
            )
        if values.is_scalar(x):
            dtype = {float: "float64", int: "int64", bool: "bool"}[type(x)]
            spec = {
                "name": names[i],
                "dtype": dtype,
                "scalar": True,
                "description": "a Python scalar of the published make_inputs()",
            }
            if len({d[i] for d in draws}) == 1 and (type(x) is not int or abs(x) < 2**53):
                spec["value"] = float(x)
            specs.append(spec)
            continue
        dtypes = {_dtype(d[i], f"{file.relative}: input {names[i]}") for d in draws}
        ranks = {d[i].dim() for d in draws}
        if len(dtypes) != 1 or len(ranks) != 1:
            raise UpstreamError(f"{file.relative}: input {names[i]} changes dtype or rank between draws")
        shape = []
        for k in range(x.dim()):
            sizes = [int(d[i].shape[k]) for d in draws]
            if len(set(sizes)) == 1:
                shape.append(str(sizes[0]))
            else:
                param = f"{names[i]}_dim{k}"
                params[param], minimums[param] = max(sizes), min(sizes)
                shape.append(param)
        specs.append({"name": names[i], "dtype": dtypes.pop(), "shape": shape, "in_place": i in mutated})
    return specs, params, minimums


def problem_message(file: PublishedFile, observation: Observation, checkout: Path) -> dict:
    """The problem.textproto of an imported file, as a dict of mkb.v1.Problem."""
    docstring, fields = file.header()
    names = observation.names
    inputs, params, minimums = _tensor_specs(names, observation.draws, observation.mutated, file)
    outputs, used = [], set()
    for k, (o, source) in enumerate(zip(observation.outputs, observation.output_of_input)):
        name = (
            names[source] if source is not None else ("out" if len(observation.outputs) == 1 else f"out{k}")
        )
        while name in used:
            name += "_"
        used.add(name)
        outputs.append(
            {
                "name": name,
                "dtype": _dtype(o, f"{file.relative}: output {k}"),
                "shape": [str(int(n)) for n in o.shape],
                "description": f"input {names[source]} after the reference's update"
                if source is not None
                else "",
            }
        )
    tensors = [x for x in observation.draws[0] if isinstance(x, torch.Tensor)]
    in_bytes = sum(x.numel() * x.element_size() for x in tensors)
    out_bytes = sum(o.numel() * o.element_size() for o in observation.outputs)
    title = (docstring.splitlines()[0] if docstring else f"published problem {file.number:02d}").strip()
    on_gpu_only = observation.device == "cuda"
    small_note = (
        "none of its own: the published file defines only its full workload, drawn on CUDA, so this "
        "problem runs on a GPU only"
        if on_gpu_only
        else "the published full workload again (the published file defines no smaller one)"
    )
    workload = {
        "params": params,
        "param_minimums": minimums,
        "roofline": {
            "flops": observation.flops,
            "min_bytes": float(max(in_bytes + out_bytes, 1)),
            "derivation": (
                f"imported: bytes = every input read once and every output written once "
                f"({in_bytes} + {out_bytes} B on one draw); flops = the matrix-multiply and "
                "convolution flops torch's FlopCounterMode counted in one reference call (other "
                "arithmetic is not counted)"
            ),
        },
        "peak_memory_bytes": observation.peak_memory_bytes,
    }
    description = "\n\n".join(
        x
        for x in (
            docstring,
            f"Workload: {fields['Workload']}" if fields.get("Workload") else "",
            (
                f"Imported as it is from the published harness ({file.relative}): `reference.py` is the "
                "published file byte for byte, followed by an adapter that gives `make_inputs` the suite's "
                "(workload, device) signature. The published `make_inputs()` and `reference(...)` are the "
                "definition."
            ),
        )
        if x
    )
    return {
        "slug": file.slug,
        "number": file.number,
        "family": file.family,
        "title": title,
        "description": description,
        "provenance": _provenance(file, docstring, fields, observation, checkout),
        "inputs": inputs,
        "outputs": outputs,
        "output_container": observation.container,
        "workloads": [
            {
                "name": "full",
                "description": "the published workload: what the published make_inputs() draws",
                **workload,
            },
            {"name": "small", "description": f"small workload: {small_note}", **workload},
        ],
        "invariants": [f"as the published file states: {file.relative} (reference.py) is the definition"],
    }


ADAPTER = """

{mark}, written by `mkb import upstream-problems` ------------------
# Everything above is the published file {relative} (SHA-256 {sha256}), byte for byte. The suite
# calls make_inputs(workload, device); the published make_inputs() takes no arguments and draws
# the one published workload itself ({drawn_on} at import). There is no smaller workload.
_MKB_PUBLISHED_MAKE_INPUTS = make_inputs
_MKB_DRAWN_ON = "{drawn_on}"


def make_inputs(workload: str = "full", device: str = "cpu"):
    import torch as _mkb_torch

    if workload not in ("full", "small"):
        raise ValueError(f"workload {{workload!r}}: this imported problem has full and small (the same)")
    if _MKB_DRAWN_ON == "cuda" and not _mkb_torch.cuda.is_available():
        raise RuntimeError(
            "problem {number:02d} is imported from the published harness: its make_inputs() draws its "
            "one workload on CUDA and it has no small CPU workload, so it runs on a GPU only (--device cuda)"
        )
    inputs = list(_MKB_PUBLISHED_MAKE_INPUTS())
    return [x.to(device) if isinstance(x, _mkb_torch.Tensor) else x for x in inputs]
"""


def adapter_source(file: PublishedFile, drawn_on: str) -> str:
    text = file.text if file.text.endswith("\n") else file.text + "\n"
    return text + ADAPTER.format(
        mark=ADAPTER_MARK, relative=file.relative, sha256=file.sha256, drawn_on=drawn_on, number=file.number
    )


def textproto(message: dict) -> str:
    body = _core.message("Problem", message).to_text()
    return (
        "# proto-file: proto/mkb/v1/problem.proto\n# proto-message: mkb.v1.Problem\n"
        "# Written by `mkb import upstream-problems`; re-run it rather than editing this file.\n" + body
    )


@dataclass
class ImportReport:
    out: Path
    imported: list[tuple[int, str, str]] = field(default_factory=list)  # number, slug, drawn on
    failed: list[tuple[str, str]] = field(default_factory=list)  # file, why
    skipped_recipes: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed


def import_checkout(
    checkout: str | Path,
    out: str | Path,
    sol_execbench: str | Path | None = None,
    device: str = "cpu",
    seeds: Sequence[int] = (0, 1, 2),
    numbers: Iterable[int] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ImportReport:
    """Writes a suite folder from a checkout: one problem folder per published file (and, with the
    dataset, per assembled SOL-ExecBench recipe). A file that cannot be imported is reported and
    left out; the others are written."""
    checkout, out = Path(checkout).resolve(), Path(out).resolve()
    if device not in ("cpu", "cuda"):
        raise _core.InvalidArgumentError(f"--device: '{device}' is not one of cpu, cuda")
    report = ImportReport(out)
    files: list[PublishedFile] = published_files(checkout)
    recipes = sol_recipes(checkout)
    if sol_execbench is not None:
        entries = read_dataset(sol_execbench)
        for recipe in recipes:
            try:
                files.append(assemble_recipe(recipe, entries))
            except UpstreamError as error:
                report.failed.append((recipe.relative_to(checkout).as_posix(), str(error)))
    else:
        report.skipped_recipes = len(recipes)
    wanted = set(numbers) if numbers else None
    out.mkdir(parents=True, exist_ok=True)
    (out / ".gitignore").write_text(
        "# A suite imported from the published harness: the user's, not for git.\n*\n"
    )
    for file in sorted(files, key=lambda f: f.number):
        if wanted is not None and file.number not in wanted:
            continue
        if progress:
            progress(f"{file.number:02d} {file.slug}")
        try:
            observation = observe(file, seeds, device)
            message = problem_message(file, observation, checkout)
            text = textproto(message)
        except (UpstreamError, _core.Error) as error:
            report.failed.append((file.relative, str(error)))
            continue
        except Exception as error:  # noqa: BLE001 - a published file's own failure, reported per file
            report.failed.append((file.relative, f"{type(error).__name__}: {error}"))
            continue
        folder = out / file.family / f"{file.number:02d}_{file.slug}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "problem.textproto").write_text(text)
        (folder / "reference.py").write_text(adapter_source(file, observation.device))
        report.imported.append((file.number, file.slug, observation.device))
    return report


# --- compare-upstream ------------------------------------------------------------------------


@dataclass
class Comparison:
    number: int
    slug: str
    published: str
    signature: list[str] = field(default_factory=list)  # differences; empty when the signatures match
    ours_vs_published: float | None = None  # factor over the allowance (<= 1 passes)
    published_vs_ours: float | None = None
    error: str = ""

    @property
    def matches(self) -> bool:
        return (
            not self.error
            and not self.signature
            and self.ours_vs_published is not None
            and self.ours_vs_published <= 1
            and self.published_vs_ours is not None
            and self.published_vs_ours <= 1
        )

    def to_dict(self) -> dict:
        return {
            "number": self.number,
            "slug": self.slug,
            "published": self.published,
            "matches": self.matches,
            "signature_differences": self.signature,
            "ours_vs_published_factor": self.ours_vs_published,
            "published_vs_ours_factor": self.published_vs_ours,
            "error": self.error,
        }


def signature_differences(problem, file: PublishedFile, inputs: list, out, mutated: list[int]) -> list[str]:
    """How our problem's full-workload spec differs from one published draw and its reference call."""
    diffs = []
    if problem.slug != file.slug:
        diffs.append(f"slug {problem.slug} != published {file.slug}")
    specs = list(problem.message.inputs)
    names = input_names(file.module(), len(inputs))
    if [s.name for s in specs] != names:
        diffs.append(f"inputs {[s.name for s in specs]} != published {names}")
    for spec, x, name in zip(specs, inputs, names):
        if spec.scalar:
            if not values.is_scalar(x) or _core.python_scalar_type(spec.dtype) != type(x).__name__:
                diffs.append(
                    f"{name}: a Python {_core.python_scalar_type(spec.dtype)} here, published a {_kind(x)}"
                )
            elif spec.value is not None and spec.value != x:
                diffs.append(f"{name}: fixed at {spec.value!r} here, published {x!r}")
        elif not isinstance(x, torch.Tensor):
            diffs.append(f"{name}: a tensor here, published a {_kind(x)}")
        elif values.dtype_name(x) != spec.dtype or not problem.shape_fits(x.shape, spec, "full"):
            diffs.append(
                f"{name}: {spec.dtype}{problem.dimensions(spec, 'full')} here, published "
                f"{values.dtype_name(x) or x.dtype}{list(x.shape)}"
            )
    ours = [i for i, s in enumerate(specs) if s.in_place]
    if ours != mutated:
        diffs.append(f"inputs updated in place: {ours} here, published {mutated}")
    try:
        container, outs = _flat_outputs(out, file.relative)
    except UpstreamError as error:
        return diffs + [str(error)]
    if container.lower() != problem.message.output_container:
        diffs.append(f"returns a {problem.message.output_container} here, published a {container.lower()}")
    if len(outs) != len(problem.message.outputs):
        diffs.append(f"{len(problem.message.outputs)} outputs here, published {len(outs)}")
    for spec, o in zip(problem.message.outputs, outs):
        if values.dtype_name(o) != spec.dtype or not problem.shape_fits(o.shape, spec, "full"):
            diffs.append(
                f"output {spec.name}: {spec.dtype}{problem.dimensions(spec, 'full')} here, published "
                f"{values.dtype_name(o) or o.dtype}{list(o.shape)}"
            )
    return diffs


def compare_problem(problem, file: PublishedFile, seed: int, device: str) -> Comparison:
    """Draws the published inputs, runs both references on them, and checks each against the other
    with the judge's correctness rule (the other's output at the input dtypes and its float64 anchor)."""
    from .suite_check import factor_over_allowance

    row = Comparison(problem.number, problem.slug, file.relative)
    cuda_on_cpu = device == "cpu" and not torch.cuda.is_available()
    if device == "cpu":
        # Both references and both float64 anchors on one draw: the problem's measured peak, about
        # twice. Refused by name rather than ended by the kernel's out-of-memory killer.
        needed = 2 * problem.workload("full").peak_memory_bytes
        available = _available_memory_bytes()
        if available is not None and needed > available:
            row.error = (
                f"needs about {needed / 2**30:.1f} GiB on the CPU (twice the full workload's peak, "
                f"{problem.workload('full').peak_memory_bytes / 2**30:.1f} GiB) and "
                f"{available / 2**30:.1f} GiB is available: compare it on a GPU (--device cuda)"
            )
            return row
    try:
        drawn = draw(file, seed, cuda_on_cpu)
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in drawn]
        module = file.module()
        call = [values.clone(x) for x in inputs]
        with values_numerics():
            with published_code(cuda_on_cpu):
                published = module.reference(*call)
            mutated = [
                i
                for i, (a, b) in enumerate(zip(call, inputs))
                if isinstance(a, torch.Tensor) and not torch.equal(a, b)
            ]
            with published_code(cuda_on_cpu):
                published_anchor = module.reference(*values.upcast(inputs))
            # Ours as the judge computes it (correctness_reference where the problem has one).
            ours = problem.correctness_reference(*[values.clone(x) for x in inputs])
            ours_anchor = problem.correctness_reference(*values.upcast(inputs))
    except UpstreamError as error:
        row.error = str(error)
        return row
    except Exception as error:  # noqa: BLE001 - either reference failing on the other's inputs is the finding
        row.error = f"{type(error).__name__}: {error}"
        return row
    row.signature = signature_differences(problem, file, inputs, published, mutated)

    def leaves(out):
        return [out] if isinstance(out, torch.Tensor) else list(out) if type(out) in (tuple, list) else [out]

    same_structure = type(ours) is type(published) and len(leaves(ours)) == len(leaves(published))
    if not same_structure:
        row.ours_vs_published = row.published_vs_ours = float("inf")
        return row
    row.ours_vs_published = factor_over_allowance(
        problem, leaves(ours), leaves(published), leaves(published_anchor)
    )
    row.published_vs_ours = factor_over_allowance(
        problem, leaves(published), leaves(ours), leaves(ours_anchor)
    )
    return row


def _available_memory_bytes() -> int | None:
    """MemAvailable of /proc/meminfo (None where there is none)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def compare_checkout(
    suite,
    checkout: str | Path,
    device: str = "cpu",
    seed: int = 0,
    numbers: Iterable[int] | None = None,
    progress: Callable[[str], None] | None = None,
    skip: Iterable[int] = (),
    on_row: Callable[[Comparison], None] | None = None,
) -> list[Comparison]:
    """One Comparison per problem present both in the suite and in the checkout (by number),
    leaving out the numbers in `skip`; `on_row` sees each as it is made."""
    ours = {p.number: p for p in suite}
    wanted = set(numbers) if numbers else None
    skipped = set(skip)
    rows = []
    for file in published_files(checkout):
        if file.number not in ours or (wanted is not None and file.number not in wanted):
            continue
        if file.number in skipped:
            continue
        if progress:
            progress(f"{file.number:02d} {file.slug}")
        row = compare_problem(ours[file.number], file, seed, device)
        if on_row is not None:
            on_row(row)
        rows.append(row)
    return rows
