# A wrong kernel whose exception text holds a lone surrogate (what surrogateescape makes of an
# undecodable byte): UTF-8 cannot encode it, so the worker's reply could not be built and the
# worker died (a crash verdict) instead of reporting the exception.
def solve(hidden_states, residual, weight):
    raise ValueError("undecodable \udcff byte")
