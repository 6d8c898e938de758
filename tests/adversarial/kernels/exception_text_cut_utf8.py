# A wrong kernel whose exception message puts a two-byte character across the judge's 300-byte
# cut of the verdict message ("ValueError: x" + e-acute...): a byte cut there is no UTF-8, the
# verdict could not be serialised, and the exception became the judge's error (exit 2).
def solve(hidden_states, residual, weight):
    raise ValueError("x" + "\u00e9" * 400)
