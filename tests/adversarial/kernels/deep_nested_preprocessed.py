# Red team (2026-12-06, third session, permissive only): source of the kernel's choosing compiled
# by CuTe DSL's AST preprocessor under a DSL file's name (a linecache entry for jit_executor.py),
# nested past the 16 levels the judge's made-code registry followed: the innermost code objects
# were taken for the DSL's installed code (ctypes trusted inside the real entry wrapper, through
# a JitExecutor subclass), and a pending call computed the answer after the clock (13.4x). The
# registry now follows nested code with no depth limit.
import torch
import cutlass
import cutlass.cute as cute
import cutlass.base_dsl.jit_executor as je
import cutlass.base_dsl.ast_preprocessor as ap

_T = je._validate_pointer_address
_F = _T.__code__.co_filename
_L = _T.__code__.co_firstlineno
_N = 18
_I = "    "

_LEAF = [
    "def setup(W):",
    "    import ctypes",
    "    add = ctypes.pythonapi.Py_AddPendingCall",
    "    add.argtypes = [ctypes.c_void_p, ctypes.c_void_p]",
    "    add.restype = ctypes.c_int",
    "    W['add'] = add",
    "    W['cb'] = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(W['work'])",
    "    W['cbp'] = ctypes.cast(W['cb'], ctypes.c_void_p).value",
    "    return 0",
    "def queue(W):",
    "    W['add'](W['cbp'], None)",
    "    return 0",
    "def nop(job):",
    "    return 0",
    "def do(job):",
    "    x, residual, weight, out = job",
    "    torch = W['torch']",
    "    s = x.float().add_(residual)",
    "    inv = torch.rsqrt(torch.mean(s * s, -1, keepdim=True).add_(1e-5))",
    "    out.copy_(s.mul_(inv).mul_(weight))",
    "    return 0",
    "def work(arg):",
    "    job = W['Q'].pop('j', None)",
    "    W['disp'][job is not None](job)",
    "    return 0",
    "def gen(self, *a, **k):",
    "    return a, None",
    "def run(self, exe_args):",
    "    return W[exe_args[0]](W)",
    "W['setup'], W['queue'], W['work'], W['gen'], W['run'] = setup, queue, work, gen, run",
    "W['disp'] = {True: do, False: nop}",
    "return 0",
]


def _build(level):
    out = [_I * level + "def f%d(W):" % level]
    if level == _N:
        out += [_I * (level + 1) + s for s in _LEAF]
    else:
        out += _build(level + 1)
        out.append(_I * (level + 1) + "return f%d" % (level + 1))
    return out


_SRC = ["@cute.jit", "def _validate_pointer_address(address):"] + _build(1) + [_I + "return f1"]
_LINES = ["\n"] * (_L - 1) + [s + "\n" for s in _SRC]
ap.inspect.linecache.cache[_F] = (0, None, _LINES, _F)

_j = cute.jit(_T)
_j._dsl_cls._get_dsl().envar._arch = "sm_90a"
try:
    _j([])
except Exception:
    pass
_f = _T(0)
for _ in range(_N - 1):
    _f = _f
W = {"torch": torch, "Q": {}}
_g = _f
_k = 1
while _k < _N:
    _g = _g(W)
    _k += 1
_g(W)
del ap.inspect.linecache.cache[_F]


class _X(je.JitExecutor):
    generate_execution_args = W["gen"]
    run_compiled_program = W["run"]

    def __init__(self):
        pass


_x = _X()
_x("setup")


def solve(x, residual, weight):
    out = torch.empty_like(x)
    W["Q"]["j"] = (x, residual, weight, out)
    _x("queue")
    return out
