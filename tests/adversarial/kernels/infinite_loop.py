# Never returns.
def solve(x, residual, weight):
    while True:
        pass
