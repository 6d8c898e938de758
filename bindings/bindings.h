// Registration functions of the _core module's parts, one per subsystem.
#ifndef BINDINGS_BINDINGS_H_
#define BINDINGS_BINDINGS_H_

#include <pybind11/pybind11.h>

#include <string>
#include <tuple>
#include <vector>

namespace mkb::python {

void RegisterSuite(pybind11::module_& module);
void RegisterJudge(pybind11::module_& module);
void RegisterRuntimeAuditHook(pybind11::module_& module);
void RegisterSequenceHold(pybind11::module_& module);
void RegisterKernelThread(pybind11::module_& module);
void RegisterCuda(pybind11::module_& module);
void RegisterStats(pybind11::module_& module);
void RegisterStore(pybind11::module_& module);
void RegisterProtocol(pybind11::module_& module);
void RegisterAgent(pybind11::module_& module);

// The watch on kernel code outside its calls (runtime_audit_hook.cc): on, any frame of kernel.py
// that runs is a runtime.outside_call finding. A no-op while no runtime audit is installed.
void SetKernelWatch(bool on);

// A violation the worker found outside the audit hook (the kernel's thread's census of threads),
// reported with the hook's findings (take_runtime_findings); recorded only in record mode. A no-op
// while no runtime audit is installed. With the GIL held.
void RecordRuntimeViolation(const std::string& code, const std::string& message,
                            const std::string& evidence);

// Called by the worker's replacements of the C API's conversions (sequence_hold.cc) when the
// type of `object` converts through Python (its slot is the interpreter's generic one): whether
// that hook, `hook` ("__index__", "__int__", "__float__") as the type resolves it, is not a
// function of installed code; then a runtime.native_code violation is recorded and, unless the
// audit only records, PermissionError set and true returned. With the GIL held.
bool RefuseKernelConversion(PyObject* object, const char* hook);

// Called by the worker's replacements of the C API's attribute look-ups (sequence_hold.cc): when
// `name` is a raw-memory protocol (__array_interface__, __array_struct__,
// __cuda_array_interface__: numpy and torch read or write the address it names), whether
// `object` would answer it from anything but C or installed code (its own attribute dictionary,
// which a library's setattr under a name taken from data fills; a property, function or
// __getattr__ of kernel code); then a runtime.native_code violation is recorded and, unless the
// audit only records, PermissionError set and true returned. With the GIL held.
bool RefuseRawMemoryProtocol(PyObject* object, PyObject* name);
bool RefuseRawMemoryProtocol(PyObject* object, const char* name);

// The gate on native code made at run time, asked by the worker's replacements of the C
// library's calls that make memory executable (sequence_hold.cc) when they are asked for
// PROT_EXEC: true (go on) until the worker arms the gate (arm_exec_gate, once kernel.py may run),
// and after it only while a checked compile of the DSL's (checked_compile) runs for the DSL's
// own frames: the innermost DSL entry point on the calling thread's stack, with no frame of the
// kernel's in between, is the one whose checked compile approved it. Otherwise a
// runtime.native_code violation is recorded (naming `call`, `length` and the object at
// `caller`) and false returned, unless the audit only records. Takes the GIL where the thread
// has a Python thread state; a thread without one is refused.
bool ExecMemoryAllowed(const char* call, size_t length, const void* caller);

// The same gate's rule for a shared library loaded by path once armed (every object's dlopen,
// sequence_hold.cc): an installed, read-only file (the system's library folders, the
// interpreter's, the code, DSL and judge roots, none writable); else a runtime.native_code
// violation and false, unless the audit only records.
bool DlopenAllowed(const char* file);

// The same gate's rules for TVM-FFI's C API (every Python extension's TVMFFIFunctionCall and
// TVMFFIFunctionCreate, sequence_hold.cc), once armed, on a thread with a Python thread state:
// - FfiCallAllowed: a call of a function that no checked compile made (the caller passes
//   `made_by_dsl`: a checked compile created it, or its code lies in no loaded object) with an
//   opaque pointer among its arguments (`opaque_pointer`: a pointer made from a number through a
//   stream or ctypes object), or of one of the registry's raw-address functions
//   (RawAddressFfiFunctions), is refused, inside a DSL entry call too (a C callable of the
//   kernel's may be its callback).
// - FfiCreateDecision: a function is made only with TVM-FFI's Python-callback trampoline for its
//   code (learned when the gate was armed), or inside a DSL entry call with code in no loaded
//   object (what the DSL's JIT made); where a checked compile approved that entry call it is the
//   DSL's compiled function (kFfiCreateApproved: the caller marks it, so that its calls pass).
// A refusal records a runtime.native_code violation and, unless the audit only records, returns
// false / kFfiCreateRefused, the reason in `*why`.
bool FfiCallAllowed(bool made_by_dsl, bool opaque_pointer, std::string* why);
enum FfiCreate { kFfiCreatePlain, kFfiCreateApproved, kFfiCreateRefused };
FfiCreate FfiCreateDecision(const void* safe_call, std::string* why);
// Whether the registry function `function` (a TVM-FFI function handle) is one of
// RawAddressFfiFunctions, as looked up when the gate was armed. No GIL needed.
bool RawAddressFfiFunction(const void* function);

// Whether a thread state in an interpreter's list may be read (its id, frame, links). CPython
// 3.11 links a thread state being made by a native thread (PyGILState_Ensure needs no GIL) before
// it initialises it; 3.12 initialises first. With the GIL held.
inline bool ThreadStateInitialised(PyThreadState* t) {
#if PY_VERSION_HEX < 0x030C0000
  return t->_initialized != 0;
#else
  (void)t;
  return true;
#endif
}

// An event the worker raises itself (one the interpreter does not): decided and, when refused,
// recorded as the audit hook's events are, with PermissionError set (returns -1); 0 while no
// runtime audit is installed or kernel.py's import has not begun. With the GIL held.
int AuditJudgeEvent(const char* event);

// The guard on memory reached through ctypes objects (ctypes_guard.cc): every operation that
// goes through a stored address raises "ctypes.memory/<operation>", and a foreign function's
// call "ctypes.foreign_call", through AuditJudgeEvent.
// Installed with the runtime audit, once.
void InstallCtypesGuard();

// Whether an object.__setattr__ event's arguments give a ctypes object another class (or any
// object a ctypes class); false before InstallCtypesGuard. With the GIL held.
bool CtypesClassChange(PyObject* args);

// A traceback's (file, line, function) entries, innermost last, read in C (kernel_thread.cc).
std::vector<std::tuple<std::string, int, std::string>> TracebackEntries(PyObject* traceback);

}  // namespace mkb::python

#endif  // BINDINGS_BINDINGS_H_
