# GPU: a raw CUDA kernel (CuPy) that writes through a null pointer: an illegal address.
import cupy
import torch

_kernel = cupy.RawKernel(r"""
extern "C" __global__ void poke(float* p) { p[threadIdx.x] = 1.0f; }
""", "poke")


def solve(x, residual, weight):
    _kernel((1,), (32,), (cupy.uint64(0),))
    return torch.zeros_like(x), torch.zeros_like(residual)
