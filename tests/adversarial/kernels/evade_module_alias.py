# A forbidden module reached through another module's attribute of another name: enum holds
# builtins as `enum.bltns`, torch.cuda.tunable holds multiprocessing as `mp`. No rule names
# either path; the static audit now checks a path through such an alias as the module's own
# (the host lists them from its loaded modules by identity), and exec is refused at run time
# whoever raises it.
import enum

import torch


def solve(x, residual, weight):
    enum.bltns.exec("_ = 1")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
