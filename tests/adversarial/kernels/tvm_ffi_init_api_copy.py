# Attack (red team, fourteenth session, round 3, against dcbe85f; passed strict at 0.64-0.88x):
# tvm_ffi.init_ffi_api("runtime", __name__) installed every runtime.* FFI function as a global of
# kernel.py (no get_global_func in its source), and TVMTensorCopyToBytes copied to any address
# given as a CUstream made from an integer. Now refused statically (init_ffi_api); with the static
# rules waived, at run time (fifteenth session: the gate on TVM-FFI's C API refuses an opaque
# pointer to a function no checked compile made).
import numpy as np
import torch
import tvm
import tvm_ffi


from cuda.bindings.driver import CUstream as _Addr


tvm_ffi.init_ffi_api("runtime", __name__)
_SEVEN = torch.tensor([7], dtype=torch.int64)
_SRC = tvm.runtime.from_dlpack(_SEVEN)
_CELL = torch.zeros(4, dtype=torch.int64)


def solve(x, residual, weight):
    _CELL.zero_()
    TVMTensorCopyToBytes(_SRC, _Addr(_CELL.data_ptr() + 8), 8)
    if int(_CELL[1]) != 7:
        raise RuntimeError("the raw write did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
