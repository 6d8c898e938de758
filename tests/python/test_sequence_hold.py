"""The worker's hold on the items of lists that compiled code walks by borrowed pointer
(worker._hold_sequence_items, _core.hold_sequence_items): every loaded object's PySequence_Fast
returns a tuple of a list's items, and so does each object the interpreter loads afterwards.

Without the hold, numpy's array coercion walks a list's item array while it asks each item for its
length; an item whose __len__ empties the list frees the items numpy reads next (raw memory in
strict mode: tests/adversarial cases numpy_coerce_len_uaf*, weakvaluedict_len_mapped_get). The
probe counts the references to the next item right after the list was emptied (one more with the
hold: the tuple's), keeping one of its own so that nothing is freed in either mode. Each run is a
fresh interpreter, since the hold is process-wide.

torch's own walks of a list of sizes read it with PyList_GET_ITEM (a macro, which no hold
replaces) and the length they read first; a symbolic item's node is asked (is_int) in the middle,
so the worker gives torch's symbolic scalars a `node` that refuses (worker._refuse_symbolic_scalars),
and refuses every Python dispatch mode (worker._UNAUDITED_REACH: a mode's callback ran inside the
item() the walk calls for a 0-d tensor). The C API's conversions compiled code calls on each item
(PyNumber_Index, PyLong_As*, PyFloat_AsDouble ...) are replaced with PySequence_Fast, by ones that
refuse a hook of kernel code before it runs (a class's own __index__ shortened the list). torch's
__torch_function__ dispatch, which holds the arguments it collected borrowed while it calls each
handler, is locked off (worker._lock_torch_function_dispatch)."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import pytest

PROBE = textwrap.dedent(
    """
    import json, sys
    from metakernelbench import _core
    mode = sys.argv[1]
    if mode == "held_before_import":  # numpy loaded after the hold: held by the dlopen route
        _core.hold_sequence_items()
    import numpy as np
    if mode == "held":
        _core.hold_sequence_items()

    out = {}

    # A library's class (its code named by a file of an installed package, as a plain
    # WeakValueDictionary's __len__ was, whose pending removals popped the kernel's entries): a
    # class of the kernel's would have its __len__ refused before it ran (the conversion layer,
    # test_no_conversion_hook_of_kernel_code_runs_inside_compiled_code).
    LIBRARY = (
        "class Emptier:\\n"
        "    # A sequence to numpy (it has __len__ and __getitem__); asked for its length, it\\n"
        "    # empties the list numpy is walking.\\n"
        "    def __init__(self, box):\\n"
        "        self.box = box\\n"
        "    def __len__(self):\\n"
        "        self.box.clear()\\n"
        "        out['refs'] = sys.getrefcount(kept)\\n"
        "        return 0\\n"
        "    def __getitem__(self, index):\\n"
        "        raise IndexError(index)\\n"
    )
    exec(compile(LIBRARY, "/usr/lib/python3/dist-packages/library_emptier.py", "exec"))

    class Item:
        pass

    kept = Item()  # the probe's own references: nothing is freed in either mode
    box = [None, kept]
    emptier = box[0] = Emptier(box)
    try:
        made = np.array(box, dtype=object)
        out["array"] = [type(x).__name__ for x in made]
    except (RuntimeError, ValueError) as error:
        out["array"] = type(error).__name__
    print(json.dumps(out))
    """
)

SEMANTICS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import torch
    if sys.argv[1] == "held":
        from metakernelbench import _core
        _core.hold_sequence_items()
    rec = np.array([(1, 2.5), (3, 4.5)], dtype=[("a", "i4"), ("b", "f8")])
    nested = np.array([[1, 2], [3, 4]], dtype=np.float32)
    ragged = np.array([[1], [2, 3]], dtype=object)
    print(json.dumps({
        "nested": nested.tolist(),
        "mixed": np.array([[1, 2], (3, 4)]).tolist(),
        "structured": [list(r) for r in rec.tolist()],
        "ragged": [list(x) for x in ragged],
        "shape": list(np.zeros([2, 3]).shape),
        "concat": np.concatenate([np.ones(2), np.zeros(1)]).tolist(),
        "torch": torch.tensor([[1.0, 2.0], [3.0, 4.0]]).tolist(),
        "torch_view": list(torch.zeros(6).view([2, 3]).shape),
        "json": json.dumps([1, [2, 3], (4,)]),
    }))
    """
)


def _run(script: str, mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_numpys_coercion_holds_the_items_of_the_list_it_walks():
    bare, held, held_early = _run(PROBE, "bare"), _run(PROBE, "held"), _run(PROBE, "held_before_import")
    # Unheld: the emptied list no longer holds the item numpy reads next (freed, had the probe not
    # kept it), and numpy's fill finds the list changed. Held: numpy walks its own tuple.
    assert held["refs"] == bare["refs"] + 1, (bare, held)
    assert held_early["refs"] == bare["refs"] + 1, (bare, held_early)
    assert bare["array"] == "RuntimeError"
    assert held["array"] == held_early["array"] == ["Emptier", "Item"]


def test_the_hold_changes_no_answer():
    assert _run(SEMANTICS, "held") == _run(SEMANTICS, "bare")


def test_the_hold_names_what_it_held_and_is_idempotent():
    script = textwrap.dedent(
        """
        import json
        import numpy
        from metakernelbench import _core
        first, before, loader = _core.hold_sequence_items()
        second, again, _ = _core.hold_sequence_items()
        print(json.dumps({"first": first, "before": before, "loader": loader,
                          "second": second, "again": again}))
        """
    )
    out = _run(script, "")
    assert any("_multiarray_umath" in name for name in out["first"]), out
    assert out["before"] == 0 and out["loader"] is True
    assert out["second"] == {} and out["again"] == sum(out["first"].values())


SYMBOLIC = textwrap.dedent(
    """
    import json, sys
    import torch
    if sys.argv[1] == "refused":
        from metakernelbench.judge import worker
        worker._refuse_symbolic_scalars()
    out = {"lengths": []}

    class Node:
        def __init__(self, first):
            self.first = first
        def is_int(self):  # asked by torch's C++ as it converts the item, mid-walk
            if self.first and len(box) > 1:
                del box[1:]  # the others stay alive in `kept`: only the list's length changes
            out["lengths"].append(len(box))
            return True

    try:
        kept = [torch.SymInt(Node(first=(i == 0))) for i in range(4)]
        box = list(kept)
        torch.ones(2).view(box)
    except (RuntimeError, TypeError, PermissionError) as error:
        out["error"] = type(error).__name__
    made = object.__new__(torch.SymInt)  # no __init__: the node set on the instance
    made.__dict__["node"] = Node(first=False)
    try:
        torch.ones(2).view([made, 2])
        out["object_new"] = "viewed"
    except (RuntimeError, TypeError, PermissionError) as error:
        out["object_new"] = type(error).__name__
        out["object_new_refused"] = "torch.SymInt.node" in str(error)
    print(json.dumps(out))
    """
)


def test_torchs_symbolic_scalars_cannot_be_made_to_run_inside_its_list_walks():
    bare, refused = _run(SYMBOLIC, "bare"), _run(SYMBOLIC, "refused")
    # Unrefused: after the first item shortened the list to one, torch went on to ask the three
    # items past its end (what it reads there is whatever the slots hold).
    assert bare["lengths"][:4] == [1, 1, 1, 1], bare
    assert bare["object_new"] == "RuntimeError", bare  # view's own refusal of a symbolic size
    # Refused: no SymInt can be made, and one made without its constructor has a node that
    # refuses when torch reads it (torch reports that as the size it failed to unpack).
    assert refused["lengths"] == [] and refused["error"] == "PermissionError", refused
    assert refused["object_new_refused"] and not bare["object_new_refused"], (bare, refused)


DISPATCH = textwrap.dedent(
    """
    import json, sys
    import torch
    from torch.utils.checkpoint import create_selective_checkpoint_contexts
    if sys.argv[1] == "refused":
        from metakernelbench.judge import worker
        worker._refuse_unaudited_reach()
    box, armed, out = [], [True], {}

    def policy(ctx, func, *args, **kwargs):  # the mode's callback, run inside every ATen op
        if armed[0] and len(box) > 6:
            armed[0] = False
            del box[6:]  # 8 items to 6, the item array kept
        return True

    caching, _ = create_selective_checkpoint_contexts(policy)
    box.extend([2, torch.tensor(1), 1, 1, 1, 1, 3, 5])
    t = torch.zeros(30)
    try:
        with caching:  # the first ATen op inside: the item() of the view's walk
            out["sizes_read"] = t.view(box).dim()
    except PermissionError as error:
        out["refused"] = "dispatch mode" in str(error)
    out["length"] = len(box)
    print(json.dumps(out))
    """
)


def test_no_dispatch_mode_runs_a_callback_inside_torchs_list_walks():
    bare, refused = _run(DISPATCH, "bare"), _run(DISPATCH, "refused")
    # Unrefused: the policy ran inside the item() of the walk's second item, and torch read the
    # list's two slots past its new end.
    assert bare == {"sizes_read": 8, "length": 6}, bare
    assert refused == {"refused": True, "length": 8}, refused


EXTENSION = """
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static PyObject* fast_type(PyObject* self, PyObject* arg) {
  PyObject* seq = PySequence_Fast(arg, "not a sequence");
  if (seq == NULL) return NULL;
  PyObject* name = PyUnicode_FromString(Py_TYPE(seq)->tp_name);
  Py_DECREF(seq);
  return name;
}
static PyMethodDef methods[] = {{"fast_type", fast_type, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "%(name)s", NULL, -1, methods};
PyMODINIT_FUNC PyInit_%(name)s(void) { return PyModule_Create(&module); }
"""


@pytest.mark.parametrize("binding", ["lazy", "now"])
def test_an_extension_linked_either_way_is_held_loaded_before_or_after(tmp_path, binding):
    # Full RELRO (-z now: the slot read-only once loaded, as hardened builds link) and lazy
    # binding (the slot writable); one extension loaded before the hold, one after (the
    # interpreter's dlopen). What each one's PySequence_Fast returns for a list tells.
    compiler = shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    if compiler is None or not os.path.exists(os.path.join(include, "Python.h")):
        pytest.skip("no C compiler or Python headers")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    flags = ["-Wl,-z,relro,-z,now"] if binding == "now" else ["-Wl,-z,lazy"]
    for name in ("early", "late"):
        source = tmp_path / f"{name}.c"
        source.write_text(EXTENSION % {"name": name})
        subprocess.run(
            [
                compiler,
                "-shared",
                "-fPIC",
                "-O1",
                f"-I{include}",
                *flags,
                str(source),
                "-o",
                str(tmp_path / f"{name}{suffix}"),
            ],
            check=True,
            capture_output=True,
        )
    script = textwrap.dedent(
        """
        import json, sys
        sys.path.insert(0, sys.argv[1])
        import early
        from metakernelbench import _core
        before = early.fast_type([1])
        held, _, _ = _core.hold_sequence_items()
        import late
        print(json.dumps({"before": before, "early": early.fast_type([1]), "late": late.fast_type([1]),
                          "tuple": late.fast_type((1,)), "iterable": early.fast_type(range(2)),
                          "held_early": any(name.endswith("early" + sys.argv[2]) for name in held)}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), suffix], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {
        "before": "list",
        "early": "tuple",
        "late": "tuple",
        "tuple": "tuple",
        "iterable": "tuple",
        "held_early": True,
    }, out


MASKED = textwrap.dedent(
    """
    import json, sys
    import torch
    import torch.masked
    from torch.masked.maskedtensor._ops_refs import _MASKEDTENSOR_FUNCTION_TABLE as table
    if sys.argv[1] == "refused":
        from metakernelbench.judge import worker
        worker._refuse_unaudited_reach()
    out = {"handler_ran": False}

    def handler(*args, **kwargs):  # written into the table: torch's dispatch calls it
        out["handler_ran"] = True
        return NotImplemented

    table[torch.cat] = handler
    try:
        masked = torch.masked.masked_tensor(torch.ones(2), torch.ones(2, dtype=torch.bool))
        torch.cat([masked, torch.ones(2)])
    except PermissionError as error:
        out["refused"] = "MaskedTensor" in str(error)
    except Exception as error:
        out["other"] = type(error).__name__
    print(json.dumps(out))
    """
)


def test_no_tensor_hook_runs_a_handler_from_a_table_any_code_writes():
    bare, refused = _run(MASKED, "bare"), _run(MASKED, "refused")
    # Unrefused: MaskedTensor's __torch_function__ called the table's handler while torch's
    # dispatch held the other arguments borrowed (the second red team's use-after-free).
    assert bare["handler_ran"] is True, bare
    assert refused == {"handler_ran": False, "refused": True}, refused


TORCH_FUNCTION = textwrap.dedent(
    """
    import json, sys, threading
    import torch
    if sys.argv[1] == "locked":
        from metakernelbench.judge import worker
        worker._lock_torch_function_dispatch()
        worker._refuse_unaudited_reach()
    ran, out = [], {}

    def handler(func, types, args=(), kwargs=None):  # run inside torch's dispatch if looked up
        ran.append(func.__name__)
        return NotImplemented

    class Plain:
        pass

    class Sub(torch.Tensor):
        pass

    plain = Plain()
    plain.__torch_function__ = handler

    def probe(name):
        del ran[:]
        try:
            torch.cat([torch.ones(1), plain])
        except TypeError:
            pass
        out[name] = bool(ran)

    probe("main")
    torch._C.DisableTorchFunctionSubclass().__exit__(None, None, None)  # never entered: "on"
    probe("after_bare_exit")
    with torch._C.DisableTorchFunction():
        pass
    probe("after_context")
    started = threading.Thread(target=probe, args=("thread",))
    started.start()
    started.join()
    out["subclass_result"] = type(torch.ones(2).as_subclass(Sub) * 2).__name__
    with torch.device("meta"):  # torch's own mode still runs
        out["device_mode"] = torch.ones(1).device.type
    for name, enable in (
        ("switch", lambda: torch._C._set_torch_function_state(torch._C._TorchFunctionState.ENABLED)),
        ("enable_context", lambda: torch._C._EnableTorchFunction().__enter__()),
    ):
        try:
            enable()
            out[name] = "allowed"
        except PermissionError:
            out[name] = "refused"
    print(json.dumps(out))
    """
)


def test_no_handler_of_the_kernels_runs_inside_torchs_torch_function_dispatch():
    bare, locked = _run(TORCH_FUNCTION, "bare"), _run(TORCH_FUNCTION, "locked")
    # Unlocked: torch looked __torch_function__ up on the plain object and called it while its
    # dispatch held the other arguments borrowed (the eleventh session's raw memory), on this
    # thread and on a new one; a tensor subclass's results keep its class.
    assert bare == {
        "main": True,
        "after_bare_exit": True,
        "after_context": True,
        "thread": True,
        "subclass_result": "Sub",
        "device_mode": "meta",
        "switch": "allowed",
        "enable_context": "allowed",
    }, bare
    # Locked: on every thread, after a context that was never entered, and its switches refused.
    assert locked == {
        "main": False,
        "after_bare_exit": False,
        "after_context": False,
        "thread": False,
        "subclass_result": "Tensor",
        "device_mode": "meta",
        "switch": "refused",
        "enable_context": "refused",
    }, locked


CONVERSION = textwrap.dedent(
    """
    import json, numbers, sys
    import numpy as np
    import sympy
    import torch
    if sys.argv[1] == "held":
        from metakernelbench import _core
        _core.hold_sequence_items()
    box, out = [], {}

    class Shrinker:  # a class of the kernel's: its __index__ shortens the list torch walks
        def __index__(self):
            if len(box) > 6:
                del box[6:]
            return 1

    box.extend([2, Shrinker(), 1, 1, 1, 1, 3, 5])
    try:
        out["sizes_read"] = torch.zeros(30).view(box).dim()
    except (RuntimeError, TypeError) as error:
        out["error"] = type(error).__name__
    out["length"] = len(box)

    class Delegating:  # an installed __index__ (int(self)) that runs the class's own __int__
        __index__ = numbers.Integral.__index__

        def __int__(self):
            if len(box) > 6:
                del box[6:]
            return 1

    box[:] = [2, Delegating(), 1, 1, 1, 1, 3, 5]
    try:
        out["delegated_sizes_read"] = torch.zeros(30).view(box).dim()
    except (RuntimeError, TypeError) as error:
        out["delegated_error"] = type(error).__name__
    out["delegated_length"] = len(box)

    class Half:  # numpy converts it with PyFloat_AsDouble
        def __float__(self):
            return 0.5

    try:
        out["float"] = float(np.array([Half()], dtype=np.float64)[0])
    except (TypeError, ValueError, PermissionError) as error:
        out["float"] = type(error).__name__

    class Sized:  # numpy asks each item of a list it coerces for its length
        def __len__(self):
            out["len_ran"] = True
            return 0

        def __getitem__(self, index):
            raise IndexError(index)

    class Truth:  # numpy's object-to-bool cast asks each item's truth
        def __bool__(self):
            out["bool_ran"] = True
            return True

    out["len_ran"] = out["bool_ran"] = False
    try:
        np.array([Sized(), 1], dtype=object)
    except (TypeError, ValueError, PermissionError) as error:
        out["len_error"] = type(error).__name__
    try:
        np.array([Truth()], dtype=object).astype(bool)
    except (TypeError, ValueError, PermissionError) as error:
        out["bool_error"] = type(error).__name__
    class Truncated:  # PyNumber_Long's last resort (numpy's int cast of an object array)
        def __trunc__(self):
            out["trunc_ran"] = True
            return 3

    out["trunc_ran"] = False
    try:
        np.array([Truncated()], dtype=object).astype(np.int64)
    except (TypeError, ValueError, PermissionError) as error:
        out["trunc_error"] = type(error).__name__
    # Installed code's hooks (sympy's) and C conversions answer as before.
    out["installed"] = torch.zeros(4).view([sympy.Integer(2), 2]).shape[0]
    out["numpy_index"] = torch.zeros(6).view([np.int64(2), 3]).dim()
    print(json.dumps(out))
    """
)


def test_no_conversion_hook_of_kernel_code_runs_inside_compiled_code():
    bare, held = _run(CONVERSION, "bare"), _run(CONVERSION, "held")
    # Unheld: the class's __index__ ran in the middle of torch's walk of the list of sizes and
    # shortened it; torch read the two slots past its new end.
    assert bare["sizes_read"] == 8 and bare["length"] == 6 and bare["float"] == 0.5, bare
    # Held: the conversion refused before the hook ran (torch then tried view's other signature).
    assert held["length"] == 8 and "sizes_read" not in held, held
    assert held["float"] == "PermissionError", held
    # An installed hook that calls the class's own (numbers.Integral's __index__ is int(self)):
    # the interpreter's int() is not replaced, so the class's other hooks are refused with it.
    assert bare["delegated_sizes_read"] == 8 and bare["delegated_length"] == 6, bare
    assert held["delegated_length"] == 8 and "delegated_sizes_read" not in held, held
    # __len__ and __bool__ asked by compiled code (PyObject_Size, PyObject_IsTrue ...): run
    # unheld, refused before they run held.
    assert bare["len_ran"] and bare["bool_ran"], bare
    assert not held["len_ran"] and not held["bool_ran"], held
    assert bare["trunc_ran"] and not held["trunc_ran"], (bare, held)
    assert held["bool_error"] == "PermissionError", held
    assert held["installed"] == bare["installed"] == 2, held
    assert held["numpy_index"] == bare["numpy_index"] == 2, held


RAW_PROTOCOL = textwrap.dedent(
    """
    import json, sys, types
    import numpy as np
    import torch
    if sys.argv[1] == "held":
        from metakernelbench import _core
        _core.hold_sequence_items()
    out = {}
    name = "__array" + "_interface__"
    source = np.arange(4, dtype=np.uint8)
    interface = dict(source.__array_interface__)  # an honest array's own address

    def read(key, obj):
        try:
            out[key] = np.asarray(obj).tolist()
        except PermissionError:
            out[key] = "PermissionError"

    class Spec(dict):
        pass

    spec = Spec()
    setattr(spec, name, interface)  # the instance's own dictionary (lazy_property's route)
    read("instance", spec)

    def fn():
        return 0

    setattr(fn, name, interface)  # a function's dictionary: a C type's instance
    read("function", fn)

    class Prop:
        pass

    setattr(Prop, name, property(lambda self: interface))  # a property of code not installed
    read("property", Prop())

    ns = types.SimpleNamespace()
    setattr(ns, name, interface)
    read("namespace", ns)
    # What keeps working: arrays, tensors, lists, scalars.
    read("array", source)
    read("tensor", torch.arange(3))
    read("list", [1, 2])
    out["hasattr"] = hasattr(spec, name)  # Python's own hasattr is not compiled code's look-up
    print(json.dumps(out))
    """
)


def test_no_raw_memory_protocol_answered_by_an_objects_own_attributes_reaches_numpy():
    """numpy takes __array_interface__ from wherever the object answers it: an address in an
    instance's own dictionary (a library's setattr under a name made at run time put it there:
    the thirteenth session's red team, raw memory in strict mode) or a property of the kernel's.
    With the hold, compiled code's attribute look-ups refuse such an answer; arrays, tensors and
    lists convert as before."""
    bare, held = _run(RAW_PROTOCOL, "bare"), _run(RAW_PROTOCOL, "held")
    routes = ("instance", "function", "property", "namespace")
    assert all(bare[key] == [0, 1, 2, 3] for key in routes), bare  # the window opened
    assert all(held[key] == "PermissionError" for key in routes), held
    for key in ("array", "tensor", "list"):
        assert held[key] == bare[key], (key, bare, held)
    assert held["hasattr"] and bare["hasattr"]
