# GPU: captures the computation in a CUDA Graph once and replays it on every call.
import torch

_state = {}


def _compute(hidden_states, residual, weight):
    s = hidden_states.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(hidden_states.dtype)


def solve(hidden_states, residual, weight):
    if "graph" not in _state:
        static = [hidden_states.clone(), residual.clone(), weight.clone()]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            _compute(*static)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            output = _compute(*static)
        _state.update(graph=graph, static=static, output=output)
    for buffer, value in zip(_state["static"], (hidden_states, residual, weight)):
        buffer.copy_(value)
    _state["graph"].replay()
    return _state["output"].clone()
