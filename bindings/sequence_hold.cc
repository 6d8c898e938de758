// The worker's hold on the items of sequences that C extensions walk by borrowed pointer, and its
// refusal of conversion hooks of kernel code that they call (below, RefuseKernelConversion) and
// of raw-memory protocols that anything but C or installed code answers (RefuseRawMemoryProtocol).
//
// CPython's PySequence_Fast returns a list as itself. Its callers then read the list's item array
// through PySequence_Fast_ITEMS, borrowed, while they call into each item: numpy's array coercion
// asks every item for its length and items (`len()` and `[]`, which run Python code: a plain
// weakref.WeakValueDictionary's __len__ commits its pending removals through its
// `_pending_removals.pop`), torch's argument parsers and tensor constructor convert each item
// (`__index__`, `__float__`), the json encoder calls `default`. Code that empties the list
// meanwhile frees the items the caller still walks, and a bytes object of the right size takes a
// freed item's block: the caller then reads a forged object, which a kernel turned into a bytearray
// over the whole address space (the tenth session's red team, 2026-12-07: np.array over such a
// list, 17-22x strict on the CPU judge, cases numpy_coerce_len_uaf*, weakvaluedict_len_mapped_get,
// mapped_segment_size_property, state_check_removed). numpy's own source marks the call
// "borrowed-ref - manual fix needed".
//
// The callers are compiled code of other projects, so the call is replaced where it is linked:
// each loaded object that imports PySequence_Fast (its PLT slot or GOT entry, JUMP_SLOT or
// GLOB_DAT relocations) gets, in that slot, a function that returns a tuple of the list's items
// instead of the list. A tuple holds its items and cannot be emptied, and every caller reads the
// result through the PySequence_Fast_* macros, which accept a tuple as they accept a list: the
// caller's answer is the same (numpy's coercion treats lists and tuples alike, and caches the
// tuple it walked for the array's fill). The object that defines the function (libpython, or the
// interpreter's executable) keeps its own calls; those of the interpreter's C code do not call into
// items while they walk them (str.join checks types only; list.extend copies the references first).
#include <Python.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "bindings/bindings.h"

namespace mkb::python {
namespace {

namespace py = pybind11;

using SequenceFast = PyObject* (*)(PyObject*, const char*);
SequenceFast g_sequence_fast = nullptr;  // the interpreter's own, found once

PyObject* HeldSequenceFast(PyObject* object, const char* message) {
  PyObject* sequence = g_sequence_fast(object, message);
  if (sequence == nullptr || !PyList_Check(sequence)) return sequence;  // a tuple holds its items
  // The caller's list itself (or one PySequence_List made, which nothing else holds): its items
  // copied, with a reference each, before any of them runs code.
  PyObject* held = PyList_AsTuple(sequence);
  Py_DECREF(sequence);
  return held;
}

// The C API's conversions, which compiled code calls on each item it walks (torch's parsers read a
// list of sizes by PyList_GET_ITEM and the length they read first, converting each item with
// PyNumber_Index or PyLong_AsLongLongAndOverflow): a class of the kernel's whose __index__
// shortened the list made torch read 8 sizes from a list of 6 (eleventh session,
// own_index_list_walk*; the static protocol-method rule was the only layer). Each replacement asks
// RefuseKernelConversion (runtime_audit_hook.cc) before the original runs when the object's type
// converts through Python (its slot is the interpreter's generic one, read from a probe class), so
// that no hook of kernel code runs inside such a walk; installed code's hooks (sympy's numbers,
// torch's symbolic scalars) run as before.
struct GenericSlots {
  unaryfunc index = nullptr;
  unaryfunc integer = nullptr;
  unaryfunc real = nullptr;
  inquiry truth = nullptr;
  lenfunc sequence_length = nullptr;
  lenfunc mapping_length = nullptr;
};
GenericSlots g_generic;

// Whether `object`'s conversion (through __index__, and __int__ / __trunc__ or __float__ where
// asked) would run Python code of the kernel's, refused (PermissionError set).
bool Refused(PyObject* object, bool integer, bool real) {
  if (object == nullptr || PyLong_CheckExact(object) || PyFloat_CheckExact(object)) return false;
  const PyNumberMethods* number = Py_TYPE(object)->tp_as_number;
  if (number == nullptr || !PyType_HasFeature(Py_TYPE(object), Py_TPFLAGS_HEAPTYPE)) return false;
  if (number->nb_index != nullptr && number->nb_index == g_generic.index &&
      RefuseKernelConversion(object, "__index__"))
    return true;
  if (integer && number->nb_int != nullptr && number->nb_int == g_generic.integer &&
      RefuseKernelConversion(object, "__int__"))
    return true;
  // PyNumber_Long's last resort, looked up by name where the type has neither slot.
  if (integer && number->nb_int == nullptr && number->nb_index == nullptr &&
      RefuseKernelConversion(object, "__trunc__"))
    return true;
  return real && number->nb_float != nullptr && number->nb_float == g_generic.real &&
         RefuseKernelConversion(object, "__float__");
}

// Whether `object`'s truth or length (__bool__, __len__) would run Python code of the kernel's,
// refused (PermissionError set): numpy's coercion asked each item of the list it walked for its
// length (numpy_coerce_len_uaf*), torch's and the DSLs' C code test truths.
bool RefusedLength(PyObject* object, bool truth) {
  if (object == nullptr) return false;
  PyTypeObject* type = Py_TYPE(object);
  if (!PyType_HasFeature(type, Py_TPFLAGS_HEAPTYPE)) return false;
  if (truth && type->tp_as_number != nullptr && type->tp_as_number->nb_bool != nullptr &&
      type->tp_as_number->nb_bool == g_generic.truth)
    return RefuseKernelConversion(object, "__bool__");
  const bool python_length =
      (type->tp_as_sequence != nullptr && type->tp_as_sequence->sq_length != nullptr &&
       type->tp_as_sequence->sq_length == g_generic.sequence_length) ||
      (type->tp_as_mapping != nullptr && type->tp_as_mapping->mp_length != nullptr &&
       type->tp_as_mapping->mp_length == g_generic.mapping_length);
  return python_length && RefuseKernelConversion(object, "__len__");
}

using ObjectFn = PyObject* (*)(PyObject*);
using IntFn = int (*)(PyObject*);
using SizeFn = Py_ssize_t (*)(PyObject*);
using SsizeFn = Py_ssize_t (*)(PyObject*, PyObject*);
using LongFn = long (*)(PyObject*);
using LongOverflowFn = long (*)(PyObject*, int*);
using LongLongFn = long long (*)(PyObject*);
using LongLongOverflowFn = long long (*)(PyObject*, int*);
using DoubleFn = double (*)(PyObject*);
ObjectFn g_number_index, g_number_long, g_number_float;
SsizeFn g_number_as_ssize;
LongFn g_long_as_long;
LongOverflowFn g_long_as_long_overflow;
LongLongFn g_long_as_long_long;
LongLongOverflowFn g_long_as_long_long_overflow;
DoubleFn g_float_as_double;
IntFn g_object_is_true, g_object_not;
SizeFn g_object_size, g_object_length, g_sequence_size, g_sequence_length, g_mapping_size,
    g_mapping_length;

PyObject* CheckedNumberIndex(PyObject* o) {
  return Refused(o, false, false) ? nullptr : g_number_index(o);
}
PyObject* CheckedNumberLong(PyObject* o) {
  return Refused(o, true, false) ? nullptr : g_number_long(o);
}
PyObject* CheckedNumberFloat(PyObject* o) {
  return Refused(o, false, true) ? nullptr : g_number_float(o);
}
Py_ssize_t CheckedNumberAsSsize(PyObject* o, PyObject* error) {
  return Refused(o, false, false) ? -1 : g_number_as_ssize(o, error);
}
long CheckedLongAsLong(PyObject* o) { return Refused(o, false, false) ? -1 : g_long_as_long(o); }
long CheckedLongAsLongOverflow(PyObject* o, int* overflow) {
  if (!Refused(o, false, false)) return g_long_as_long_overflow(o, overflow);
  *overflow = 0;
  return -1;
}
long long CheckedLongAsLongLong(PyObject* o) {
  return Refused(o, false, false) ? -1 : g_long_as_long_long(o);
}
long long CheckedLongAsLongLongOverflow(PyObject* o, int* overflow) {
  if (!Refused(o, false, false)) return g_long_as_long_long_overflow(o, overflow);
  *overflow = 0;
  return -1;
}
double CheckedFloatAsDouble(PyObject* o) {
  return Refused(o, false, true) ? -1.0 : g_float_as_double(o);
}
int CheckedIsTrue(PyObject* o) { return RefusedLength(o, true) ? -1 : g_object_is_true(o); }
int CheckedNot(PyObject* o) { return RefusedLength(o, true) ? -1 : g_object_not(o); }
Py_ssize_t CheckedObjectSize(PyObject* o) {
  return RefusedLength(o, false) ? -1 : g_object_size(o);
}
Py_ssize_t CheckedObjectLength(PyObject* o) {
  return RefusedLength(o, false) ? -1 : g_object_length(o);
}
Py_ssize_t CheckedSequenceSize(PyObject* o) {
  return RefusedLength(o, false) ? -1 : g_sequence_size(o);
}
Py_ssize_t CheckedSequenceLength(PyObject* o) {
  return RefusedLength(o, false) ? -1 : g_sequence_length(o);
}
Py_ssize_t CheckedMappingSize(PyObject* o) {
  return RefusedLength(o, false) ? -1 : g_mapping_size(o);
}
Py_ssize_t CheckedMappingLength(PyObject* o) {
  return RefusedLength(o, false) ? -1 : g_mapping_length(o);
}

// The attribute look-ups compiled code makes (numpy's of __array_interface__ and
// __array_struct__ on whatever it coerces, torch's of __cuda_array_interface__): a raw-memory
// protocol answered by anything but C or installed code is refused (RefuseRawMemoryProtocol),
// whatever put it there (red team, thirteenth session: a library's setattr under a name taken
// from data, torch.distributions' lazy_property and ParameterDict, gave numpy a window on any
// address in strict mode, and with it the audit's own state).
using GetAttrFn = PyObject* (*)(PyObject*, PyObject*);
using GetAttrStringFn = PyObject* (*)(PyObject*, const char*);
using HasAttrFn = int (*)(PyObject*, PyObject*);
using HasAttrStringFn = int (*)(PyObject*, const char*);
using LookupAttrFn = int (*)(PyObject*, PyObject*, PyObject**);
using LookupAttrStringFn = int (*)(PyObject*, const char*, PyObject**);
GetAttrFn g_get_attr;
GetAttrStringFn g_get_attr_string;
HasAttrFn g_has_attr, g_has_attr_with_error;
HasAttrStringFn g_has_attr_string, g_has_attr_string_with_error;
LookupAttrFn g_lookup_attr, g_get_optional_attr;
LookupAttrStringFn g_get_optional_attr_string;

PyObject* CheckedGetAttr(PyObject* o, PyObject* name) {
  return RefuseRawMemoryProtocol(o, name) ? nullptr : g_get_attr(o, name);
}
PyObject* CheckedGetAttrString(PyObject* o, const char* name) {
  return RefuseRawMemoryProtocol(o, name) ? nullptr : g_get_attr_string(o, name);
}
// hasattr's C forms raise nothing (before 3.13): the refusal is recorded, the answer is "no".
int CheckedHasAttr(PyObject* o, PyObject* name) {
  if (!RefuseRawMemoryProtocol(o, name)) return g_has_attr(o, name);
  PyErr_Clear();
  return 0;
}
int CheckedHasAttrString(PyObject* o, const char* name) {
  if (!RefuseRawMemoryProtocol(o, name)) return g_has_attr_string(o, name);
  PyErr_Clear();
  return 0;
}
int CheckedHasAttrWithError(PyObject* o, PyObject* name) {
  return RefuseRawMemoryProtocol(o, name) ? -1 : g_has_attr_with_error(o, name);
}
int CheckedHasAttrStringWithError(PyObject* o, const char* name) {
  return RefuseRawMemoryProtocol(o, name) ? -1 : g_has_attr_string_with_error(o, name);
}
int CheckedLookupAttr(PyObject* o, PyObject* name, PyObject** result) {
  if (!RefuseRawMemoryProtocol(o, name)) return g_lookup_attr(o, name, result);
  *result = nullptr;
  return -1;
}
int CheckedGetOptionalAttr(PyObject* o, PyObject* name, PyObject** result) {
  if (!RefuseRawMemoryProtocol(o, name)) return g_get_optional_attr(o, name, result);
  *result = nullptr;
  return -1;
}
int CheckedGetOptionalAttrString(PyObject* o, const char* name, PyObject** result) {
  if (!RefuseRawMemoryProtocol(o, name)) return g_get_optional_attr_string(o, name, result);
  *result = nullptr;
  return -1;
}

// The C library's calls that make memory executable (LLVM's JIT in the DSLs maps its code
// read-write, then mprotects it read-execute), routed through the worker's gate on native code
// made at run time (runtime_audit_hook.cc, ExecMemoryAllowed): refused (EACCES) where the gate
// refuses. Executable mappings by the dynamic loader (dlopen of a library file) do not go
// through any object's slots: they are not gated here.
using MmapFn = void* (*)(void*, size_t, int, int, int, off_t);
using MprotectFn = int (*)(void*, size_t, int);
using PkeyMprotectFn = int (*)(void*, size_t, int, int);
MmapFn g_mmap = nullptr;
MmapFn g_mmap64 = nullptr;
MprotectFn g_mprotect = nullptr;
PkeyMprotectFn g_pkey_mprotect = nullptr;

// Whether the gate refuses memory made executable (`prot` with PROT_EXEC), errno set to EACCES
// then; `caller` is the calling code's address, which names the object that asked.
bool ExecRefused(int prot, const char* call, size_t length, const void* caller) {
  if ((prot & PROT_EXEC) == 0 || ExecMemoryAllowed(call, length, caller)) return false;
  errno = EACCES;
  return true;
}

void* GatedMmap(void* address, size_t length, int prot, int flags, int fd, off_t offset) {
  if (ExecRefused(prot, "mmap", length, __builtin_return_address(0))) return MAP_FAILED;
  return g_mmap(address, length, prot, flags, fd, offset);
}
void* GatedMmap64(void* address, size_t length, int prot, int flags, int fd, off_t offset) {
  if (ExecRefused(prot, "mmap64", length, __builtin_return_address(0))) return MAP_FAILED;
  return g_mmap64(address, length, prot, flags, fd, offset);
}
int GatedMprotect(void* address, size_t length, int prot) {
  if (ExecRefused(prot, "mprotect", length, __builtin_return_address(0))) return -1;
  return g_mprotect(address, length, prot);
}
int GatedPkeyMprotect(void* address, size_t length, int prot, int key) {
  if (ExecRefused(prot, "pkey_mprotect", length, __builtin_return_address(0))) return -1;
  return g_pkey_mprotect(address, length, prot, key);
}

// TVM-FFI's C API, routed through the same gate (runtime_audit_hook.cc: FfiCallAllowed,
// FfiCreateDecision) where Python reaches it: its Python binding (the tvm_ffi.core extension)
// calls TVMFFIFunctionCall and TVMFFIFunctionCreate through its GOT. Without this, with the static
// rules waived, a kernel passed a stream object made from an integer to the registry's
// TVMTensorCopyToBytes and wrote 8 bytes at any address (red team, fourteenth session, 0.64-0.88x).
// What the gate reads follows tvm/ffi/c_api.h (stable across tvm-ffi's 0.1 releases): a call's
// arguments (TVMFFIAny: a type index, then 12 bytes) and a function object's code (the
// TVMFFIFunctionCell after the 24-byte TVMFFIObject header: its safe_call first).
struct FfiAny {
  int32_t type_index;
  uint32_t padding;
  uint64_t value;
};
static_assert(sizeof(FfiAny) == 16, "TVMFFIAny is 16 bytes");
constexpr int32_t kFfiOpaquePtr = 4;          // kTVMFFIOpaquePtr
constexpr size_t kFfiObjectHeaderBytes = 24;  // sizeof(TVMFFIObject)
using FfiSafeCall = int (*)(void*, const FfiAny*, int32_t, FfiAny*);
using FfiCallFn = int (*)(void*, FfiAny*, int32_t, FfiAny*);
using FfiCreateFn = int (*)(void*, FfiSafeCall, void (*)(void*), void**);
using FfiSetRaisedFn = void (*)(const char*, const char*);
FfiCallFn g_ffi_call = nullptr;
FfiCreateFn g_ffi_create = nullptr;
FfiSetRaisedFn g_ffi_set_raised = nullptr;

// A function a checked compile made (kFfiCreateApproved: CuTe DSL's TVM-FFI provider wraps the
// code it JIT'd so): made with ApprovedFfiCall as its code, which calls the DSL's through this
// closure, and kept among the approved handles until TVM-FFI deletes it. (TVM-FFI keeps a made
// function's code inside its own object, so the handle, not the code, is what the gate knows.)
struct ApprovedFfi {
  void* self;
  FfiSafeCall code;
  void (*deleter)(void*);
  void* handle;
};
std::mutex g_approved_ffi_mutex;
std::unordered_set<const void*>* g_approved_ffi = nullptr;

int ApprovedFfiCall(void* context, const FfiAny* args, int32_t num_args, FfiAny* result) {
  auto* approved = static_cast<ApprovedFfi*>(context);
  return approved->code(approved->self, args, num_args, result);
}
void ApprovedFfiDelete(void* context) {
  auto* approved = static_cast<ApprovedFfi*>(context);
  {
    std::lock_guard<std::mutex> lock(g_approved_ffi_mutex);
    if (g_approved_ffi != nullptr) g_approved_ffi->erase(approved->handle);
  }
  if (approved->deleter != nullptr) approved->deleter(approved->self);
  delete approved;
}

// Made by a checked compile: approved as above, or a function whose code (the TVMFFIFunctionCell
// after its header) lies in no loaded object: memory the gate let a checked compile make
// executable.
bool FfiMadeByDsl(const void* function) {
  {
    std::lock_guard<std::mutex> lock(g_approved_ffi_mutex);
    if (g_approved_ffi != nullptr && g_approved_ffi->count(function) != 0) return true;
  }
  const FfiSafeCall code = *reinterpret_cast<const FfiSafeCall*>(
      static_cast<const char*>(function) + kFfiObjectHeaderBytes);
  Dl_info info{};
  return dladdr(reinterpret_cast<void*>(code), &info) == 0;
}

int FfiRefused(const std::string& why) {
  if (g_ffi_set_raised != nullptr)
    g_ffi_set_raised("RuntimeError", ("blocked by the judge: " + why).c_str());
  return -1;
}

int GatedFfiCall(void* function, FfiAny* args, int32_t num_args, FfiAny* result) {
  bool opaque = false;
  for (int32_t i = 0; i < num_args && !opaque; ++i) opaque = args[i].type_index == kFfiOpaquePtr;
  if ((opaque || RawAddressFfiFunction(function)) && function != nullptr) {
    std::string why;
    if (!FfiCallAllowed(FfiMadeByDsl(function), opaque, &why)) return FfiRefused(why);
  }
  return g_ffi_call(function, args, num_args, result);
}

int GatedFfiCreate(void* self, FfiSafeCall code, void (*deleter)(void*), void** out) {
  std::string why;
  switch (FfiCreateDecision(reinterpret_cast<const void*>(code), &why)) {
    case kFfiCreateRefused:
      return FfiRefused(why);
    case kFfiCreateApproved: {
      auto* approved = new ApprovedFfi{self, code, deleter, nullptr};
      const int rc = g_ffi_create(approved, &ApprovedFfiCall, &ApprovedFfiDelete, out);
      if (rc != 0) {
        delete approved;  // `self` stays the caller's, as with the original
        return rc;
      }
      approved->handle = *out;
      std::lock_guard<std::mutex> lock(g_approved_ffi_mutex);
      if (g_approved_ffi == nullptr) g_approved_ffi = new std::unordered_set<const void*>();
      g_approved_ffi->insert(*out);
      return rc;
    }
    case kFfiCreatePlain:
      break;
  }
  return g_ffi_create(self, code, deleter, out);
}

// TVM-FFI's library is loaded with the extension that needs it, not into the global scope: its
// calls are found in it by name, once it is loaded (each walk asks until then).
int FindFfiLibrary(dl_phdr_info* info, size_t /*size*/, void* data) {
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "/libtvm_ffi.so") == nullptr)
    return 0;
  *static_cast<std::string*>(data) = info->dlpi_name;
  return 1;
}
void ResolveFfi() {
  if (g_ffi_set_raised != nullptr) return;
  std::string path;
  dl_iterate_phdr(FindFfiLibrary, &path);
  if (path.empty()) return;
  void* library = dlopen(path.c_str(), RTLD_NOLOAD | RTLD_LAZY);
  if (library == nullptr) return;
  auto call = reinterpret_cast<FfiCallFn>(dlsym(library, "TVMFFIFunctionCall"));
  auto create = reinterpret_cast<FfiCreateFn>(dlsym(library, "TVMFFIFunctionCreate"));
  auto set_raised =
      reinterpret_cast<FfiSetRaisedFn>(dlsym(library, "TVMFFIErrorSetRaisedFromCStr"));
  if (call != nullptr && create != nullptr && set_raised != nullptr) {
    g_ffi_set_raised = set_raised;
    g_ffi_create = create;
    g_ffi_call = call;
  }
  dlclose(library);  // still loaded: the extension holds it
}

// Every object's dlopen: a library by path only if the gate allows it (DlopenAllowed), and each
// object loaded held as the interpreter's loads are (HoldSequences).
using DlopenFn = void* (*)(const char*, int);
DlopenFn g_dlopen = nullptr;
void* GatedDlopen(const char* file, int flags);

// Whether a symbol an object imports is one of the C library's calls above, or TVM-FFI's.
bool GatedLibcName(const char* name) {
  return (name[0] == 'm' && (std::strcmp(name, "mmap") == 0 || std::strcmp(name, "mmap64") == 0 ||
                             std::strcmp(name, "mprotect") == 0)) ||
         (name[0] == 'p' && std::strcmp(name, "pkey_mprotect") == 0) ||
         (name[0] == 'd' && std::strcmp(name, "dlopen") == 0) ||
         (name[0] == 'T' && (std::strcmp(name, "TVMFFIFunctionCall") == 0 ||
                             std::strcmp(name, "TVMFFIFunctionCreate") == 0));
}

// The symbols replaced in every loaded object, each with the interpreter's own (found once).
struct Replacement {
  const char* symbol;
  void** original;
  uintptr_t replacement;
};
const Replacement kReplacements[] = {
    {"PySequence_Fast", reinterpret_cast<void**>(&g_sequence_fast),
     reinterpret_cast<uintptr_t>(&HeldSequenceFast)},
    {"PyNumber_Index", reinterpret_cast<void**>(&g_number_index),
     reinterpret_cast<uintptr_t>(&CheckedNumberIndex)},
    {"PyNumber_Long", reinterpret_cast<void**>(&g_number_long),
     reinterpret_cast<uintptr_t>(&CheckedNumberLong)},
    {"PyNumber_Float", reinterpret_cast<void**>(&g_number_float),
     reinterpret_cast<uintptr_t>(&CheckedNumberFloat)},
    {"PyNumber_AsSsize_t", reinterpret_cast<void**>(&g_number_as_ssize),
     reinterpret_cast<uintptr_t>(&CheckedNumberAsSsize)},
    {"PyLong_AsLong", reinterpret_cast<void**>(&g_long_as_long),
     reinterpret_cast<uintptr_t>(&CheckedLongAsLong)},
    {"PyLong_AsLongAndOverflow", reinterpret_cast<void**>(&g_long_as_long_overflow),
     reinterpret_cast<uintptr_t>(&CheckedLongAsLongOverflow)},
    {"PyLong_AsLongLong", reinterpret_cast<void**>(&g_long_as_long_long),
     reinterpret_cast<uintptr_t>(&CheckedLongAsLongLong)},
    {"PyLong_AsLongLongAndOverflow", reinterpret_cast<void**>(&g_long_as_long_long_overflow),
     reinterpret_cast<uintptr_t>(&CheckedLongAsLongLongOverflow)},
    {"PyFloat_AsDouble", reinterpret_cast<void**>(&g_float_as_double),
     reinterpret_cast<uintptr_t>(&CheckedFloatAsDouble)},
    {"PyObject_IsTrue", reinterpret_cast<void**>(&g_object_is_true),
     reinterpret_cast<uintptr_t>(&CheckedIsTrue)},
    {"PyObject_Not", reinterpret_cast<void**>(&g_object_not),
     reinterpret_cast<uintptr_t>(&CheckedNot)},
    {"PyObject_Size", reinterpret_cast<void**>(&g_object_size),
     reinterpret_cast<uintptr_t>(&CheckedObjectSize)},
    {"PyObject_Length", reinterpret_cast<void**>(&g_object_length),
     reinterpret_cast<uintptr_t>(&CheckedObjectLength)},
    {"PySequence_Size", reinterpret_cast<void**>(&g_sequence_size),
     reinterpret_cast<uintptr_t>(&CheckedSequenceSize)},
    {"PySequence_Length", reinterpret_cast<void**>(&g_sequence_length),
     reinterpret_cast<uintptr_t>(&CheckedSequenceLength)},
    {"PyMapping_Size", reinterpret_cast<void**>(&g_mapping_size),
     reinterpret_cast<uintptr_t>(&CheckedMappingSize)},
    {"PyMapping_Length", reinterpret_cast<void**>(&g_mapping_length),
     reinterpret_cast<uintptr_t>(&CheckedMappingLength)},
    {"PyObject_GetAttr", reinterpret_cast<void**>(&g_get_attr),
     reinterpret_cast<uintptr_t>(&CheckedGetAttr)},
    {"PyObject_GetAttrString", reinterpret_cast<void**>(&g_get_attr_string),
     reinterpret_cast<uintptr_t>(&CheckedGetAttrString)},
    {"PyObject_HasAttr", reinterpret_cast<void**>(&g_has_attr),
     reinterpret_cast<uintptr_t>(&CheckedHasAttr)},
    {"PyObject_HasAttrString", reinterpret_cast<void**>(&g_has_attr_string),
     reinterpret_cast<uintptr_t>(&CheckedHasAttrString)},
    {"PyObject_HasAttrWithError", reinterpret_cast<void**>(&g_has_attr_with_error),
     reinterpret_cast<uintptr_t>(&CheckedHasAttrWithError)},
    {"PyObject_HasAttrStringWithError", reinterpret_cast<void**>(&g_has_attr_string_with_error),
     reinterpret_cast<uintptr_t>(&CheckedHasAttrStringWithError)},
    {"_PyObject_LookupAttr", reinterpret_cast<void**>(&g_lookup_attr),
     reinterpret_cast<uintptr_t>(&CheckedLookupAttr)},
    {"PyObject_GetOptionalAttr", reinterpret_cast<void**>(&g_get_optional_attr),
     reinterpret_cast<uintptr_t>(&CheckedGetOptionalAttr)},
    {"PyObject_GetOptionalAttrString", reinterpret_cast<void**>(&g_get_optional_attr_string),
     reinterpret_cast<uintptr_t>(&CheckedGetOptionalAttrString)},
    {"mmap", reinterpret_cast<void**>(&g_mmap), reinterpret_cast<uintptr_t>(&GatedMmap)},
    {"mmap64", reinterpret_cast<void**>(&g_mmap64), reinterpret_cast<uintptr_t>(&GatedMmap64)},
    {"mprotect", reinterpret_cast<void**>(&g_mprotect),
     reinterpret_cast<uintptr_t>(&GatedMprotect)},
    {"pkey_mprotect", reinterpret_cast<void**>(&g_pkey_mprotect),
     reinterpret_cast<uintptr_t>(&GatedPkeyMprotect)},
    {"dlopen", reinterpret_cast<void**>(&g_dlopen), reinterpret_cast<uintptr_t>(&GatedDlopen)},
    {"TVMFFIFunctionCall", reinterpret_cast<void**>(&g_ffi_call),
     reinterpret_cast<uintptr_t>(&GatedFfiCall)},
    {"TVMFFIFunctionCreate", reinterpret_cast<void**>(&g_ffi_create),
     reinterpret_cast<uintptr_t>(&GatedFfiCreate)},
};

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#endif

struct Walk {
  const char* symbol;      // with target: the one symbol replaced (when `all` is false)
  uintptr_t target;        // the replacement's address
  uintptr_t own_base;      // this module's load address (its own calls stay the originals)
  uintptr_t only_address;  // when not 0, only the object loaded over this address
  std::vector<std::pair<std::string, int>> patched;  // object, slots set by this walk
  int held_before = 0;                               // slots a previous walk set
  std::string error;
  bool all = false;  // every symbol of kReplacements in one pass, instead of `symbol`
};

// A dynamic section's address: glibc rewrites most of them to run-time addresses when it loads an
// object; others (and every object on some platforms) keep the link-time value.
uintptr_t Address(uintptr_t value, uintptr_t base) { return value < base ? value + base : value; }

bool Write(uintptr_t slot, uintptr_t value, bool read_only) {
  if (!read_only) {
    *reinterpret_cast<uintptr_t*>(slot) = value;
    return true;
  }
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* start = reinterpret_cast<void*>(slot & ~(page - 1));
  const size_t length =
      ((slot + sizeof(uintptr_t) + page - 1) & ~(page - 1)) - reinterpret_cast<uintptr_t>(start);
  if (mprotect(start, length, PROT_READ | PROT_WRITE) != 0) return false;
  *reinterpret_cast<uintptr_t*>(slot) = value;
  mprotect(start, length, PROT_READ);  // RELRO's protection again
  return true;
}

int PatchObject(dl_phdr_info* info, size_t /*size*/, void* data) {
#if defined(__x86_64__) || defined(__aarch64__)
  auto* walk = static_cast<Walk*>(data);
  const uintptr_t base = info->dlpi_addr;
  if (base == walk->own_base) return 0;
  if (walk->only_address != 0) {
    bool inside = false;
    for (int i = 0; i < info->dlpi_phnum && !inside; ++i) {
      const ElfW(Phdr)& header = info->dlpi_phdr[i];
      const uintptr_t start = base + header.p_vaddr;
      inside = header.p_type == PT_LOAD && walk->only_address >= start &&
               walk->only_address < start + header.p_memsz;
    }
    if (!inside) return 0;
  }
  const ElfW(Dyn)* dynamic = nullptr;
  uintptr_t relro_start = 0, relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + header.p_vaddr);
    } else if (header.p_type == PT_GNU_RELRO) {
      relro_start = base + header.p_vaddr;
      relro_end = relro_start + header.p_memsz;
    }
  }
  if (dynamic == nullptr) return 0;
  uintptr_t symtab = 0, strtab = 0, jmprel = 0, rela = 0;
  size_t pltrelsz = 0, relasz = 0, strsz = 0;
  int64_t pltrel = DT_RELA;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        symtab = Address(d->d_un.d_ptr, base);
        break;
      case DT_STRTAB:
        strtab = Address(d->d_un.d_ptr, base);
        break;
      case DT_STRSZ:
        strsz = d->d_un.d_val;
        break;
      case DT_JMPREL:
        jmprel = Address(d->d_un.d_ptr, base);
        break;
      case DT_PLTRELSZ:
        pltrelsz = d->d_un.d_val;
        break;
      case DT_PLTREL:
        pltrel = static_cast<int64_t>(d->d_un.d_val);
        break;
      case DT_RELA:
        rela = Address(d->d_un.d_ptr, base);
        break;
      case DT_RELASZ:
        relasz = d->d_un.d_val;
        break;
      default:
        break;
    }
  }
  if (symtab == 0 || strtab == 0 || pltrel != DT_RELA) return 0;
  const auto* symbols = reinterpret_cast<const ElfW(Sym)*>(symtab);
  const char* names = reinterpret_cast<const char*>(strtab);
  // TVM-FFI's C API is routed in Python's extension modules only (its binding): what the kernel
  // reaches from Python. TVM's own libraries call it inside calls the binding let through.
  const char* object_name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const bool python_extension = std::strstr(object_name, ".cpython-") != nullptr ||
                                std::strstr(object_name, ".abi3.so") != nullptr;
  int patched = 0;
  auto scan = [&](uintptr_t table, size_t bytes) {
    if (table == 0) return;
    const auto* entries = reinterpret_cast<const ElfW(Rela)*>(table);
    for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
      const uint32_t type = ELF64_R_TYPE(entries[i].r_info);
      if (type != kJumpSlot && type != kGlobDat) continue;
      const ElfW(Sym)& symbol = symbols[ELF64_R_SYM(entries[i].r_info)];
      if (symbol.st_shndx != SHN_UNDEF) continue;  // the object's own definition
      if (strsz != 0 && symbol.st_name >= strsz) continue;
      const char* name = names + symbol.st_name;
      uintptr_t target = 0;
      if (!walk->all) {
        if (std::strcmp(name, walk->symbol) == 0) target = walk->target;
      } else if ((name[0] == 'P' && name[1] == 'y') || (name[0] == '_' && name[1] == 'P') ||
                 GatedLibcName(name)) {
        for (const Replacement& r : kReplacements) {
          if (*r.original != nullptr && std::strcmp(name, r.symbol) == 0) {
            target = r.replacement;
            break;
          }
        }
      }
      if (target == 0) continue;
      if (name[0] == 'T' && !python_extension) continue;
      const uintptr_t slot = base + entries[i].r_offset;
      if (*reinterpret_cast<const uintptr_t*>(slot) == target) {
        ++walk->held_before;
        continue;
      }
      if (!Write(slot, target, slot >= relro_start && slot < relro_end)) {
        walk->error = std::string("mprotect: ") + std::strerror(errno) + " (" +
                      (info->dlpi_name != nullptr ? info->dlpi_name : "?") + ")";
        return;
      }
      ++patched;
    }
  };
  scan(jmprel, pltrelsz);
  scan(rela, relasz);
  if (patched > 0) {
    walk->patched.emplace_back(info->dlpi_name != nullptr && info->dlpi_name[0] != '\0'
                                   ? info->dlpi_name
                                   : "(the executable)",
                               patched);
  }
  return walk->error.empty() ? 0 : 1;
#else
  (void)info;
  (void)data;
  return 0;
#endif
}

uintptr_t OwnBase() {
  Dl_info own{};
  if (dladdr(reinterpret_cast<void*>(&HeldSequenceFast), &own) == 0) return 0;
  return reinterpret_cast<uintptr_t>(own.dli_fbase);
}

// Every loaded object's slots of each replaced symbol set to its replacement (kReplacements), in
// one pass over each object's relocations.
Walk HoldSequences() {
  ResolveFfi();
  Walk walk{nullptr, 0, OwnBase(), 0, {}, 0, {}, true};
  dl_iterate_phdr(PatchObject, &walk);
  return walk;
}

// The interpreter loads extension modules with dlopen: the object that does (libpython, or the
// executable when it is linked in) gets this one in its slot, so that a module the kernel's import
// loads later is held before its code runs, not at the judge's next walk.
// The loader's count of objects added (dl_phdr_info::dlpi_adds), 0 where it gives none: a load
// that added none (a library already loaded) needs no walk.
int ReadAdds(dl_phdr_info* info, size_t size, void* data) {
  if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
    *static_cast<unsigned long long*>(data) = info->dlpi_adds;
  return 1;
}
unsigned long long g_walked_adds = 0;

void* HoldingDlopen(const char* file, int flags) {
  void* handle = dlopen(file, flags);
  if (handle != nullptr) {
    unsigned long long adds = 0;
    dl_iterate_phdr(ReadAdds, &adds);
    if (adds == 0 || adds != g_walked_adds) {
      HoldSequences();
      g_walked_adds = adds;
    }
  }
  return handle;
}

void* GatedDlopen(const char* file, int flags) {
  if (!DlopenAllowed(file)) return nullptr;
  return HoldingDlopen(file, flags);
}

}  // namespace

void RegisterSequenceHold(py::module_& m) {
  m.def(
      "hold_sequence_items",
      [] {
#if !defined(__x86_64__) && !defined(__aarch64__)
        throw py::type_error("hold_sequence_items: only on x86-64 and AArch64 Linux");
#else
        // One the interpreter does not export (an alias a later version drops) is left out:
        // nothing can link to it either.
        for (const Replacement& r : kReplacements) {
          if (*r.original == nullptr) *r.original = dlsym(RTLD_DEFAULT, r.symbol);
        }
        if (g_sequence_fast == nullptr)
          throw py::type_error("hold_sequence_items: no PySequence_Fast");
        if (g_generic.index == nullptr) {
          // The interpreter's generic slots, those of a class whose hooks are Python functions:
          // numbers.Integral defines __index__, __int__ and __float__ in Python.
          py::object probe = py::module_::import("numbers").attr("Integral");
          const PyNumberMethods* number =
              reinterpret_cast<PyTypeObject*>(probe.ptr())->tp_as_number;
          if (number == nullptr || number->nb_index == nullptr || number->nb_int == nullptr ||
              number->nb_float == nullptr)
            throw py::type_error("hold_sequence_items: numbers.Integral converts in C here");
          // numbers.Complex (Integral's base) defines __bool__ in Python, and
          // collections.abc.Sized __len__.
          py::object sized = py::module_::import("collections.abc").attr("Sized");
          const auto* sized_type = reinterpret_cast<PyTypeObject*>(sized.ptr());
          if (number->nb_bool == nullptr || sized_type->tp_as_sequence == nullptr ||
              sized_type->tp_as_sequence->sq_length == nullptr ||
              sized_type->tp_as_mapping == nullptr ||
              sized_type->tp_as_mapping->mp_length == nullptr)
            throw py::type_error("hold_sequence_items: a probe class's hooks are not in Python");
          g_generic = {number->nb_index,
                       number->nb_int,
                       number->nb_float,
                       number->nb_bool,
                       sized_type->tp_as_sequence->sq_length,
                       sized_type->tp_as_mapping->mp_length};
        }
        const uintptr_t own = OwnBase();
        if (own == 0) throw py::type_error("hold_sequence_items: this module's address not found");
        // Every object's dlopen is among the replacements (GatedDlopen: the gate, then the
        // hold of what it loaded): the walk sets the interpreter's too, and the walk over the
        // object that loads extension modules after it finds it held.
        Walk walk = HoldSequences();
        if (!walk.error.empty()) throw py::type_error("hold_sequence_items: " + walk.error);
        Walk loader{"dlopen", reinterpret_cast<uintptr_t>(&GatedDlopen),
                    own,      reinterpret_cast<uintptr_t>(&PyImport_ImportModule),
                    {},       0,
                    {}};
        dl_iterate_phdr(PatchObject, &loader);
        if (!loader.error.empty()) throw py::type_error("hold_sequence_items: " + loader.error);
        py::dict out;
        for (const auto& [name, slots] : walk.patched) out[py::str(name)] = slots;
        return py::make_tuple(out, walk.held_before,
                              loader.patched.size() + loader.held_before > 0);
#endif
      },
      "Every loaded object's calls of PySequence_Fast (numpy's array coercion, torch's argument "
      "parsers, the json encoder ...) routed to one that returns a tuple of a list's items instead "
      "of the list, so that the caller's borrowed item array cannot be emptied and freed while it "
      "calls into the items; their calls of the C API's conversions (PyNumber_Index, "
      "PyNumber_Long, PyNumber_Float, PyNumber_AsSsize_t, PyLong_As*, PyFloat_AsDouble) and "
      "truth and length questions (PyObject_IsTrue, PyObject_Not, PyObject_Size, "
      "PySequence_Size, PyMapping_Size and their _Length aliases) to ones "
      "that refuse a conversion hook of kernel code before it runs (a runtime.native_code "
      "violation; installed code's and C hooks convert as before); their attribute look-ups "
      "(PyObject_GetAttr, _PyObject_LookupAttr, PyObject_HasAttr ...) to ones that refuse a "
      "raw-memory protocol (__array_interface__, __array_struct__, __cuda_array_interface__) "
      "answered by anything but C or installed code; their calls that make memory executable "
      "(mmap, mmap64, mprotect, pkey_mprotect with PROT_EXEC) through the worker's gate on "
      "native code (arm_exec_gate); and the interpreter's dlopen "
      "to one that does the same for each "
      "object it loads from then on. Idempotent. Returns ({object: slots set now}, slots already "
      "set by an earlier call, whether the interpreter's dlopen is held).");
}

}  // namespace mkb::python
