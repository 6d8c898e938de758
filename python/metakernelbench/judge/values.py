"""Tensors and returned structures as the judge's wire format sees them (mkb.v1.ValueNode,
TensorMeta), and the shared-memory / CUDA-IPC transport of tensor data between processes.

An input list may also hold Python scalars (a problem's `scalar` inputs: float, int, bool). They
travel by value in their handle's `scalar` field, never through shared memory, and are opened as
the same Python type; returned values are tensors only, so a scalar handle among them is refused."""

from __future__ import annotations

import os
import types
from collections.abc import Mapping
from typing import NamedTuple

import torch
import torch.utils.dlpack

from .. import _core

# Bound once: the worker's main thread calls them opening each call's inputs, after the host wrote
# them. An `import os` inside a function is a lookup in sys.modules, where a red team put an
# object of its own under "os" whose fstat computed the answer (passed at 77-81x, strict,
# 2026-12-06); harness_reach guards these names and sys.modules' entries for the guarded modules.
# The identity of a received segment (st_dev, st_ino), by fstat(2) in C++ (not os.fstat, whose
# result is built through the posix module's state: bindings/judge_bindings.cc).
_segment_identity = _core.SharedSegment.identity
_close_fd = os.close

# A DLPack capsule to a tensor: torch's C function, bound when this module is imported (before
# kernel.py is). torch.from_dlpack is Python that looks up its module's global `torch` and then
# torch._C._from_dlpack each time it runs: a red team replaced that global (a namespace whose
# _from_dlpack remembered every segment the judge opened or exported) and wrote the answer into
# the output segment after the export (passed at 11.3x, 2026-12-05 evening).
_from_dlpack = torch._C._from_dlpack

DTYPES: dict[str, torch.dtype] = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float8_e4m3fn": torch.float8_e4m3fn,
    "float8_e5m2": torch.float8_e5m2,
    "float4_e2m1fn_x2": torch.float4_e2m1fn_x2,  # packed FP4: two e2m1 values per byte
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
NAMES: dict[torch.dtype, str] = {v: k for k, v in DTYPES.items()}
UPCAST = (torch.float32, torch.float16, torch.bfloat16)
# Types whose DLPack export is not standard in DLPack 0.6: crossed as uint8 bytes.
BYTE_VIEW = (torch.float8_e4m3fn, torch.float8_e5m2, torch.float4_e2m1fn_x2, torch.bool)


# The Python types a scalar input may have, checked with `type(x) in SCALAR_TYPES` (a bool is an
# int to isinstance; here each is its own), and the ScalarValue field each travels in.
SCALAR_FIELDS: dict[type, str] = {bool: "bool_value", int: "int_value", float: "float_value"}


def is_scalar(x) -> bool:
    return type(x) in SCALAR_FIELDS


def scalar_handle(x) -> dict:
    """The handle of a scalar input: its value, by value."""
    if type(x) is int and not -(2**63) <= x < 2**63:
        raise _core.InvalidArgumentError(f"a scalar input {x} does not fit an int64")
    return {"scalar": {SCALAR_FIELDS[type(x)]: x}}


def _is_scalar_handle(handle) -> bool:
    return handle.scalar is not None


def open_scalar(handle):
    """The Python value a scalar handle carries, as the same Python type it was sent as."""
    s = handle.scalar
    for kind, field in SCALAR_FIELDS.items():
        value = getattr(s, field)
        if value is not None:
            return kind(value)
    raise _core.InvalidArgumentError("a scalar handle carries no value")


def _not_a_value(x) -> _core.InvalidArgumentError:
    return _core.InvalidArgumentError(
        f"an input is a {type(x).__module__}.{type(x).__qualname__}: inputs are tensors or Python "
        "float / int / bool scalars"
    )


def _split(items: list) -> tuple[list[torch.Tensor], list[int]]:
    """The tensors of an input list, and where each sits in it; anything that is neither a tensor
    nor a Python scalar is refused."""
    tensors, where = [], []
    for i, x in enumerate(items):
        if isinstance(x, torch.Tensor):
            tensors.append(x)
            where.append(i)
        elif not is_scalar(x):
            raise _not_a_value(x)
    return tensors, where


def _merge(items: list, tensor_handles: list[dict]) -> list[dict]:
    """Handles in input order: the tensors' as given, scalars by value."""
    handles = iter(tensor_handles)
    return [next(handles) if isinstance(x, torch.Tensor) else scalar_handle(x) for x in items]


def _refuse_scalars(handles: list, scalars: bool) -> None:
    if not scalars and any(_is_scalar_handle(h) for h in handles):
        raise _core.InvalidArgumentError("a returned value's handle carries a scalar: outputs are tensors")


def dtype_name(t: torch.Tensor) -> str:
    return NAMES.get(t.dtype, "")


def capsule(t: torch.Tensor):
    """A DLPack capsule of t's memory (fp8 / packed fp4 / bool viewed as uint8 bytes)."""
    base = t.view(torch.uint8) if t.dtype in BYTE_VIEW else t
    return base.__dlpack__()


def byte_dtype_name(t: torch.Tensor) -> str:
    """The dtype to read capsule(t) as when comparing bits: uint8 for the types crossed as bytes."""
    return "uint8" if t.dtype in BYTE_VIEW else dtype_name(t)


def comparison_leaf(
    path: str, out: torch.Tensor, expected: torch.Tensor, anchor: torch.Tensor, exact: bool
) -> tuple:
    """The arguments of one output's comparison, as VerdictBuilder.judge_tensors takes them:
    (path, out, out_dtype, expected, expected_dtype, anchor or None, anchor_dtype, exact).
    Integer and bool outputs are always exact; exact ones compare bits, others go against the
    anchor."""
    exact = exact or not expected.is_floating_point()
    name = byte_dtype_name(expected) if exact else dtype_name(expected)
    return (
        path,
        capsule(out),
        name,
        capsule(expected),
        name,
        None if exact else capsule(anchor),
        dtype_name(anchor),
        exact,
    )


class OutputLeaf(NamedTuple):
    """A plain tensor leaf of a described value: a judge-owned alias of the tensor (a new Python
    object on the same memory, without the original's instance attributes), its device type, and
    its node's TensorHandle dict (its "meta" read once; a transport adds the data fields)."""

    tensor: torch.Tensor
    device_type: str
    handle: dict


class TensorFacts:
    """Reads values as the judge's wire format describes them (ValueNode, TensorMeta), through
    torch's C descriptors bound when this object is made: in the worker, before kernel.py is
    imported. A returned tensor is the kernel's object: it has a __dict__ (an instance attribute
    `stride` shadows the method), torch.Tensor's class attributes and the torch module's names can
    be replaced, and a subclass runs its own code on any method. So the type is checked exactly
    (`type(x) is torch.Tensor`; tuples and lists likewise), a subclass is reported as such and
    never read, and a plain tensor's properties are read by the bound descriptors with torch
    function handling off (no torch function mode sees the reads)."""

    # Deeper nesting than any problem's outputs (a tensor, or a tuple / list of them): past it a
    # value is described as an object, never walked (a list that contains itself).
    MAX_DEPTH = 32

    def __init__(self):
        base = torch._C.TensorBase
        self._tensor_type = torch.Tensor
        self._size = base.size
        self._stride = base.stride
        self._dtype = base.__dict__["dtype"].__get__
        self._device = base.__dict__["device"].__get__
        self._layout = base.__dict__["layout"].__get__
        self._is_nested = base.__dict__["is_nested"].__get__
        self._strided = torch.strided
        self._detach = base.detach
        self._no_torch_function = torch._C.DisableTorchFunction
        self._type = type
        self._is_subclass = type.__subclasscheck__
        self._qualname = type.__dict__["__qualname__"].__get__
        self._module = type.__dict__["__module__"].__get__
        self._str = str
        self._list = list
        self._dispatch_keys = torch._C._dispatch_keys
        self._has_key = torch._C.DispatchKeySet.has
        self._python_keys = tuple(
            getattr(torch._C.DispatchKey, name)
            for name in _PYTHON_DISPATCH_KEYS
            if hasattr(torch._C.DispatchKey, name)
        )

    def describe(self, value) -> tuple[dict, list[OutputLeaf]]:
        """The ValueNode dict of `value` and its plain tensor leaves in order, every fact read once,
        here. A tensor subclass is a "tensor" node with `plain` false and nothing else read; an
        object of any other type (a tuple or list subclass too) is an "other" node."""
        leaves: list[OutputLeaf] = []
        with self._no_torch_function():
            node = self._node(value, leaves, 0)
        return node, leaves

    def meta(self, t: torch.Tensor) -> dict:
        """The TensorMeta dict of one of the judge's own tensors (plain ones: the reference's
        outputs, its inputs, snapshots)."""
        with self._no_torch_function():
            return self._meta(t)

    def is_tensor(self, value) -> bool:
        """Whether `value` is a tensor leaf of a structure: a torch.Tensor or a subclass."""
        return self._is_subclass(self._tensor_type, self._type(value))

    def _meta(self, t) -> dict:
        """TensorMeta of a torch.Tensor; the caller has checked its type (a subclass runs its own
        code on every read, even of its dtype)."""
        dtype = self._dtype(t)
        return {
            "dtype": NAMES.get(dtype),
            "torch_dtype": self._str(dtype),
            "shape": self._list(self._size(t)),
            "strides": self._list(self._stride(t)),
            "device": self._str(self._device(t)),
            "plain": self._type(t) is self._tensor_type,
        }

    def _node(self, value, leaves: list[OutputLeaf], depth: int) -> dict:
        kind = self._type(value)
        if kind is self._tensor_type:
            keys = self._dispatch_keys(value)
            if any(self._has_key(keys, key) for key in self._python_keys):
                # A torch.Tensor whose ops go to Python (its class set back from a subclass with
                # __torch_dispatch__, or a functorch / functionalization wrapper): the dispatcher
                # looks its handler up in the instance's own namespace, where a red team's key
                # object ran C callables that computed the answer when the judge detached the
                # output after the clock (passed at 52-63x, permissive, 2026-12-06). Named,
                # never read further, as a subclass is.
                name = "torch.Tensor whose operations go to Python (a tensor subclass's dispatch)"
                return {"kind": "tensor", "type_name": name, "tensor": {"meta": {"plain": False}}}
            layout = self._layout(value)
            if layout is not self._strided or self._is_nested(value):
                # Sparse, MKL-DNN, nested: no strides, nothing the wire format can carry. Named,
                # never read further (the comparison reports it as not a plain tensor).
                what = "nested" if self._is_nested(value) else self._str(layout)
                name = f"torch.Tensor with layout {what} (only strided tensors are compared)"
                return {"kind": "tensor", "type_name": name, "tensor": {"meta": {"plain": False}}}
            handle = {"meta": self._meta(value)}
            if self._dtype(value) in NAMES:
                leaves.append(OutputLeaf(self._detach(value), self._device(value).type, handle))
            # else a dtype no problem returns (complex, quantized, uint16, ...): described by its
            # torch dtype, never exported; the comparison reports the wrong dtype.
            return {"kind": "tensor", "type_name": "Tensor", "tensor": handle}
        if (kind is tuple or kind is list) and depth < self.MAX_DEPTH:
            items = [self._node(v, leaves, depth + 1) for v in value]
            return {"kind": "tuple" if kind is tuple else "list", "items": items}
        if value is None:
            return {"kind": "none"}
        name = self._type_name(kind)
        if self._is_subclass(self._tensor_type, kind):
            return {"kind": "tensor", "type_name": name, "tensor": {"meta": {"plain": False}}}
        if depth >= self.MAX_DEPTH:
            name = f"{name} nested deeper than {self.MAX_DEPTH} levels"
        return {"kind": "other", "type_name": name}

    def _type_name(self, kind: type) -> str:
        """module.qualname of a type, read by type's own descriptors (a metaclass may define its
        own); a __module__ that is not a plain str is left out, and a __qualname__ that is not one
        (type accepts a str subclass, whose __format__ would run here, after the clock) is named
        by its type only."""
        module = self._module(kind)
        qualname = self._qualname(kind)
        if self._type(qualname) is not str:
            return "(a type whose __qualname__ is not a str)"
        return f"{module}.{qualname}" if self._type(module) is str else qualname


# Dispatch keys that send a tensor's operations to Python or to a wrapper's own code (TensorFacts).
_PYTHON_DISPATCH_KEYS = (
    "Python",
    "PythonTLSSnapshot",
    "PythonDispatcher",
    "Functionalize",
    "FuncTorchBatched",
    "FuncTorchGradWrapper",
    "FuncTorchDynamicLayerBackMode",
    "FuncTorchDynamicLayerFrontMode",
    "FuncTorchVmapMode",
    "BatchedNestedTensor",
)

# The host's reader (its values are its own: the reference's outputs, inputs it made).
_FACTS = TensorFacts()


def tensor_meta(t: torch.Tensor) -> dict:
    """The TensorMeta dict of a plain tensor."""
    return _FACTS.meta(t)


def value_node(value) -> dict:
    """The structure of `value` as a ValueNode dict, metadata only (TensorFacts.describe)."""
    return _FACTS.describe(value)[0]


def leaves(value) -> list[torch.Tensor]:
    """Tensor leaves of a tuple / list structure, in order: the tensor nodes of value_node."""
    if _FACTS.is_tensor(value):
        return [value]
    if type(value) in (tuple, list):
        return [leaf for v in value for leaf in leaves(v)]
    return []


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors hold the same shape, dtype and bytes: the comparison of inputs before
    and after a call, for every dtype (torch.equal has no packed-FP4 kernel)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    a, b = a.detach().contiguous().view(-1), b.detach().contiguous().view(-1)
    return a.numel() == 0 or torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def empty_like_meta(meta, device: str) -> torch.Tensor:
    """A tensor shaped and typed like a TensorMeta (uninitialised)."""
    return torch.empty(list(meta.shape), dtype=DTYPES[meta.dtype], device=device)


def upcast(inputs: list) -> list:
    """The anchor's inputs: float32 / float16 / bfloat16 tensors as float64, others cloned."""
    return [
        x.to(torch.float64) if isinstance(x, torch.Tensor) and x.dtype in UPCAST else clone(x) for x in inputs
    ]


def clone(x):
    return x.clone() if isinstance(x, torch.Tensor) else x


def _packed_offsets(tensors: list[torch.Tensor]) -> tuple[list[int], int]:
    """Where each tensor's bytes start in a buffer they are packed into, and the buffer's size:
    the layout every transport writes and reads back (a CPU segment, a CUDA arena, the worker's
    input buffer)."""
    offsets, total = [], 0
    for t in tensors:
        total = _core.align_tensor_offset(total)
        offsets.append(total)
        total += t.numel() * t.element_size()
    return offsets, total


class CpuArena:
    """CPU tensors packed into one shared memory segment (memfd) of this side's, reused while
    the data fits, as CudaArena packs CUDA tensors: the other side has read the last message's
    by the next (the protocol is one request, one reply). Its descriptor goes with every
    message; the receiver maps a segment once (CpuTransport.open). The worker's outputs cross
    this way, in memory no code of the kernel's holds a reference to (on the CPU judge, idle,
    2026-12-06: a segment per reply cost the worker's main thread 0.12 ms of export and release
    per timed call, the arena 0.04 ms). The host's inputs cross this way too; the kernel gets
    views of them, so the worker releases the last call's objects before the host writes the
    next call's (Session.release)."""

    device = "cpu"
    reused = True  # the receiver keeps views of it: Session releases before writing again

    def __init__(self):
        self._segment = None
        self._buffer = None

    def export(self, items: list) -> tuple[list[dict], list[int], object]:
        """Handles of `items` (tensors packed into the segment, Python scalars by value) in order,
        the segment's descriptor, and what the receiver will see (for CpuTransport.views)."""
        tensors, _ = _split(items)
        offsets, total = _packed_offsets(tensors)
        if self._segment is None or self._segment.size < max(total, 1):
            self._segment = _core.SharedSegment.create(max(total, 1))
            self._buffer = _from_dlpack(self._segment.capsule())
        buffer = self._buffer
        handles = []
        for t, offset in zip(tensors, offsets):
            nbytes = t.numel() * t.element_size()
            if nbytes:
                buffer[offset : offset + nbytes].copy_(t.detach().contiguous().view(-1).view(torch.uint8))
            handles.append({"meta": tensor_meta(t), "segment_offset": offset, "nbytes": nbytes})
        return _merge(items, handles), [self._segment.fd], (self._segment, buffer)


class CpuTransport:
    """CPU tensors cross in one shared memory segment (memfd) per message, the sender's CpuArena;
    a segment received again is the mapping made when it first came."""

    device = "cpu"

    def __init__(self):
        self._mapped: dict[tuple, tuple] = {}  # (device, inode, writable) -> (segment, buffer)

    def export(self, items: list) -> tuple[list[dict], list[int], object]:
        """Handles of `items` (tensors and Python scalars) in order, the descriptor of a segment
        of their own, and what keeps the segment alive (the judge sends through CpuArena)."""
        return CpuArena().export(items)

    def views(self, holder, items: list) -> list:
        """`items` as the receiver left them in the segment export() packed them into: tensors
        as views of the segment, scalars as they are."""
        _segment, buffer = holder
        tensors, where = _split(items)
        offsets, _ = _packed_offsets(tensors)
        out = list(items)
        for t, i, offset in zip(tensors, where, offsets):
            nbytes = t.numel() * t.element_size()
            out[i] = buffer[offset : offset + nbytes].view(t.dtype).view(t.shape) if nbytes else t
        return out

    def open(
        self, handles: list, fds: list[int], writable: bool, scalars: bool = False
    ) -> tuple[list, object]:
        """The values of `handles`: tensors mapped from the one segment in `fds`, and (with
        `scalars`, for inputs) Python scalars carried by value."""
        try:
            _refuse_scalars(handles, scalars)
        except _core.Error:
            for fd in fds:
                _close(fd)
            raise
        if not any(not _is_scalar_handle(h) for h in handles):
            for fd in fds:
                _close(fd)
            return [open_scalar(h) for h in handles], None
        if len(fds) != 1:
            for fd in fds:
                _close(fd)
            raise _core.InvalidArgumentError(f"expected one shared segment, got {len(fds)}")
        segment, buffer = self._map(fds[0], writable)
        out = []
        for h in handles:
            if _is_scalar_handle(h):
                out.append(open_scalar(h))
                continue
            meta = h.meta
            dtype = DTYPES[meta.dtype]
            start, nbytes = h.segment_offset, h.nbytes
            expected = _numel(meta.shape) * torch.empty((), dtype=dtype).element_size()
            if nbytes != expected or start < 0 or start + nbytes > segment.size:
                raise _core.InvalidArgumentError("a tensor handle points outside its segment")
            out.append(buffer[start : start + nbytes].view(dtype).view(list(meta.shape)))
        return out, (segment, buffer)

    def _map(self, fd: int, writable: bool) -> tuple:
        """The mapping of the segment `fd` names (taking ownership of fd): the one made before when
        this segment came before (the same memfd: its size is sealed), else a new one, which
        replaces the last (a sender's arena grows into a new segment and never goes back)."""
        try:
            dev, ino = _segment_identity(fd)
        except OSError as error:
            _close(fd)
            raise _core.InvalidArgumentError(f"a shared segment's descriptor: {error}") from None
        key = (dev, ino, writable)
        known = self._mapped.get(key)
        if known is not None:
            _close(fd)
            return known
        segment = _core.SharedSegment.map(fd, writable)
        mapped = (segment, _from_dlpack(segment.capsule()))
        self._mapped = {key: mapped}
        return mapped


class CudaArena:
    """CUDA tensors packed into device buffers of their own (cudaMalloc, not torch's caching
    allocator) and exported by one IPC handle per buffer. The host packs each call's private
    copies of the inputs into one, so that what the worker maps holds those copies and nothing
    else of the host's memory; the worker packs a call's outputs into its own (its snapshot of
    them), so that exporting them costs the same small, steady time on every call. Buffers are
    reused while the data fits (the other side has read the last call's by the next request)
    and kept until close() (the other side may still map an older one)."""

    device = "cuda"

    def __init__(self, device_index: int = 0):
        self._cuda = _core.cuda
        self._device = device_index
        self._buffers = []  # every buffer handed out, newest last
        self._handles = {}

    def export(self, items: list) -> tuple[list[dict], list[int], object]:
        """Handles of `items` (tensors packed into the arena, Python scalars by value) in order,
        no descriptors, and the items as the other side will see them (arena views, scalars)."""
        tensors, _ = _split(items)
        offsets, total = _packed_offsets(tensors)
        buffer = self._buffer(max(total, 1))
        return _pack(
            items, tensors, offsets, _from_dlpack(buffer.capsule()), self._handles[id(buffer)], self._device
        )

    def _buffer(self, nbytes: int):
        current = self._buffers[-1] if self._buffers else None
        if current is None or current.bytes < nbytes:
            current = self._cuda.DeviceBuffer(nbytes, self._device)
            self._buffers.append(current)
            self._handles[id(current)] = current.ipc_handle()
        return current

    @property
    def nbytes(self) -> int:
        """Device memory the arena holds (every buffer handed out is kept until close)."""
        return sum(b.bytes for b in self._buffers)

    def close(self) -> None:
        self._buffers.clear()
        self._handles.clear()


def _mapped_bytes(base: int, claimed: int) -> int:
    """The bytes of the allocation mapped at `base`, as the driver knows them; where the driver
    cannot say (an IPC mapping it does not range), what the sender claimed (test_cuda_transport.py
    shows which holds on the GPU it runs on)."""
    try:
        return _core.cuda.bytes_from(base)
    except _core.Error:
        return claimed


def _pack(items: list, tensors: list, offsets: list[int], raw, handle: bytes, device: int):
    """`tensors` copied into `raw` (a uint8 view of the allocation `handle` names) at `offsets`:
    the handles of `items` in order, no descriptors, and the items as the other side will see
    them (views of `raw`, scalars)."""
    handles, views = [], []
    for t, offset in zip(tensors, offsets):
        nbytes = t.numel() * t.element_size()
        if nbytes:
            raw[offset : offset + nbytes].copy_(t.detach().contiguous().view(-1).view(torch.uint8))
        handles.append(
            {
                "meta": tensor_meta(t),
                "cuda_ipc_handle": handle,
                "cuda_offset": offset,
                "nbytes": nbytes,
                "device_index": device,
            }
        )
        views.append(raw[offset : offset + nbytes].view(t.dtype).view(t.shape) if nbytes else t)
    # The other side's stream knows nothing of this one: the copies are done before the
    # handles leave (and before the host's clock starts on the call).
    torch.cuda.synchronize(device)
    view_iter = iter(views)
    worker_view = [next(view_iter) if isinstance(x, torch.Tensor) else x for x in items]
    return _merge(items, handles), [], worker_view


class WorkerInputBuffer:
    """The host's side of the worker's input buffer: device memory the worker allocated in its
    own process (RESERVE_INPUTS) and exported by one IPC handle, mapped here once; the host packs
    each call's private copies of the inputs into it, as CudaArena packs them into a buffer of its
    own. The kernel then reads memory local to its process: read through a CUDA IPC mapping, a
    random gather of 27,222 pages over 7.7 GB (problem 03) took 32.5 ms against 3.7 ms from a
    local buffer, in one process on an H100 (benchmarks/parity --diagnose-inputs, 2026-12-05),
    and the judge read a tenth of the published speedup. The mapping's size is read from the
    driver, not from the worker's reply; an older buffer stays mapped until close()."""

    device = "cuda"
    reused = True  # the kernel may keep views of it: Session releases before writing again

    def __init__(self, reserve, device_index: int = 0):
        self._reserve = reserve  # bytes -> the worker's TensorHandle of a buffer that large
        self._cuda = _core.cuda
        self._device = device_index
        self._mapped: list[int] = []  # bases of every buffer mapped here, newest last
        self._handle = b""
        self._base = 0
        self._bytes = 0

    def export(self, items: list) -> tuple[list[dict], list[int], object]:
        tensors, _ = _split(items)
        offsets, total = _packed_offsets(tensors)
        if total > self._bytes or not self._mapped:
            self._map(self._reserve(max(total, 1)), max(total, 1))
        raw = _from_dlpack(self._cuda.device_capsule(self._base, self._bytes, self._device))
        return _pack(items, tensors, offsets, raw, self._handle, self._device)

    def _map(self, handle, wanted: int) -> None:
        key = bytes(handle.cuda_ipc_handle)
        base = self._cuda.ipc_open(key, self._device)
        self._mapped.append(base)
        size = _mapped_bytes(base, int(handle.nbytes))
        if size < wanted:
            raise _core.InvalidArgumentError(
                f"the worker's input buffer has {size} bytes, not the {wanted} reserved"
            )
        self._handle, self._base, self._bytes = key, base, size

    @property
    def nbytes(self) -> int:
        """The judge's input memory (in the worker's process, counted as the judge's)."""
        return self._bytes

    def close(self) -> None:
        for base in self._mapped:
            try:
                self._cuda.ipc_close(base)
            except _core.Error:
                pass  # the worker, and its allocation, may be gone
        self._mapped.clear()
        self._handle, self._base, self._bytes = b"", 0, 0


class CudaTransport:
    """CUDA tensors cross by IPC handle: the receiver maps the sender's allocation, no copy.
    Handles that name one of this process's own buffers (adopt: the worker's input buffer) are
    views of it, with no mapping."""

    device = "cuda"

    def __init__(self):
        if not hasattr(_core, "cuda"):
            raise _core.FailedPreconditionError("metakernelbench was built without CUDA: no GPU judge")
        self._cuda = _core.cuda
        self._opened: dict[bytes, int] = {}
        self._ranges: dict[int, int] = {}  # base of an opened allocation -> bytes seen in it
        self._bounds: dict[int, int] = {}  # base -> the allocation's bytes (the driver's)
        self._own: dict[bytes, int] = {}  # handle of a buffer of this process's -> its base

    def adopt(self, handle: bytes, base: int, nbytes: int) -> None:
        """Handles naming `handle` are views of this process's own buffer at `base`."""
        self._own[bytes(handle)] = base
        self._bounds[base] = nbytes

    def export(self, items: list) -> tuple[list[dict], list[int], object]:
        """Handles of `items` (tensors and Python scalars) in order, no descriptors, and the
        exported allocations to keep alive."""
        tensors, _ = _split(items)
        keep, handles = [], []
        for t in tensors:
            c = t.detach().contiguous()
            nbytes = c.numel() * c.element_size()
            if nbytes and self._imported(c.data_ptr()):
                # An input updated in place and returned: memory this process opened from the
                # host's handle cannot be exported again, so a copy goes back.
                c = c.clone()
            handle, offset = (b"", 0) if nbytes == 0 else self._cuda.ipc_export(c.data_ptr())
            keep.append(c)
            handles.append(
                {
                    "meta": tensor_meta(t),
                    "cuda_ipc_handle": handle,
                    "cuda_offset": offset,
                    "nbytes": nbytes,
                    "device_index": c.device.index or 0,
                }
            )
        return _merge(items, handles), [], keep

    def open(
        self, handles: list, fds: list[int], writable: bool, scalars: bool = False
    ) -> tuple[list, object]:
        """The values of `handles`: tensors mapped by IPC handle, and (with `scalars`, for
        inputs) Python scalars carried by value."""
        for fd in fds:
            _close(fd)
        _refuse_scalars(handles, scalars)
        out = []
        for h in handles:
            if _is_scalar_handle(h):
                out.append(open_scalar(h))
                continue
            meta = h.meta
            dtype = DTYPES[meta.dtype]
            device = h.device_index
            if h.nbytes == 0:
                out.append(torch.empty(list(meta.shape), dtype=dtype, device=f"cuda:{device}"))
                continue
            key = bytes(h.cuda_ipc_handle)
            base = self._own.get(key) or self._opened.get(key)
            if base is None:
                base = self._cuda.ipc_open(key, device)
                self._opened[key] = base
                self._bounds[base] = _mapped_bytes(base, h.cuda_offset + h.nbytes)
            expected = _numel(meta.shape) * torch.empty((), dtype=dtype).element_size()
            if h.nbytes != expected:
                raise _core.InvalidArgumentError("a tensor handle's size does not match its shape")
            if h.cuda_offset < 0 or h.cuda_offset + h.nbytes > self._bounds[base]:
                raise _core.InvalidArgumentError("a tensor handle reaches outside its allocation")
            if key not in self._own:
                self._ranges[base] = max(self._ranges.get(base, 0), h.cuda_offset + h.nbytes)
            raw = _from_dlpack(self._cuda.device_capsule(base + h.cuda_offset, h.nbytes, device))
            out.append(raw.view(dtype).view(list(meta.shape)))
        return out, None

    def _imported(self, ptr: int) -> bool:
        return any(base <= ptr < base + size for base, size in self._ranges.items())

    def close(self):
        for base in self._opened.values():
            self._cuda.ipc_close(base)
        self._opened.clear()
        self._ranges.clear()
        self._bounds.clear()
        self._own.clear()


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _close(fd: int) -> None:
    try:
        _close_fd(fd)
    except OSError:
        pass


class PublishedClock:
    """The published harness's clock, step for step, on a GPU: `torch.cuda.synchronize()`, a start
    event recorded, the call, `torch.cuda.synchronize()`, an end event recorded,
    `torch.cuda.synchronize()`; the events' elapsed time. In three parts, as the kernel's thread
    calls a clock (kernel_thread.cc): start() opens the timed window, stop() closes it (the
    synchronise and the end event), read() -> seconds waits for the end event and reads the
    elapsed time; time(fn) -> (seconds, fn()) is all three around fn.

    The same Python calls as the published method, so the same host time inside the window (torch's
    event and synchronise wrappers; the C++ CallClock reads 7-15 us less per call on the H200,
    benchmarks/README.md). Its functions are bound when it is made, before kernel.py is imported:
    a kernel that replaces torch.cuda.Event's methods afterwards changes nothing read here. What
    those functions look up when they run (torch._C._cuda_synchronize, torch.cuda.current_stream)
    is guarded by the kernel's thread (clock_reach, KernelThread.guard_clock): a change is seen
    before the window closes."""

    def __init__(self, device: int):
        with torch.cuda.device(device):
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)
        self._sync = torch.cuda.synchronize
        self._record = torch.cuda.Event.record
        self._elapsed = torch.cuda.Event.elapsed_time

    def start(self) -> None:
        self._sync()
        self._record(self._start)

    def stop(self) -> None:
        self._sync()
        self._record(self._end)

    def read(self) -> float:
        self._sync()
        return self._elapsed(self._start, self._end) / 1e3

    def time(self, fn):
        """(seconds, fn())."""
        self.start()
        out = fn()
        self.stop()
        return self.read(), out


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python (its attributes can be set)


def harness_reach() -> list[tuple[object, str, bool, object]]:
    """What the worker's own code looks up by name once solve returned (describing, snapshotting
    and exporting the outputs, on the main thread, after the clock stopped), for
    KernelThread.guard_clock: every name torch.Tensor answers, its own or inherited (absent from
    its namespace: one set there would shadow the method the judge calls), and every function,
    class, module and dtype of the torch, torch._C, torch.cuda, torch.utils.dlpack and builtins
    namespaces (their plain data, torch's own flags among it, is not guarded). A red team
    replaced torch.Tensor.detach with a chain of C callables (functools.partial over map objects)
    that computed the answer when the export called it: passed at 4.2x with no finding
    (2026-12-05 evening); another replaced torch.utils.dlpack's global `torch` (11.3x). Now such
    a change is seen when the call returns and again before the reply: runtime.clock_tampered."""
    import builtins

    def guarded(value) -> bool:
        return callable(value) or isinstance(value, (types.ModuleType, torch.dtype))

    entries: list[tuple[object, str, bool, object]] = []
    own = torch.Tensor.__dict__
    for name in dir(torch.Tensor):
        entries.append((torch.Tensor, name, name in own, own.get(name)))
    roots = (torch, torch._C, torch.cuda, torch.utils.dlpack, builtins)
    for module in roots:
        for name, value in list(vars(module).items()):
            if guarded(value):
                entries.append((module, name, True, value))
    # The judge's own modules (this one, the worker's, the DSL entry wrapper's, the C++ core and
    # its CUDA part) and the standard modules whose functions their code calls on the main thread
    # while a call's inputs are opened and its outputs exported (os.fstat, os.close, gc, time):
    # every function, class and module of theirs, and every method of a class the judge defines
    # in Python, guarded as torch's are. A red team replaced os.fstat, which the worker calls
    # opening each call's inputs after the host wrote them, with C callables that computed the
    # answer there (os reached through a function's annotation, which the static audit lost:
    # passed at 65-76x, strict, 2026-12-06). Every other module they hold is an owner whose
    # namespace must keep plain str keys (KernelThread's check walks every owner's), guarded by
    # its __name__.
    import sys

    package = __name__.rsplit(".", 1)[0]
    judge = [sys.modules.get(name) for name in (__name__, package + ".worker", package + ".dsl_entry")]
    judge += [_core, getattr(_core, "cuda", None)]
    seen = {id(module) for module in roots}
    whole = [m for m in judge if isinstance(m, types.ModuleType)]
    for holder in list(whole):
        for value in list(vars(holder).values()):
            if isinstance(value, types.ModuleType) and value.__name__ in _GUARDED_WHOLE:
                whole.append(value)
    for module in whole:
        if id(module) in seen:
            continue
        seen.add(id(module))
        for name, value in list(vars(module).items()):
            if guarded(value):
                entries.append((module, name, True, value))
            # A class defined there (the judge's: any of the package's), read from its own
            # namespace, whose methods can be assigned.
            home = vars(value).get("__module__", "") if isinstance(value, type) else None
            if (
                isinstance(home, str)
                and value.__flags__ & _HEAPTYPE
                and id(value) not in seen
                and (home.startswith("metakernelbench") if module in judge else home == module.__name__)
            ):
                seen.add(id(value))
                for method, member in list(vars(value).items()):
                    if guarded(member) or isinstance(member, (property, classmethod, staticmethod)):
                        entries.append((value, method, True, member))
    for holder in whole:
        for value in list(vars(holder).values()):
            if isinstance(value, types.ModuleType) and id(value) not in seen:
                seen.add(id(value))
                entries.append((value, "__name__", True, vars(value).get("__name__")))
    # sys.modules' entries for the modules guarded whole: an import of one of them is a lookup
    # there (an `import os` in a function body found an object of the kernel's under "os"). Not
    # the judge's own, which the worker takes out of sys.modules before kernel.py's import.
    named: dict[str, types.ModuleType] = {}
    for module in (*roots, *whole):
        module_name = vars(module).get("__name__")
        if isinstance(module_name, str) and not module_name.startswith("metakernelbench"):
            named[module_name] = module
    for module_name, module in named.items():
        if sys.modules.get(module_name) is module:
            entries.append((sys.modules, module_name, True, module))
    # The refusing `node` the worker gives torch's symbolic scalars
    # (worker._refuse_symbolic_scalars): one deleted or replaced is seen too.
    for cls in (torch.SymInt, torch.SymFloat, torch.SymBool):
        entries.append((cls, "node", "node" in vars(cls), vars(cls).get("node")))
    # torch.nn.Module's __getattr__, which refuses members under dunder names
    # (worker._refuse_module_dunder_members).
    entries.append((torch.nn.Module, "__getattr__", True, vars(torch.nn.Module).get("__getattr__")))
    # And the refusing hooks of the tensor subclasses driven by writable tables
    # (worker._UNAUDITED_REACH).
    for module_name, class_name, hooks in TABLE_DRIVEN_TENSOR_HOOKS:
        owner = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(owner, type):
            for hook in hooks:
                entries.append((owner, hook, hook in vars(owner), vars(owner).get(hook)))
    return entries


# torch's tensor subclasses whose Python hooks call an entry of a table any code can write, by
# module and class: the hooks named refuse in the worker (worker._UNAUDITED_REACH)
# and are guarded (harness_reach).
TABLE_DRIVEN_TENSOR_HOOKS = (
    ("torch.masked.maskedtensor.core", "MaskedTensor", ("__torch_function__", "__torch_dispatch__")),
    ("torch.sparse.semi_structured", "SparseSemiStructuredTensor", ("__torch_dispatch__",)),
)

# Standard modules guarded whole when a judge module holds them (harness_reach).
_GUARDED_WHOLE = frozenset({"os", "posix", "gc", "time", "types", "functools", "operator"})
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class whose namespace can be assigned


def clock_reach(clock) -> list[tuple[object, str, bool, object]]:
    """What a clock in parts looks up by name when it runs, for KernelThread.guard_clock: entries
    (owner, name, present, value). One start / stop / read is traced (a profile function on this
    thread, before kernel.py is imported); each Python function it runs gives the names its code
    uses (co_names: its globals and the attributes it reads) and its module. Guarded, for those
    names: the modules the clock's functions live in, builtins, every module and class such a name
    holds there (torch -> torch.cuda -> torch.cuda.Event, to a fixpoint), and every class a method
    it ran belongs to, with its bases. A global absent from a module's namespace (a builtin, found
    in builtins) is guarded as absent; each class's namespace is guarded whole (the special
    methods `with` and calls look up appear in no co_names), and a name it inherits as absent.

    So a kernel that replaces torch._C._cuda_synchronize, torch.cuda.current_stream or
    torch.cuda.device.__enter__, shadows a builtin in torch.cuda, or assigns a module's
    __class__, is seen before the clock's window closes, whatever route (the static audit's
    blind spots included) it took."""
    import builtins
    import sys
    import types

    codes: dict[int, types.CodeType] = {}
    owners: dict[int, object] = {}  # modules (or a globals dict of none) and classes
    global_owners: set[int] = set()

    def add_class(cls: type) -> None:
        for k in cls.__mro__:
            if k.__flags__ & _HEAPTYPE:
                owners.setdefault(id(k), k)

    def profile(frame, event, arg) -> None:
        if event != "call":
            return
        code = frame.f_code
        codes.setdefault(id(code), code)
        module = sys.modules.get(frame.f_globals.get("__name__", ""))
        owner = module if module is not None and vars(module) is frame.f_globals else frame.f_globals
        owners.setdefault(id(owner), owner)
        global_owners.add(id(owner))
        for local in code.co_varnames[: code.co_argcount][:1]:  # a method's self or cls
            if local in ("self", "cls"):
                obj = frame.f_locals.get(local)
                add_class(obj if local == "cls" and isinstance(obj, type) else type(obj))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        clock.start()
        clock.stop()
        if hasattr(clock, "read"):  # a clock whose stop returns the seconds has none (KernelThread)
            clock.read()
    finally:
        sys.setprofile(previous)
    if not codes:
        return []  # a clock of C functions only: nothing it looks up by name
    names = set().union(*(code.co_names for code in codes.values()))
    owners.setdefault(id(builtins), builtins)
    queue = list(owners.values())
    while queue:  # modules and classes the names hold, to a fixpoint
        namespace = queue.pop()
        held: Mapping[str, object] = namespace if isinstance(namespace, dict) else vars(namespace)
        for name in names & held.keys():
            value = held[name]
            if isinstance(value, types.ModuleType) and id(value) not in owners:
                owners[id(value)] = value
                queue.append(value)
            elif isinstance(value, type):
                before = set(owners)
                add_class(value)
                queue.extend(owners[k] for k in owners.keys() - before)
    entries: list[tuple[object, str, bool, object]] = []
    in_builtins = vars(builtins)
    for key, owner in owners.items():
        if isinstance(owner, type):
            held = owner.__dict__
            inherited = {n for n in names if any(n in k.__dict__ for k in owner.__mro__)}
            entries += [(owner, n, True, v) for n, v in held.items()]
            entries += [(owner, n, False, None) for n in sorted(inherited - held.keys())]
            continue
        held = owner if isinstance(owner, dict) else vars(owner)
        entries += [(owner, n, True, held[n]) for n in sorted(names & held.keys())]
        if key in global_owners and owner is not builtins:
            shadowed = (names & in_builtins.keys()) - held.keys()
            entries += [(owner, n, False, None) for n in sorted(shadowed)]
    return entries
