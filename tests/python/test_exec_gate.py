"""The worker's gate on native code made at run time (_core.arm_exec_gate, with the replacements
of every loaded object's mmap / mprotect that _core.hold_sequence_items installs): once armed,
memory is made executable only inside a checked compile of the DSL's (_core.checked_compile),
for the DSL entry call it runs in and the DSL's own frames.

Found in the fourteenth session: with the static rules waived, a kernel replaced CuTe DSL's
checked Compiler.compile for one compile by its own, which ran the DSL's pass pipeline itself,
and the @cute.jit host code it compiled stored anywhere (passed at 0.71x on the CPU judge; case
cute_compile_reimplemented_permissive, refused now where LLVM's JIT makes its page executable).
Here Python's mmap module (loaded after the hold, so held through the interpreter's dlopen)
stands for any library that makes memory executable: allowed before the gate is armed and after
it is disarmed, refused (EACCES) while it is armed outside an approved compile; and a library
loaded by path from a memfd (the red team's own shared object through TVM-FFI's loader, passed
permissive, fourteenth session) is refused while an installed one loads. Each run is a fresh
interpreter: the hold and the gate are process-wide.
"""

import json
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent(
    """
    import errno, json, mmap
    from metakernelbench import _core
    _core.hold_sequence_items()

    def executable(prot):
        try:
            mmap.mmap(-1, 4096, prot=prot).close()
            return "mapped"
        except OSError as error:
            return errno.errorcode.get(error.errno, str(error.errno))

    rx = mmap.PROT_READ | mmap.PROT_EXEC
    out = {"before": executable(rx)}
    _core.arm_exec_gate()
    out["armed"] = executable(rx)
    out["armed_not_executable"] = executable(mmap.PROT_READ | mmap.PROT_WRITE)
    # A checked compile with no DSL entry call around it (no runtime audit here, so no entry
    # wrapper known) approves nothing: the memory its original makes is refused too.
    made = []
    def original():
        made.append(executable(rx))
        return "built"
    checked = _core.checked_compile(original, lambda args, kwargs: ([], ["cuda"]), "tirx")
    out["checked_outside_an_entry"] = [checked(), made]
    _core.arm_exec_gate(False)
    out["disarmed"] = executable(rx)

    # A library loaded by path: an installed one, or a copy of it in a memfd (what a kernel could
    # write; the red team loaded its own through TVM-FFI's loader).
    import ctypes, ctypes.util, os
    system = os.path.realpath("/lib/x86_64-linux-gnu/libm.so.6") if os.path.exists(
        "/lib/x86_64-linux-gnu/libm.so.6") else os.path.realpath(ctypes.util.find_library("m") or "")
    fd = os.memfd_create("copy")
    with open(system, "rb") as source:
        os.write(fd, source.read())
    copy = "/proc/self/fd/%d" % fd

    def load(path):
        try:
            ctypes.CDLL(path)
            return "loaded"
        except OSError:
            return "refused"

    out["memfd_unarmed"] = load(copy)
    _core.arm_exec_gate()
    out["memfd_armed"] = load(copy)
    out["installed_armed"] = load(system)
    _core.arm_exec_gate(False)
    print("@@" + json.dumps(out))
    """
)


def test_armed_the_gate_refuses_executable_memory_outside_a_checked_compile():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("@@")]
    assert lines, done.stderr[-3000:]
    out = json.loads(lines[0][2:])
    assert out["before"] == "mapped"  # without the gate the mapping is made
    assert out["armed"] == "EACCES"
    assert out["armed_not_executable"] == "mapped"  # only executable memory is gated
    assert out["checked_outside_an_entry"] == ["built", ["EACCES"]]
    assert out["disarmed"] == "mapped"
    # A library by path: installed and read-only loads, a memfd does not (armed).
    assert out["memfd_unarmed"] == "loaded"
    assert out["memfd_armed"] == "refused"
    assert out["installed_armed"] == "loaded"


FFI_PROBE = textwrap.dedent(
    """
    import json
    from metakernelbench import toolchains
    toolchains.activate(toolchains.site_dirs("tirx"))
    import torch, tvm, tvm_ffi
    from cuda.bindings.driver import CUstream
    from metakernelbench import _core
    _core.hold_sequence_items()

    seven = tvm.runtime.from_dlpack(torch.tensor([7], dtype=torch.int64))
    cell = torch.zeros(4, dtype=torch.int64)

    def attempt(step):
        try:
            step()
            return "ran"
        except Exception as error:
            return "refused" if "blocked by the judge" in str(error) else repr(error)[:200]

    def raw_write():
        cell.zero_()
        # the red team's route: a stream object made from an integer is an opaque pointer
        tvm.runtime._ffi_api.TVMTensorCopyToBytes(seven, CUstream(cell.data_ptr() + 8), 8)

    def extern_c():
        tvm_ffi.Function.__from_extern_c__(id(torch))

    def setter():
        tvm_ffi.get_global_func("ffi.MakeFieldSetter")(0, 0, 0)

    callback = lambda n: n + 1
    out = {"unarmed": [attempt(raw_write), int(cell[1]), attempt(extern_c), attempt(setter)]}
    _core.arm_exec_gate()
    out["armed"] = [attempt(raw_write), int(cell[1]), attempt(extern_c), attempt(setter)]
    out["armed_callback"] = tvm_ffi.convert(callback)(41)
    _core.arm_exec_gate(False)
    print("@@" + json.dumps(out))
    """
)


def test_armed_the_gate_refuses_tvm_ffi_raw_addresses_outside_the_dsl():
    """The gate on TVM-FFI's C API (sequence_hold.cc: every object's TVMFFIFunctionCall and
    TVMFFIFunctionCreate): unarmed, a kernel's stream object made from an integer took
    TVMTensorCopyToBytes's write to any address (the red team's fourteenth-session route), and a
    function was made from any address or by the registry's raw-address setter maker; armed,
    with no DSL entry call around them, each is refused, while a Python callback still converts
    and runs."""
    from metakernelbench import toolchains

    if not toolchains.toolchain("tirx").installed:
        pytest.skip("needs the tirx toolchain: mkb dsl install --dsl tirx")
    done = subprocess.run([sys.executable, "-c", FFI_PROBE], capture_output=True, text=True, timeout=180)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("@@")]
    assert lines, done.stderr[-3000:]
    out = json.loads(lines[0][2:])
    assert out["unarmed"] == ["ran", 7, "ran", "ran"]  # without the gate, the write lands
    assert out["armed"] == ["refused", 0, "refused", "refused"]
    assert out["armed_callback"] == 42


REACH_PROBE = textwrap.dedent(
    """
    import json
    from metakernelbench import _core

    class Options:
        def __init__(self, level):
            self.level = level

    class Compiler:
        default = None
        def jit(self, module):
            return module

    class Dsl:
        pass

    dsl = Dsl()
    dsl.compiler = Compiler()
    dsl.options = Options(2)
    dsl.step = len
    _core.freeze_dsl_reach([
        (dsl, "dsl", ["compiler", "options", "step"]),
        (dsl.compiler, "dsl.compiler", []),
    ])
    out = {}

    def check(name, change, undo):
        change()
        out[name] = _core.dsl_reach_changed()
        undo()

    # The DSL's own per-compile state: data, class defaults, callables the class does not define,
    # its options made anew.
    check("data", lambda: setattr(dsl, "cache", {1: 2}), lambda: delattr(dsl, "cache"))
    undo = lambda: delattr(dsl.compiler, "default")
    check("default", lambda: setattr(dsl.compiler, "default", 3), undo)
    check("state_callable", lambda: setattr(dsl, "body", len), lambda: delattr(dsl, "body"))
    old = dsl.options
    check("options_anew", lambda: setattr(dsl, "options", Options(3)), lambda: setattr(dsl, "options", old))
    # A kernel's: a method shadowed (by a C callable too), a step or object swapped, the class.
    check("method", lambda: setattr(dsl.compiler, "jit", print), lambda: delattr(dsl.compiler, "jit"))
    check("step", lambda: setattr(dsl, "step", print), lambda: setattr(dsl, "step", len))
    bad = Options(3)
    bad.hook = print
    check("options_with_callable", lambda: setattr(dsl, "options", bad), lambda: setattr(dsl, "options", old))
    compiler = dsl.compiler
    restore = lambda: setattr(dsl, "compiler", compiler)
    check("other_class", lambda: setattr(dsl, "compiler", Options(1)), restore)
    class Other(Compiler):
        pass
    back = lambda: setattr(compiler, "__class__", Compiler)
    check("class", lambda: setattr(compiler, "__class__", Other), back)
    out["after"] = _core.dsl_reach_changed()
    print("@@" + json.dumps(out))
    """
)


def test_the_dsls_objects_keep_their_steps_and_methods():
    """freeze_dsl_reach's instances (the fourteenth session's residual: the red team's descriptor
    moved from CuTe DSL's frozen Compiler class to an instance attribute of its compiler object,
    0.62x permissive with the host store landing; case cute_jit_instance_inject_permissive): the
    DSL's own per-compile state may change, a method shadowed or a step swapped may not."""
    done = subprocess.run([sys.executable, "-c", REACH_PROBE], capture_output=True, text=True, timeout=120)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("@@")]
    assert lines, done.stderr[-3000:]
    out = json.loads(lines[0][2:])
    for allowed in ("data", "default", "state_callable", "options_anew", "after"):
        assert out[allowed] == "", (allowed, out[allowed])
    assert "jit set over its class's" in out["method"]
    for refused in ("step", "options_with_callable", "other_class"):
        assert "replaced" in out[refused], (refused, out[refused])
    assert "class replaced" in out["class"]
