# A refused open() of a bytes path that is not UTF-8 (numpy.load opens it with Python's open):
# the runtime audit hook built its finding (a py::dict of std::string message and evidence) from
# the raw bytes, so the finding could not be made, the kernel saw UnicodeDecodeError instead of
# PermissionError, and no violation was recorded. (The red team's numpy.fromregex version never
# opens: urllib decodes the path first and raises UnicodeDecodeError itself.)
import numpy
import torch

try:
    numpy.load(b"/nonexistent/\xff\xfe")
except BaseException as e:
    print("caught", type(e).__name__)


def solve(hidden_states, residual, weight):
    s = hidden_states.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(hidden_states.dtype)
