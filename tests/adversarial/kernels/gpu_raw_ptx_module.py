"""Problem 36 on a kernel that is not the DSL's: PTX loaded and launched through the CUDA driver
bindings (cuda.bindings.driver), with CuTe DSL imported for show. A module the DSL's runtime
did not load is a policy violation (runtime.raw_module), whatever its kernel computes."""

import cuda.bindings.driver as driver
import cutlass.cute as cute  # noqa: F401  (imported, never used)
import numpy as np
import torch

_PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry rms_rows(.param .u64 out) { ret; }
"""
_FUNCTION = None


def _function():
    global _FUNCTION
    if _FUNCTION is None:
        _, module = driver.cuModuleLoadData(_PTX)
        _, _FUNCTION = driver.cuModuleGetFunction(module, b"rms_rows")
    return _FUNCTION


def solve(hidden_states, weight):
    x = hidden_states.float()
    out = (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()).to(hidden_states.dtype)
    arg = np.array([out.data_ptr()], dtype=np.uint64)
    args = np.array([arg.ctypes.data], dtype=np.uint64)
    stream = torch.cuda.current_stream().cuda_stream
    driver.cuLaunchKernel(_function(), 1, 1, 1, 1, 1, 1, 0, stream, args.ctypes.data, 0)
    return out
