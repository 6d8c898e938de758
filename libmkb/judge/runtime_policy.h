// The worker's runtime audit policy (SPEC §3 "Trust boundary", docs/judge.md): for each Python
// audit event raised in the worker while it imports kernel.py and while it calls solve, whether
// it is allowed. Dangerous events are refused whoever raises them — kernel.py, torch, the
// standard library — and the DSLs' own needs are allowed by name: by the module that raises them
// (the DSL's compiler exec-ing the code it generated) or by what they touch (the DSL reading its
// own package, writing its cache in the workspace).
//
// The worker's hook (installed in C, so nothing in Python can remove or patch it) extracts the
// event's caller and arguments and asks DecideAuditEvent; a refusal raises PermissionError where
// the event was raised and becomes a violation finding.
#ifndef LIBMKB_JUDGE_RUNTIME_POLICY_H_
#define LIBMKB_JUDGE_RUNTIME_POLICY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "mkb/v1/common.pb.h"

namespace mkb {

struct RuntimePolicyConfig {
  std::string kernel_path;  // kernel.py (read, imported once)
  v1::Dsl dsl = v1::DSL_UNSPECIFIED;
  // The standard library's directories (its frames are looked through to find who asked).
  std::vector<std::string> stdlib_roots;
  // Read-only trees whose code may run and whose files may be read: site-packages, the
  // interpreter's prefixes.
  std::vector<std::string> code_roots;
  // The variant's DSL toolchain (site directories): its modules may compile and exec the code
  // they generate, use ctypes, and read frames, where they run for the judge (before kernel.py's
  // import), as modules of theirs are imported, or inside one of the DSL's entry points that the
  // worker wraps, called with no frame of the kernel's in between (AuditCaller::in_dsl_entry).
  std::vector<std::string> dsl_roots;
  // The worker's wrapper of the DSL's entry points (judge/dsl_entry.py): a frame of its `entry`
  // marks where the DSL's work on kernel.py's behalf begins.
  std::string dsl_entry_file;
  // The judge's own worker code (its frames format tracebacks and snapshot outputs).
  std::vector<std::string> judge_roots;
  // Where the worker may write (its workspace: HOME, TMPDIR, the DSLs' caches).
  std::vector<std::string> writable_roots;
  // Single files that may be read besides the trees above (/dev/null, /dev/urandom, /proc/self
  // files that are not memory).
  std::vector<std::string> readable_paths;
};

// Who raised an event: the innermost Python frame's file, and the innermost frame outside the
// standard library and the import system (empty when there is none).
struct AuditCaller {
  std::string direct_file;
  std::string direct_function;
  std::string library_file;
  // For code events (exec, compile, ...) raised while a module is being imported: the files of
  // the frames from the innermost one down to the module body the import system runs, inclusive
  // (empty when no import is under way, or the event is of another kind).
  std::vector<std::string> import_chain;
  // kernel.py's import has begun: from then on the judge's own files confer no trust (kernel.py
  // could call a judge function with a callback that raises the event, or leave a finaliser of C
  // callables that fires in the worker's frames), and no code of them may be made (a copy of a
  // judge module loaded under another name; the worker imports nothing of the judge's after
  // Prepare).
  bool kernel_started = false;
  // The frame that called the innermost one (empty when there is none).
  std::string parent_file;
  std::string parent_function;
  // The innermost frame's current line, and for frame events raised in the standard library its
  // source text: a reader is trusted only where its own code calls sys._getframe, not where a C
  // callable it runs for its caller (a lazy map over the caller's arguments) does.
  int direct_line = 0;
  std::string direct_source_line;
  // Walking out from the innermost frame, a frame of the DSL entry wrapper (config.dsl_entry_file,
  // function `entry`) comes before any frame of the kernel's: kernel.py, code made at run time
  // once its import began, any file that is not installed and read-only (InstalledCode). Then
  // the DSL's code between the event and the entry point runs as the DSL's entry called it; the
  // same DSL code called from kernel.py (a DSL helper that calls back whatever it is given)
  // does not lend its trust.
  bool in_dsl_entry = false;
  // The same walk passed a frame of one of the DSL's front ends (DslFrontEnd: a decorator, a
  // decorated function's call) before any frame of the kernel's: the DSL defining or tracing a
  // kernel for kernel.py, which reads its caller's frames and generates code, but loads and
  // calls no native code (ctypes is trusted in_dsl_entry only).
  bool in_dsl_front_end = false;
  // For ctypes / mmap events: the module of `library_file` uses ctypes (or mmap) itself, by name
  // in its source. The DSL's native layer (its executors, its DLPack and driver adapters) does;
  // the DSL's tracer, which calls the function being compiled, does not: cute.compile of a
  // functools.partial over ctypes.CDLL got its dlopen from base_dsl/dsl.py.
  bool library_native = false;
};

struct RuntimeDecision {
  bool allow = true;
  std::string code;    // runtime.* finding code when refused
  std::string reason;  // one line
};

// `event` and its first two arguments as text (a path, a mode, a module name, a code object's
// file name, an attribute name; "fd:N" for an integer descriptor).
RuntimeDecision DecideAuditEvent(const RuntimePolicyConfig& config, absl::string_view event,
                                 const AuditCaller& caller, absl::string_view arg0,
                                 absl::string_view arg1);

// Whether `file` (a frame's code file) is installed code the kernel cannot have written: under
// the standard library, the installed packages, the DSL or the judge, not writable, not
// kernel.py; the import system's frozen modules too.
bool InstalledCode(const RuntimePolicyConfig& config, absl::string_view file);

// Whether a shared library at `path` (resolved: no link) may be loaded once kernel.py may run
// (the worker's gate on native code): a file of the system's library folders (/usr, /lib, /lib64,
// /opt) or of the interpreter's, code, DSL or judge roots, and none writable.
bool InstalledLibrary(const RuntimePolicyConfig& config, absl::string_view path);

// Whether `function` of `file` is one of the front ends of the variant's DSL that kernel.py
// calls to define or trace its kernels: CuTe DSL's @cute.jit / @cute.kernel and a decorated
// function's call; TVMScript's @T.prim_func, @T.macro, @T.inline, @I.ir_module and its parser.
// These read their caller's frames (the decorated function's globals and closure) and
// generate code; wrapping them would put a frame of the judge's where they look.
bool DslFrontEnd(const RuntimePolicyConfig& config, absl::string_view file,
                 absl::string_view function);

// Whether `event` makes or runs code at run time (exec, compile, a code or function object
// made); such events get an AuditCaller::import_chain. marshal.load(s) also turns bytes into
// code but only ever reads a .pyc here: it is decided apart.
bool IsRuntimeCodeEvent(absl::string_view event);

// Whether `path` (absolute, normalised) lies in one of `roots`.
bool PathUnder(absl::string_view path, const std::vector<std::string>& roots);

// ATen's private operators (one leading underscore, not a dunder) that the worker refuses on
// torch's namespaces, its tensor type and torch.ops.aten once kernel.py loads: every one of
// `operator_names` (the dispatcher's aten operators by name) but the exceptions the static audit
// allows too (audit_rule_tables.cc: torch._unique2, torch._scaled_mm...). Red team rounds 24-26
// (2026-12-06) reached raw memory through private helpers that trust their callers.
std::vector<std::string> RefusedPrivateOperators(const std::vector<std::string>& operator_names);

// tvm.compile of a TIR module, checked by the worker before TVM builds it (dsl_entry.py): the op
// names of every call in its PrimFuncs ("tirx.call_extern", any namespace) and the kinds of the
// targets it is built for. Empty when allowed; else why not (a runtime.native_code finding).
// TIR compiled for the host calls any symbol of the process by name (call_extern and its kin, a
// packed call) and indexes its buffers unchecked: raw memory and native calls with no audit event
// (red team, 2026-12-06: 3.3-5.3x strict through TVM's in-process LLVM). A kernel's TIR is for
// the GPU. TVM's own check refuses a buffer access in host code, but not its packed-API builtins:
// tvm_struct_get / tvm_struct_set on a handle cast or reinterpreted from an integer read and write
// any address from the host part of a cuda PrimFunc (red team, thirteenth session, strict), so
// those builtins, tvm_stack_*, a cast or reinterpret to a handle, a handle parameter no buffer
// matches and a handle bound by a let (TVM's check does not follow it: the third red team's
// T.decl_buffer over a null handle, indexed at any address) are refused too (dsl_facts.tir_facts
// names them "cast_to_handle", "reinterpret_to_handle", "unmatched_handle_param", "let_handle").
std::string TirCompileRefusal(const std::vector<std::string>& call_ops,
                              const std::vector<std::string>& target_kinds);

// A CuTe DSL compile, checked by the worker before the DSL's pipeline runs (dsl_entry.py): the op
// names of its host code (every op outside its kernels: cuda.kernel, gpu.func, gpu.module). Empty
// when allowed; else why not (a runtime.native_code finding). A @cute.jit function is host code
// compiled to native code in the worker: a load, store, copy, atomic, fill, GEMM or print of a
// tensor there, or a pointer from an integer (cute.inttoptr), reads and writes any address of the
// worker with no audit event (red teams, thirteenth session: the interpreter's signal table
// written from a @cute.jit function, 7.4x strict; then cute.basic_copy through a tensor's
// pointer moved by an offset). Allowed: the ops of the dialects host code is made of (arith, scf,
// cf, func, math, index, cuda, cute, cute_nvgpu, builtin) that name no memory access, and the
// builders (make_*: a TMA descriptor's included); any other dialect (llvm, memref, vector, nvvm)
// is the DSL's IR written by hand. A kernel's memory is touched on the GPU.
std::string CuteHostRefusal(const std::vector<std::string>& host_ops);

// TVM-FFI's registry functions that take an address as a plain integer (a C function pointer, an
// object's address), which the worker's gate on TVM-FFI calls refuses from Python once kernel.py
// may run, whatever the arguments (sequence_hold.cc, GatedFfiCall). Functions that take a pointer
// as one (void*: TVMTensorCopyToBytes, ffi.FunctionFromExternC, a stream setter) need no entry
// here: an opaque pointer reaches only a function a checked compile made. Found by reading tvm-ffi
// 0.1.12's registrations for integers cast to pointers (ffi.MakeFieldSetter: a setter that calls
// the function at one integer with the other as its first argument); TVM's own C++ was not read
// this way (docs/judge.md, residuals).
const std::vector<std::string>& RawAddressFfiFunctions();

// The runtime finding codes with a line each (docs, --help).
std::vector<std::pair<std::string, std::string>> RuntimeAuditCodes();

}  // namespace mkb

#endif  // LIBMKB_JUDGE_RUNTIME_POLICY_H_
