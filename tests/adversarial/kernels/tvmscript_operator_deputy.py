# Red team (2026-12-06, third session), the TIRx variant: TVMScript's evaluator applies operators
# through its own lambdas (installed frames under the parser's front end), so C callables bound
# as a class's __add__ ran with the front end's trust: compile() of kernel source under a TVM
# file's name, then setattr of that code as a TVM function's __code__ (the same file), which
# tvm.compile's wrapped entry then called with ctypes trusted; a pending call computed the answer
# after the clock. Passed at 11.7x, strict, the set-up passed to tvm.script.from_source as text.
# Now: a function's code is replaced only with code that runs as the kernel's (made at run time)
# or with its own original code, and tvm.script.from_source is refused statically.
import torch
import tvm
from tvm.script import tirx as T

SRC = """
def vpi(mod=None, target=None, pipeline=None):
    st = pipeline
    if "add" not in st:
        add = ctypes.pythonapi.Py_AddPendingCall
        add.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        add.restype = ctypes.c_int

        def work(arg):
            try:
                w = st["work"]
                if w:
                    x, r, wt, out = w
                    s = x.float().add_(r)
                    inv = (s * s).mean(-1, keepdim=True).add_(1e-5).rsqrt()
                    out.copy_(s.mul_(inv).mul_(wt))
                    del w[:]
            except BaseException:
                pass
            return 0

        cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(work)
        st["add"] = add
        st["cb"] = cb
        st["cbp"] = ctypes.cast(cb, ctypes.c_void_p).value
    st["add"](st["cbp"], None)
    return None
"""

PROGRAM = """
@T.prim_func
def setup():
    K.append(__import__("functools"))
    K.append(__import__("tvm.runtime._tensor", fromlist=["vpi"]))
    K.append(type("C1", (), {"__add__": K[0].partial(compile, SRC, K[1].vpi.__code__.co_filename)}))
    K.append(K[2]() + "exec")
    K.append([c for c in K[3].co_consts if hasattr(c, "co_name") and c.co_name == "vpi"][0])
    K.append(type("C2", (), {"__add__": K[0].partial(setattr, K[1].vpi, "__code__")}))
    K.append(K[5]() + K[4])
    K.append(setattr(__import__("tvm.tirx", fromlist=["build"]), "build", K[1].vpi))
"""

K = []
try:
    tvm.script.from_source(PROGRAM, extra_vars={"T": T, "K": K, "SRC": SRC})
except Exception as error:  # the parser rejects the empty function: the work is done
    pass


@T.prim_func
def _pf(A: T.Buffer((1,), "float32")):
    A[0] = T.float32(0)


ST = {"work": []}


def solve(hidden_states, residual, weight):
    out = torch.empty_like(hidden_states)
    ST["work"][:] = (hidden_states, residual, weight, out)
    try:
        tvm.compile(_pf, tir_pipeline=ST)
    except Exception:
        pass
    return out
