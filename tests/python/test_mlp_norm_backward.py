"""The backward problems of mlp_norm (34, 35, 37, 38, 43) take saved activations, as the
published recipes pose them. Given the activations of a real forward pass, each reference must
return what autograd returns for that forward (in float64, where the references' roundings to
the input dtype are no-ops)."""

import math

import metakernelbench as mkb
import pytest
import torch
import torch.nn.functional as F

SUITE = {problem.number: problem for problem in mkb.load_suite()}
F64 = torch.float64


def _randn(*shape, scale=1.0):
    return (torch.randn(*shape, dtype=F64) * scale).requires_grad_()


def _close(ours, theirs):
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(5)


def test_34_swiglu_backward_from_saved_activations_equals_autograd():
    x, w_gate, w_up, w_down = _randn(2, 3, 8), _randn(12, 8), _randn(12, 8), _randn(8, 12)
    gate, up = x @ w_gate.t(), x @ w_up.t()
    silu_gate = F.silu(gate)
    y = (silu_gate * up) @ w_down.t()
    dy = torch.randn_like(y)
    y.backward(dy)
    saved = [t.detach() for t in (x, gate, up, silu_gate)]
    ours = SUITE[34].reference(dy, *saved, w_gate.detach(), w_up.detach(), w_down.detach())
    _close(ours, (x.grad, w_gate.grad, w_up.grad, w_down.grad))


def test_35_post_ln_ffn_backward_from_saved_activations_equals_autograd():
    eps = 1e-12
    x, w1, w2 = _randn(2, 3, 8), _randn(16, 8, scale=8**-0.5), _randn(8, 16, scale=16**-0.5)
    b1, b2 = _randn(16, scale=0.0), _randn(8, scale=0.0)  # zero biases: their gradients still flow
    ln_weight, ln_bias = _randn(8, scale=0.1), _randn(8, scale=0.1)
    fc1 = x @ w1.t() + b1
    gelu = F.gelu(fc1, approximate="tanh")
    residual = x + gelu @ w2.t() + b2
    y = F.layer_norm(residual, (8,), ln_weight, ln_bias, eps=eps)
    dy = torch.randn_like(y)
    y.backward(dy)
    var = residual.detach().var(dim=-1, keepdim=True, unbiased=False)
    normalized = (residual.detach() - residual.detach().mean(dim=-1, keepdim=True)) / torch.sqrt(var + eps)
    ours = SUITE[35].reference(
        dy,
        x.detach(),
        w1.detach(),
        fc1.detach(),
        gelu.detach(),
        w2.detach(),
        normalized,
        var,
        ln_weight.detach(),
        eps,
    )
    _close(ours, (x.grad, w1.grad, b1.grad, w2.grad, b2.grad, ln_weight.grad, ln_bias.grad))


def test_37_gelu_mlp_backward_from_saved_activations_equals_autograd():
    x, w1, w2 = _randn(2, 3, 8), _randn(32, 8, scale=8**-0.5), _randn(8, 32, scale=32**-0.5)
    b1, b2 = _randn(32), _randn(8)
    fc1 = x @ w1.t() + b1
    gelu = F.gelu(fc1, approximate="tanh")
    y = gelu @ w2.t() + b2
    dy = torch.randn_like(y)
    y.backward(dy)
    ours = SUITE[37].reference(dy, x.detach(), w1.detach(), w2.detach(), fc1.detach(), gelu.detach())
    _close(ours, (x.grad, w1.grad, b1.grad, w2.grad, b2.grad))


def test_38_rmsnorm_backward_from_saved_statistics_equals_autograd():
    # s = hidden + residual; y = weight * s * rstd(s): the gradient of s reaches both addends.
    hidden, residual, weight = _randn(2, 5, 16), _randn(2, 5, 16), _randn(16)
    s = hidden + residual
    rstd = torch.rsqrt(s.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
    y = weight * (s * rstd)
    dy = torch.randn_like(y)
    y.backward(dy)
    ours = SUITE[38].reference(dy, (s * rstd).detach(), rstd.detach(), weight.detach())
    _close(ours, (hidden.grad, residual.grad, weight.grad))


def test_43_embedding_rmsnorm_backward_from_saved_statistics_equals_autograd():
    vocab = SUITE[43].module.VOCAB  # the problem's vocabulary is a constant of the problem
    table, weight = _randn(vocab, 8), _randn(8)
    ids = torch.tensor([[0, 5, 5, 9], [vocab - 1, 5, 0, 3]])  # repeated ids, id 0 included
    e = F.embedding(ids, table)
    rstd = torch.rsqrt(e.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
    y = weight * (e * rstd)
    dy = torch.randn_like(y)
    y.backward(dy)
    ours = SUITE[43].reference(dy, ids, e.detach(), rstd.detach(), weight.detach())
    _close(ours, (table.grad, weight.grad))


def test_backward_references_use_the_saved_activations_as_given():
    # 34 and 37 draw their saved activations independently, as the published ones do: a
    # reference that recomputed them from the other inputs would not notice a changed one.
    problem = SUITE[37]
    inputs = problem.make_inputs("small", seed=3)
    base = problem.reference(*inputs)
    inputs[-1] = inputs[-1] * 2.0  # gelu_output feeds grad_fc2_weight
    assert not torch.equal(problem.reference(*inputs)[3], base[3])
    problem = SUITE[34]
    inputs = problem.make_inputs("small", seed=3)
    base = problem.reference(*inputs)
    inputs[4] = -inputs[4]  # silu_gate feeds grad_w_down and grad_w_up
    changed = problem.reference(*inputs)
    assert not torch.equal(changed[3], base[3]) and not torch.equal(changed[2], base[2])
    assert math.isfinite(float(changed[0].float().abs().max()))
