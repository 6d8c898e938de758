# torch.from_file as torch._VF holds it (the _VariableFunctions class's static method, which
# torch.from_file is a copy of), by a name built at run time: a file torch opens in C++, read
# past the runtime audit's file rule unless the method is refused where the class defines it.
import torch

PATH = "/etc/os-release"


def solve(x, residual, weight):
    from_file = getattr(torch._VF, "from" + "_file")
    t = from_file(PATH, False, 64, dtype=torch.uint8)
    raise RuntimeError("read past the audit: " + repr(bytes(t.tolist())))
