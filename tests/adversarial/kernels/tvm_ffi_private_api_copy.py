# Attack (fifteenth session, the red team's fourteenth-session route without init_ffi_api): the
# registry's TVMTensorCopyToBytes, reached as an attribute of TVM's runtime API module (no look-up
# by name), wrote 8 bytes at any address given as a CUstream made from an integer. Refused
# statically (the DSL's private internals); with the static rules waived, at run time: an opaque
# pointer reaches only a TVM-FFI function a checked compile made.
import torch
import tvm
from cuda.bindings.driver import CUstream as _Addr

_SEVEN = torch.tensor([7], dtype=torch.int64)
_SRC = tvm.runtime.from_dlpack(_SEVEN)
_CELL = torch.zeros(4, dtype=torch.int64)


def solve(x, residual, weight):
    _CELL.zero_()
    tvm.runtime._ffi_api.TVMTensorCopyToBytes(_SRC, _Addr(_CELL.data_ptr() + 8), 8)
    if int(_CELL[1]) != 7:
        raise RuntimeError("the raw write did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
