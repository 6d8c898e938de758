# Returns its inputs.
def solve(x, residual, weight):
    return x
