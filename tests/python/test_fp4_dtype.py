"""Packed FP4 (torch.float4_e2m1fn_x2) as an input dtype (issue 17): the NVFP4 problems pass their
e2m1 values packed two to a byte. The data model names it, the judge's CPU transport carries it
byte for byte, the anchor run leaves it as it is (it is not upcast), and an output may not be
packed FP4 (the loader's check is tested in tests/cpp/validation_test.cc)."""

import torch
from metakernelbench import _core
from metakernelbench.judge import values

FP4 = torch.float4_e2m1fn_x2


def _packed(rows: int, cols: int) -> torch.Tensor:
    return torch.randint(0, 256, (rows, cols), dtype=torch.uint8).view(FP4)


def test_the_data_model_names_packed_fp4_as_torch_does():
    assert values.DTYPES["float4_e2m1fn_x2"] is FP4
    assert values.dtype_name(_packed(2, 3)) == "float4_e2m1fn_x2"


def test_the_cpu_transport_carries_packed_fp4_byte_for_byte():
    transport = values.CpuTransport()
    codes = _packed(4, 6)
    scales = torch.randn(4, 3).to(torch.float8_e4m3fn)
    handles, fds, holder = transport.export([codes, scales, 0.25])
    request = _core.message("WorkerRequest", {"op": "call", "id": 1, "inputs": handles})
    opened, _keep = transport.open(list(request.inputs), fds, writable=False, scalars=True)
    assert opened[0].dtype == FP4 and opened[0].shape == codes.shape
    assert torch.equal(opened[0].view(torch.uint8), codes.view(torch.uint8))
    assert torch.equal(opened[1].view(torch.uint8), scales.view(torch.uint8))
    assert opened[2] == 0.25
    view = transport.views(holder, [codes, scales, 0.25])
    assert view[0].dtype == FP4 and torch.equal(view[0].view(torch.uint8), codes.view(torch.uint8))


def test_the_anchor_run_does_not_upcast_packed_fp4():
    codes = _packed(2, 8)
    anchor = values.upcast([codes, torch.ones(2, dtype=torch.bfloat16)])
    assert anchor[0].dtype == FP4 and anchor[1].dtype == torch.float64
    assert torch.equal(anchor[0].view(torch.uint8), codes.view(torch.uint8))
    assert anchor[0].data_ptr() != codes.data_ptr()  # a copy, as for every other input


def test_inputs_are_compared_bit_for_bit_whatever_their_dtype():
    codes = _packed(3, 4)
    assert values.same_bits(codes, codes.clone())
    touched = codes.clone()
    touched.view(torch.uint8)[1, 2] ^= 0x10  # one e2m1 value changed
    assert not values.same_bits(codes, touched)
    assert not values.same_bits(codes, codes.view(torch.uint8))  # same bytes, another dtype
    assert not values.same_bits(codes, _packed(4, 3))
