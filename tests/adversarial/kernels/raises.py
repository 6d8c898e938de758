# Raises inside solve.
def solve(x, residual, weight):
    raise ValueError("shape bookkeeping went wrong")
