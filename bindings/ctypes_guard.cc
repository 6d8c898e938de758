// The worker's guard on memory reached through ctypes objects. ctypes raises audit events for a
// few of its operations (dlopen, dlsym, from_address, addressof, string_at), and the runtime
// audit refuses those to kernel.py; it raises none for a foreign function's call (memmove, cast,
// a CDLL function) or for reading and writing through a pointer it already holds: indexing a
// ctypes pointer is not bounds-checked, and its value is the object's own eight bytes, which
// memoryview or __setstate__ set to any address. A kernel that reached the ctypes module through
// a library (numpy's ndarray.ctypes helper, by text) read and wrote any byte of the worker that
// way, with no event and no refused name (red team, 2026-12-06).
//
// So every operation of _ctypes that goes through a stored address is routed through the audit
// as the worker's own event "ctypes.memory/<operation>" (a foreign call: "ctypes.foreign_call"),
// decided as the other ctypes events are (runtime_policy.cc: the DSL's native layer inside its
// entry points, and anyone before kernel.py's import began):
//   - a pointer's item and slice, read and written, and its contents;
//   - a simple object's value, its outparam conversion and its repr (c_char_p, c_wchar_p and
//     py_object read through their stored address: bytes, text or an object made of it);
//   - a structure's or union's field, read (a field is the union's pun of an address);
//   - an array's item, read (an array of c_char_p or py_object);
//   - a foreign function's call (ctypes.memmove, cast, a CDLL function, a CFUNCTYPE made at an
//     address: CPython raises no event for any of them);
//   - _ctypes' resize (an object's buffer reallocated under a memoryview of it) and its
//     Py_INCREF / Py_DECREF (a live object freed);
//   - a ctypes object given another class (`obj.__class__ = Bigger`: the same layout to CPython,
//     but a structure's fields and an array's items are then placed by the new type's sizes
//     over the old, smaller buffer, so a field's write lands past its end), through the
//     interpreter's object.__setattr__ event (runtime_audit_hook.cc).
// Everything else of ctypes stays inside an object's own buffer. The operations are C slots and
// C functions, so they are replaced where CPython dispatches them: the slot of each type that
// holds the original (the base and every subclass made so far), the wrapper descriptors that
// give new subclasses their slots and Python code `__getitem__` and the like, the getset and
// method tables of the attributes.
#include <Python.h>

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "bindings/bindings.h"

namespace mkb::python {
namespace {

struct Originals {
  binaryfunc pointer_subscript = nullptr;
  objobjargproc pointer_ass_subscript = nullptr;
  ssizeargfunc pointer_item = nullptr;
  ssizeobjargproc pointer_ass_item = nullptr;
  binaryfunc array_subscript = nullptr;
  ssizeargfunc array_item = nullptr;
  reprfunc simple_repr = nullptr;
  getter pointer_contents = nullptr;
  getter simple_value = nullptr;
  PyCFunction simple_from_outparam = nullptr;
  descrgetfunc field_get = nullptr;
  ternaryfunc function_call = nullptr;
  PyCFunction resize = nullptr;
  PyCFunction incref = nullptr;
  PyCFunction decref = nullptr;
};

Originals g_original;
bool g_installed = false;
PyTypeObject* g_cdata = nullptr;  // _ctypes._CData: every ctypes object's base

// Whether the audit refuses the operation to whoever does it (a PermissionError set, the finding
// recorded); false while kernel.py's import has not begun.
bool Refused(const char* operation) { return AuditJudgeEvent(operation) != 0; }

PyObject* PointerSubscript(PyObject* self, PyObject* key) {
  if (Refused("ctypes.memory/pointer item")) return nullptr;
  return g_original.pointer_subscript(self, key);
}
int PointerAssSubscript(PyObject* self, PyObject* key, PyObject* value) {
  if (Refused("ctypes.memory/pointer item assignment")) return -1;
  return g_original.pointer_ass_subscript(self, key, value);
}
PyObject* PointerItem(PyObject* self, Py_ssize_t index) {
  if (Refused("ctypes.memory/pointer item")) return nullptr;
  return g_original.pointer_item(self, index);
}
int PointerAssItem(PyObject* self, Py_ssize_t index, PyObject* value) {
  if (Refused("ctypes.memory/pointer item assignment")) return -1;
  return g_original.pointer_ass_item(self, index, value);
}
PyObject* ArraySubscript(PyObject* self, PyObject* key) {
  if (Refused("ctypes.memory/array item")) return nullptr;
  return g_original.array_subscript(self, key);
}
PyObject* ArrayItem(PyObject* self, Py_ssize_t index) {
  if (Refused("ctypes.memory/array item")) return nullptr;
  return g_original.array_item(self, index);
}
PyObject* SimpleRepr(PyObject* self) {
  if (Refused("ctypes.memory/simple repr")) return nullptr;
  return g_original.simple_repr(self);
}
PyObject* PointerContents(PyObject* self, void* closure) {
  if (Refused("ctypes.memory/pointer contents")) return nullptr;
  return g_original.pointer_contents(self, closure);
}
PyObject* SimpleValue(PyObject* self, void* closure) {
  if (Refused("ctypes.memory/simple value")) return nullptr;
  return g_original.simple_value(self, closure);
}
PyObject* SimpleFromOutparam(PyObject* self, PyObject* args) {
  if (Refused("ctypes.memory/simple value")) return nullptr;
  return g_original.simple_from_outparam(self, args);
}
PyObject* FieldGet(PyObject* self, PyObject* instance, PyObject* owner) {
  if (instance != nullptr && instance != Py_None && Refused("ctypes.memory/field")) {
    return nullptr;
  }
  return g_original.field_get(self, instance, owner);
}

PyObject* FunctionCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (Refused("ctypes.foreign_call")) return nullptr;
  return g_original.function_call(self, args, kwargs);
}

// _ctypes' module functions that free or move memory other objects still view: resize
// reallocates an object's buffer under a memoryview of it, Py_DECREF frees a live object (red
// team, 2026-12-06: each made a forged bytearray header, raw memory past the guard).
PyObject* Resize(PyObject* self, PyObject* args) {
  if (Refused("ctypes.memory/resize")) return nullptr;
  return g_original.resize(self, args);
}
PyObject* IncRef(PyObject* self, PyObject* arg) {
  if (Refused("ctypes.memory/reference count")) return nullptr;
  return g_original.incref(self, arg);
}
PyObject* DecRef(PyObject* self, PyObject* arg) {
  if (Refused("ctypes.memory/reference count")) return nullptr;
  return g_original.decref(self, arg);
}

// The table entry of one of _ctypes' module functions (nullptr if it has none of that name).
PyMethodDef* ModuleFunction(PyObject* module, const char* name) {
  PyObject* function = PyObject_GetAttrString(module, name);
  if (function == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  PyMethodDef* def =
      PyCFunction_Check(function) ? reinterpret_cast<PyCFunctionObject*>(function)->m_ml : nullptr;
  Py_DECREF(function);
  return def;
}

// A type's own dictionary (borrowed where the interpreter keeps it; a new reference from 3.12).
PyObject* OwnDict(PyTypeObject* type) {
#if PY_VERSION_HEX >= 0x030C0000
  return PyType_GetDict(type);
#else
  Py_XINCREF(type->tp_dict);
  return type->tp_dict;
#endif
}

// The object `name` of `type`'s own dictionary, or nullptr (a new reference).
PyObject* OwnAttribute(PyTypeObject* type, const char* name) {
  PyObject* dict = OwnDict(type);
  if (dict == nullptr) return nullptr;
  PyObject* value = PyDict_GetItemString(dict, name);  // borrowed
  Py_XINCREF(value);
  Py_DECREF(dict);
  return value;
}

// The wrapper descriptors of `type`'s own dictionary that wrap `from`: they wrap `to` from now on
// (Python code calling `type.__getitem__`, and the slot a subclass made later takes from them).
void RewrapDescriptors(PyTypeObject* type, void* from, void* to) {
  for (const char* name :
       {"__getitem__", "__setitem__", "__delitem__", "__get__", "__repr__", "__call__"}) {
    PyObject* descr = OwnAttribute(type, name);
    if (descr != nullptr && Py_IS_TYPE(descr, &PyWrapperDescr_Type)) {
      auto* wrapper = reinterpret_cast<PyWrapperDescrObject*>(descr);
      if (wrapper->d_wrapped == from) wrapper->d_wrapped = to;
    }
    Py_XDECREF(descr);
  }
}

template <typename Slot>
void Swap(Slot* slot, Slot original, Slot guard) {
  if (slot != nullptr && *slot == original && original != nullptr) *slot = guard;
}

// The guards in place of the originals in one type: its slots and its wrapper descriptors.
void PatchType(PyTypeObject* type) {
  if (PyMappingMethods* m = type->tp_as_mapping) {
    Swap(&m->mp_subscript, g_original.pointer_subscript, &PointerSubscript);
    Swap(&m->mp_ass_subscript, g_original.pointer_ass_subscript, &PointerAssSubscript);
    Swap(&m->mp_subscript, g_original.array_subscript, &ArraySubscript);
  }
  if (PySequenceMethods* s = type->tp_as_sequence) {
    Swap(&s->sq_item, g_original.pointer_item, &PointerItem);
    Swap(&s->sq_ass_item, g_original.pointer_ass_item, &PointerAssItem);
    Swap(&s->sq_item, g_original.array_item, &ArrayItem);
  }
  Swap(&type->tp_repr, g_original.simple_repr, &SimpleRepr);
  Swap(&type->tp_descr_get, g_original.field_get, &FieldGet);
  Swap(&type->tp_call, g_original.function_call, &FunctionCall);
  const std::pair<void*, void*> rewraps[] = {
      {reinterpret_cast<void*>(g_original.pointer_subscript),
       reinterpret_cast<void*>(&PointerSubscript)},
      {reinterpret_cast<void*>(g_original.pointer_ass_subscript),
       reinterpret_cast<void*>(&PointerAssSubscript)},
      {reinterpret_cast<void*>(g_original.pointer_item), reinterpret_cast<void*>(&PointerItem)},
      {reinterpret_cast<void*>(g_original.pointer_ass_item),
       reinterpret_cast<void*>(&PointerAssItem)},
      {reinterpret_cast<void*>(g_original.array_subscript),
       reinterpret_cast<void*>(&ArraySubscript)},
      {reinterpret_cast<void*>(g_original.array_item), reinterpret_cast<void*>(&ArrayItem)},
      {reinterpret_cast<void*>(g_original.simple_repr), reinterpret_cast<void*>(&SimpleRepr)},
      {reinterpret_cast<void*>(g_original.field_get), reinterpret_cast<void*>(&FieldGet)},
      {reinterpret_cast<void*>(g_original.function_call), reinterpret_cast<void*>(&FunctionCall)},
  };
  for (const auto& [from, to] : rewraps) {
    if (from != nullptr) RewrapDescriptors(type, from, to);
  }
  PyType_Modified(type);
}

// `type` and every subclass of it made so far, however deep (each once).
void PatchTree(PyObject* type, absl::flat_hash_set<PyObject*>* seen) {
  if (!PyType_Check(type) || !seen->insert(type).second) return;
  PatchType(reinterpret_cast<PyTypeObject*>(type));
  PyObject* subclasses = PyObject_CallMethod(type, "__subclasses__", nullptr);
  if (subclasses == nullptr) {
    PyErr_Clear();
    return;
  }
  if (PyList_Check(subclasses)) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subclasses); ++i) {
      PatchTree(PyList_GET_ITEM(subclasses, i), seen);
    }
  }
  Py_DECREF(subclasses);
}

PyTypeObject* TypeOf(PyObject* module, const char* name) {
  PyObject* value = PyObject_GetAttrString(module, name);
  if (value == nullptr) return nullptr;
  if (!PyType_Check(value)) {
    Py_DECREF(value);
    PyErr_Format(PyExc_TypeError, "_ctypes.%s is no type", name);
    return nullptr;
  }
  return reinterpret_cast<PyTypeObject*>(value);  // held for the process's life
}

PyGetSetDef* GetSet(PyTypeObject* type, const char* name) {
  PyObject* descr = OwnAttribute(type, name);
  PyGetSetDef* def = nullptr;
  if (descr != nullptr && Py_IS_TYPE(descr, &PyGetSetDescr_Type)) {
    def = reinterpret_cast<PyGetSetDescrObject*>(descr)->d_getset;
  }
  Py_XDECREF(descr);
  return def;
}

PyMethodDef* Method(PyTypeObject* type, const char* name) {
  PyObject* descr = OwnAttribute(type, name);
  PyMethodDef* def = nullptr;
  if (descr != nullptr && Py_IS_TYPE(descr, &PyMethodDescr_Type)) {
    def = reinterpret_cast<PyMethodDescrObject*>(descr)->d_method;
  }
  Py_XDECREF(descr);
  return def;
}

}  // namespace

void InstallCtypesGuard() {
  if (g_installed) return;
  PyObject* ctypes = PyImport_ImportModule("ctypes");  // its types and subclasses made now
  if (ctypes == nullptr) throw pybind11::error_already_set();
  PyObject* module = PyImport_ImportModule("_ctypes");
  if (module == nullptr) throw pybind11::error_already_set();
  PyTypeObject* pointer = TypeOf(module, "_Pointer");
  PyTypeObject* array = pointer ? TypeOf(module, "Array") : nullptr;
  PyTypeObject* simple = array ? TypeOf(module, "_SimpleCData") : nullptr;
  PyTypeObject* structure = simple ? TypeOf(module, "Structure") : nullptr;
  PyTypeObject* function = structure ? TypeOf(module, "CFuncPtr") : nullptr;
  PyMethodDef* resize = ModuleFunction(module, "resize");
  PyMethodDef* incref = ModuleFunction(module, "Py_INCREF");
  PyMethodDef* decref = ModuleFunction(module, "Py_DECREF");
  Py_DECREF(module);
  if (function == nullptr) {
    Py_DECREF(ctypes);
    throw pybind11::error_already_set();
  }
  // A structure's field descriptor: its type is CField (not a name _ctypes exports before 3.13),
  // taken from a structure made here.
  PyObject* c_int = PyObject_GetAttrString(ctypes, "c_int");
  PyObject* made =
      c_int == nullptr
          ? nullptr
          : PyObject_CallFunction(reinterpret_cast<PyObject*>(Py_TYPE(structure)), "s(O){s:[(sO)]}",
                                  "_MkbField", structure, "_fields_", "a", c_int);
  Py_XDECREF(c_int);
  Py_DECREF(ctypes);
  PyObject* field_type = nullptr;
  if (made != nullptr) {
    PyObject* descr = OwnAttribute(reinterpret_cast<PyTypeObject*>(made), "a");
    if (descr != nullptr) field_type = Py_NewRef(reinterpret_cast<PyObject*>(Py_TYPE(descr)));
    Py_XDECREF(descr);
    Py_DECREF(made);
  }
  if (field_type == nullptr || !PyType_Check(field_type)) {
    Py_XDECREF(field_type);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a ctypes structure has no CField");
    throw pybind11::error_already_set();
  }
  auto* field = reinterpret_cast<PyTypeObject*>(field_type);

  PyGetSetDef* contents = GetSet(pointer, "contents");
  PyGetSetDef* value = GetSet(simple, "value");
  PyMethodDef* outparam = Method(simple, "__ctypes_from_outparam__");
  if (simple->tp_base == nullptr || !PyType_IsSubtype(pointer, simple->tp_base) ||
      pointer->tp_as_mapping == nullptr || pointer->tp_as_sequence == nullptr ||
      array->tp_as_mapping == nullptr || array->tp_as_sequence == nullptr || contents == nullptr ||
      value == nullptr || outparam == nullptr || field->tp_descr_get == nullptr ||
      simple->tp_repr == nullptr || function->tp_call == nullptr ||
      (outparam->ml_flags & METH_NOARGS) == 0) {
    throw pybind11::type_error(
        "the ctypes guard does not know this Python's _ctypes (a pointer's, array's, simple "
        "object's or field's operations are not where CPython 3.11 and 3.12 keep them)");
  }
  g_original.pointer_subscript = pointer->tp_as_mapping->mp_subscript;
  g_original.pointer_ass_subscript = pointer->tp_as_mapping->mp_ass_subscript;
  g_original.pointer_item = pointer->tp_as_sequence->sq_item;
  g_original.pointer_ass_item = pointer->tp_as_sequence->sq_ass_item;
  g_original.array_subscript = array->tp_as_mapping->mp_subscript;
  g_original.array_item = array->tp_as_sequence->sq_item;
  g_original.simple_repr = simple->tp_repr;
  g_original.field_get = field->tp_descr_get;
  g_original.function_call = function->tp_call;
  g_original.resize = resize->ml_meth;
  g_original.incref = incref->ml_meth;
  g_original.decref = decref->ml_meth;
  g_original.pointer_contents = contents->get;
  g_original.simple_value = value->get;
  g_original.simple_from_outparam = outparam->ml_meth;

  g_cdata = simple->tp_base;
  contents->get = &PointerContents;
  value->get = &SimpleValue;
  outparam->ml_meth = &SimpleFromOutparam;
  resize->ml_meth = &Resize;
  incref->ml_meth = &IncRef;
  decref->ml_meth = &DecRef;
  absl::flat_hash_set<PyObject*> seen;
  for (PyTypeObject* base : {pointer, array, simple, field, function}) {
    PatchTree(reinterpret_cast<PyObject*>(base), &seen);
  }
  g_installed = true;
}

bool CtypesClassChange(PyObject* args) {
  if (g_cdata == nullptr || args == nullptr || !PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 3)
    return false;
  PyObject* name = PyTuple_GET_ITEM(args, 1);
  if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, "__class__") != 0)
    return false;
  PyObject* target = PyTuple_GET_ITEM(args, 0);
  PyObject* value = PyTuple_GET_ITEM(args, 2);
  return PyObject_TypeCheck(target, g_cdata) ||
         (PyType_Check(value) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(value), g_cdata));
}

}  // namespace mkb::python
