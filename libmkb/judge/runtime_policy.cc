#include "libmkb/judge/runtime_policy.h"

#include <fcntl.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libmkb/judge/detail/audit_rule_tables.h"
#include "libmkb/judge/static_audit.h"

namespace mkb {
namespace {

RuntimeDecision Allow() { return {}; }

RuntimeDecision Deny(const char* code, std::string reason) {
  RuntimeDecision d;
  d.allow = false;
  d.code = code;
  d.reason = std::move(reason);
  return d;
}

bool OneOf(absl::string_view event, std::initializer_list<absl::string_view> names) {
  for (absl::string_view n : names) {
    if (event == n) return true;
  }
  return false;
}

// The standard library file `file` is, relative to its root ("collections/__init__.py"), or "".
std::string StdlibModule(const RuntimePolicyConfig& config, absl::string_view file) {
  for (const std::string& root : config.stdlib_roots) {
    if (!root.empty() && absl::StartsWith(file, absl::StrCat(root, "/")))
      return std::string(file.substr(root.size() + 1));
  }
  return "";
}

// Standard-library modules that generate code from names they are given (namedtuple,
// dataclasses) and whose exec / compile is therefore allowed where they raise it.
bool StdlibCodegen(const RuntimePolicyConfig& config, absl::string_view event,
                   const AuditCaller& caller) {
  const std::string module = StdlibModule(config, caller.direct_file);
  if (module == "collections/__init__.py" || module == "dataclasses.py") return true;
  // typing.ForwardRef compiles the annotation string it is given (CuTe DSL's numeric types
  // subscript Union with forward references as kernel.py's code adds them): a code object,
  // which runs only through eval, an exec event decided on its own.
  return event == "compile" && module == "typing.py" && caller.direct_function == "__init__";
}

// Standard-library code that reads a frame (sys._getframe) for a name or a warning's location
// and hands no frame back to its caller. logging's currentframe() hands the frame back: only its
// call from findCaller (which keeps it) is a reader. functools reads no frame of its own; its
// update_wrapper / wraps copy attributes named by the caller, frames among them.
bool StdlibFrameReader(const RuntimePolicyConfig& config, const AuditCaller& caller) {
  // Its own line calls sys._getframe: not a map or generator of the caller's that the reader
  // happens to be iterating when the event is raised (namedtuple over a lazy map of
  // sys._getframe handed the frame out).
  if (!absl::StrContains(caller.direct_source_line, "_getframe")) return false;
  // typing_extensions (the standard typing module's backport, a dependency of torch and the
  // DSLs) reads its caller's module name the way typing does.
  if (absl::EndsWith(caller.direct_file, "-packages/typing_extensions.py") &&
      PathUnder(caller.direct_file, config.code_roots)) {
    return true;
  }
  const std::string module = StdlibModule(config, caller.direct_file);
  if (module == "logging/__init__.py") {
    return StdlibModule(config, caller.parent_file) == "logging/__init__.py" &&
           caller.parent_function == "findCaller";
  }
  for (absl::string_view m : {"collections/__init__.py", "typing.py", "enum.py", "warnings.py",
                              "dataclasses.py", "abc.py"}) {
    if (module == m) return true;
  }
  return false;
}

bool FromImportSystem(const AuditCaller& caller) {
  // zipimport too: an archive is one more place the import system reads code from.
  return absl::StartsWith(caller.direct_file, "<frozen importlib") ||
         absl::StartsWith(caller.direct_file, "<frozen zipimport");
}

// kernel.py's bytecode cache (<folder>/__pycache__/kernel.<tag>.pyc), which the import system
// looks for when it imports kernel.py.
bool KernelBytecode(const RuntimePolicyConfig& config, absl::string_view file) {
  const size_t slash = config.kernel_path.rfind('/');
  if (slash == std::string::npos) return false;
  const std::string stem = config.kernel_path.substr(slash + 1);
  const size_t dot = stem.rfind('.');
  const std::string prefix =
      absl::StrCat(config.kernel_path.substr(0, slash), "/__pycache__/",
                   dot == std::string::npos ? stem : stem.substr(0, dot), ".");
  return absl::StartsWith(file, prefix) && absl::EndsWith(file, ".pyc") &&
         file.find('/', prefix.size()) == absl::string_view::npos;
}

// The length of the longest root of `roots` that holds `path` (0 when none does).
size_t Deepest(absl::string_view path, const std::vector<std::string>& roots) {
  size_t best = 0;
  for (const std::string& root : roots) {
    if (PathUnder(path, {root})) best = std::max(best, root.size());
  }
  return best;
}

// Whether `path` lies in a writable tree and in no read-only tree bound inside it (the DSL's
// toolchain under the private /tmp is read-only).
bool Writable(const RuntimePolicyConfig& config, absl::string_view path) {
  const size_t writable = Deepest(path, config.writable_roots);
  if (writable == 0) return false;
  const size_t read_only =
      std::max({Deepest(path, config.code_roots), Deepest(path, config.dsl_roots),
                Deepest(path, config.judge_roots), Deepest(path, config.stdlib_roots)});
  return writable > read_only;
}

// Code an installed module makes while it is imported, by its own module body and the installed
// code it calls (mpmath builds its number type's operators so as torch._dynamo imports it): every
// frame from the event down to the module body is an installed, read-only file, never kernel.py
// nor code made at run time. The kernel only chose to import the module.
bool InstalledImportTime(const RuntimePolicyConfig& config, const AuditCaller& caller) {
  if (caller.import_chain.empty()) return false;
  for (const std::string& file : caller.import_chain) {
    if (file.empty() || file == config.kernel_path || file[0] != '/' || Writable(config, file)) {
      return false;
    }
    if (!PathUnder(file, config.code_roots) && !PathUnder(file, config.dsl_roots) &&
        !PathUnder(file, config.stdlib_roots)) {
      return false;
    }
  }
  return true;
}

// The judge's own code asked, of its own accord: the innermost frame outside the standard
// library is the judge's and kernel.py's import has not begun. After it the stack proves
// nothing: kernel.py calling a judge function that calls back, or a finaliser of C callables it
// left, fired when the worker drops an output, both raise events with a judge frame nearest and
// (the finaliser) no kernel frame at all. The worker needs no trust of its own by then (it reads
// tracebacks in C).
bool JudgeCaller(const RuntimePolicyConfig& config, const AuditCaller& caller) {
  return !caller.kernel_started && PathUnder(caller.library_file, config.judge_roots);
}

// The DSL's own code asked (the innermost frame outside the standard library is the DSL's) and
// it runs for the DSL: for the judge, before kernel.py's import began; as a module of an installed
// package is imported; or inside one of the DSL's entry points, with no frame of the kernel's
// between the event and the entry (AuditCaller::in_dsl_entry). Anywhere else the DSL's code is
// a library kernel.py called: a DSL helper that calls back what it is given (CuTe DSL's
// timer(enable=False)(f)(*args)) would lend its trust to a C callable of the kernel's choosing.
// Native code (`native`) only inside the entry points: the compiled kernel is loaded and
// launched there; the front ends (in_dsl_front_end) define and trace kernels, which needs frames
// and generated code but no ctypes.
// Inside an entry point, native code only where the DSL's own native layer asks
// (AuditCaller::library_native): the entry points call what kernel.py hands them (compile traces
// the function it is given by calling it, which may be a C callable of the kernel's choosing).
bool DslCaller(const RuntimePolicyConfig& config, const AuditCaller& caller, bool native) {
  if (!PathUnder(caller.library_file, config.dsl_roots)) return false;
  if (!caller.kernel_started || InstalledImportTime(config, caller)) return true;
  if (native) return caller.in_dsl_entry && caller.library_native;
  return caller.in_dsl_entry || caller.in_dsl_front_end;
}

// The DSL's or the judge's own code asked, for itself.
bool TrustedCaller(const RuntimePolicyConfig& config, const AuditCaller& caller,
                   bool native = false) {
  return DslCaller(config, caller, native) || JudgeCaller(config, caller);
}

// Any installed library asked (not kernel.py, not code written at run time).
bool LibraryCaller(const RuntimePolicyConfig& config, const AuditCaller& caller) {
  const std::string& f = caller.library_file;
  if (f.empty() || f == config.kernel_path || Writable(config, f)) return false;
  return PathUnder(f, config.code_roots) || PathUnder(f, config.dsl_roots) ||
         JudgeCaller(config, caller);
}

bool Readable(const RuntimePolicyConfig& config, absl::string_view path) {
  if (path == config.kernel_path) return true;
  for (const std::string& p : config.readable_paths) {
    if (path == p) return true;
  }
  return PathUnder(path, config.code_roots) || PathUnder(path, config.dsl_roots) ||
         PathUnder(path, config.judge_roots) || PathUnder(path, config.writable_roots) ||
         PathUnder(path, config.stdlib_roots);
}

bool WriteMode(absl::string_view mode) {
  if (absl::StartsWith(mode, "flags:")) {
    int flags = 0;
    if (!absl::SimpleAtoi(mode.substr(6), &flags)) return true;
    return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) != 0;
  }
  return mode.find_first_of("wax+") != absl::string_view::npos;
}

// Lexically normalised absolute path ("" when `path` is not absolute).
std::string Normalize(absl::string_view path) {
  if (!absl::StartsWith(path, "/")) return "";
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == absl::string_view::npos) j = path.size();
    const absl::string_view part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.emplace_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (const std::string& p : parts) absl::StrAppend(&out, "/", p);
  return out.empty() ? "/" : out;
}

RuntimeDecision DecideFile(const RuntimePolicyConfig& config, absl::string_view event,
                           absl::string_view raw_path, bool write) {
  if (absl::StartsWith(raw_path, "fd:")) return Allow();  // an open descriptor: nothing new
  const std::string path = Normalize(raw_path);
  if (path.empty()) {
    return Deny("runtime.file_access",
                absl::StrCat(event, " of a relative or unreadable path '", raw_path, "'"));
  }
  if (absl::StartsWith(path, "/proc/") &&
      (absl::EndsWith(path, "/mem") || absl::EndsWith(path, "/pagemap") ||
       absl::StrContains(path, "/map_files"))) {
    return Deny("runtime.file_access", absl::StrCat(event, " of process memory ", path));
  }
  if (write) {
    if (Writable(config, path)) return Allow();
    return Deny("runtime.file_access",
                absl::StrCat(event, " writes ", path, " outside the workspace"));
  }
  if (Readable(config, path)) return Allow();
  return Deny("runtime.file_access",
              absl::StrCat(event, " reads ", path, " outside the toolchain and the workspace"));
}

}  // namespace

bool PathUnder(absl::string_view path, const std::vector<std::string>& roots) {
  // A ".." component: lexically under a root, really anywhere. Never under one (a code object
  // named "<the DSL's folder>/../../<workspace>/x.zip/../../usr/zz/evil.py", loaded from a zip
  // the kernel wrote, passed for the DSL's installed code: red team, 2026-12-06). No installed
  // module's file has one (checked: every module both DSLs, torch and numpy import).
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") return false;
  }
  for (const std::string& root : roots) {
    if (root.empty()) continue;
    if (path == root) return true;
    if (absl::StartsWith(path, root) && path.size() > root.size() &&
        (root.back() == '/' || path[root.size()] == '/')) {
      return true;
    }
  }
  return false;
}

bool InstalledCode(const RuntimePolicyConfig& config, absl::string_view file) {
  if (absl::StartsWith(file, "<frozen ")) return true;
  if (file.empty() || file[0] != '/' || file == config.kernel_path) return false;
  if (Writable(config, file)) return false;
  return PathUnder(file, config.stdlib_roots) || PathUnder(file, config.code_roots) ||
         PathUnder(file, config.dsl_roots) || PathUnder(file, config.judge_roots);
}

bool InstalledLibrary(const RuntimePolicyConfig& config, absl::string_view path) {
  if (path.empty() || path[0] != '/' || Writable(config, path)) return false;
  for (absl::string_view system : {"/usr/", "/lib/", "/lib64/", "/opt/"}) {
    if (absl::StartsWith(path, system)) return true;
  }
  return PathUnder(path, config.stdlib_roots) || PathUnder(path, config.code_roots) ||
         PathUnder(path, config.dsl_roots) || PathUnder(path, config.judge_roots);
}

bool DslFrontEnd(const RuntimePolicyConfig& config, absl::string_view file,
                 absl::string_view function) {
  struct FrontEnd {
    v1::Dsl dsl;
    const char* file;  // the end of the path, from the package's directory
    std::initializer_list<absl::string_view> functions;
  };
  static const FrontEnd kFrontEnds[] = {
      // cute.jit / cute.kernel (CutlassBaseDSL's classmethods) and BaseDSL's: they read the
      // decorated function's frame; jit_wrapper is a decorated function's call (the AST
      // preprocessor compiles and execs the function's rewritten source).
      {v1::CUTEDSL, "/cutlass/cutlass_dsl/cutlass.py", {"jit", "kernel"}},
      {v1::CUTEDSL, "/cutlass/base_dsl/dsl.py", {"jit", "kernel", "jit_wrapper"}},
      // TVMScript: the decorators read the caller's stack (closure variables) and the parser
      // evaluates the function's expressions with compile / eval.
      {v1::TIRX,
       "/tvm/tirx/script/parser/entry.py",
       {"prim_func", "decorator_wrapper", "macro", "_decorator", "inline", "jit", "__call__"}},
      {v1::TIRX, "/tvm/script/parser/ir/entry.py", {"ir_module", "decorator_wrapper"}},
      {v1::TIRX, "/tvm/script/parser/core/entry.py", {"parse"}},
  };
  if (!PathUnder(file, config.dsl_roots)) return false;
  for (const FrontEnd& f : kFrontEnds) {
    if (f.dsl != config.dsl || !absl::EndsWith(file, f.file)) continue;
    for (absl::string_view name : f.functions) {
      if (function == name) return true;
    }
  }
  return false;
}

bool IsRuntimeCodeEvent(absl::string_view event) {
  return OneOf(event, {"exec", "compile", "code.__new__", "function.__new__", "types.CodeType"});
}

RuntimeDecision DecideAuditEvent(const RuntimePolicyConfig& config, absl::string_view event,
                                 const AuditCaller& caller, absl::string_view arg0,
                                 absl::string_view arg1) {
  // Processes, signals, the network, hooks and limits: never, whoever asks.
  if (OneOf(event, {"os.system", "os.posix_spawn", "os.fork", "os.forkpty", "subprocess.Popen",
                    "pty.spawn", "os.startfile", "webbrowser.open"}) ||
      absl::StartsWith(event, "os.exec") || absl::StartsWith(event, "os.spawn")) {
    return Deny("runtime.subprocess", absl::StrCat(event, ": no processes in the worker"));
  }
  if (OneOf(event, {"os.kill", "os.killpg", "signal.pthread_kill"})) {
    return Deny("runtime.signal", absl::StrCat(event, ": no signals to other processes"));
  }
  if (absl::StartsWith(event, "socket.") || absl::StartsWith(event, "urllib.") ||
      absl::StartsWith(event, "http.") || absl::StartsWith(event, "ftplib.") ||
      absl::StartsWith(event, "smtplib.")) {
    return Deny("runtime.network", absl::StrCat(event, ": no network in the worker"));
  }
  if (OneOf(event, {"sys.settrace", "sys.setprofile", "sys._current_frames", "sys.addaudithook",
                    "sys._clear_audit_hooks", "cpython._PySys_ClearAuditHooks",
                    "sys.monitoring.register_callback", "sys.remote_exec"})) {
    return Deny("runtime.introspection",
                absl::StrCat(event, ": the interpreter's hooks are the judge's"));
  }
  if (absl::StartsWith(event, "resource.")) {
    return Deny("runtime.limits", absl::StrCat(event, ": the worker's limits are the judge's"));
  }

  // Code objects (function.__code__ and the like) reach no frame and no object: reading them is
  // allowed (making a function of one raises function.__new__, refused below). A function's
  // defaults are the values its author bound to it: whoever holds the function reaches them by
  // calling it; they lead to no frame (torch._dynamo reads them as it wraps functions).
  if (event == "object.__getattr__" && OneOf(arg1, {"__code__", "gi_code", "cr_code", "ag_code",
                                                    "f_code", "__defaults__", "__kwdefaults__"})) {
    return Allow();
  }
  // A function's code replaced: the function then runs code that is not its own under its own
  // name and globals. A kernel gave a function of its own the DSL entry wrapper's code (its frame
  // passed for the entry point) and then code the DSL compiled under one of its own file names
  // (ctypes trusted, the watch on kernel code blind; red team, 2026-12-06: 13-16x strict). Only
  // the DSL's own code, for itself, and the judge before kernel.py.
  // And never with code that would pass for installed code (arg0: the new code's file; the hook
  // gives none for code made at run time, which runs as the kernel's, and for the function's
  // own original code put back), whoever asks: CuTe DSL's front end itself assigns a function's
  // `_original_code`, an attribute the kernel can set.
  if (event == "object.__setattr__" && arg1 == "__code__") {
    if (!arg0.empty() && Normalize(arg0) != config.kernel_path && InstalledCode(config, arg0)) {
      return Deny("runtime.dynamic_code",
                  absl::StrCat("a function given the code of ", arg0,
                               ": installed code runs under its own module only"));
    }
    if (TrustedCaller(config, caller)) return Allow();
    return Deny("runtime.dynamic_code",
                absl::StrCat("a function's __code__ replaced (", caller.direct_file,
                             "): it would run code that is not its own under its name"));
  }
  // The collector: the judge's own code only (neither DSL needs it; through a DSL function that
  // calls back, kernel.py would walk every object of the worker).
  if (OneOf(event,
            {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "gc.get_freeze_count"})) {
    if (JudgeCaller(config, caller)) return Allow();
    return Deny("runtime.introspection",
                absl::StrCat(event, ": frames and the collector reach the judge's objects"));
  }
  // Frames: only where a frame is read and not handed on (named standard-library readers of
  // sys._getframe; never a restricted attribute such as tb_frame or gi_frame, which a reader
  // would be reading for its caller), or by the DSL's or the judge's own code.
  if (OneOf(event, {"sys._getframe", "sys._getframemodulename", "object.__getattr__"})) {
    const bool frame_call = event != "object.__getattr__";
    if ((frame_call && StdlibFrameReader(config, caller)) || TrustedCaller(config, caller)) {
      return Allow();
    }
    return Deny("runtime.introspection",
                absl::StrCat(event, arg1.empty() ? "" : absl::StrCat(" (", arg1, ")"),
                             ": frames and the collector reach the judge's objects"));
  }

  // Code made at run time: the import system's modules of installed packages, the standard
  // library's namedtuple / dataclass generators, installed modules building code as they are
  // imported, and the DSL compiling what it generated.
  if (IsRuntimeCodeEvent(event) || OneOf(event, {"marshal.loads", "marshal.load"})) {
    if (FromImportSystem(caller)) {
      // The code's file: exec's code object (arg0), compile's file name (arg1); marshal reads a
      // .pyc the import system opened.
      if (event == "marshal.loads" || event == "marshal.load") return Allow();
      const absl::string_view named = event == "compile" ? arg1 : arg0;
      const std::string file = Normalize(named);
      if (file == config.kernel_path) return Allow();
      if (caller.kernel_started && PathUnder(file, config.judge_roots)) {
        return Deny("runtime.forbidden_import",
                    absl::StrCat("import of the judge's code from '", named.substr(0, 160),
                                 "' once kernel.py is loaded: off limits, under any name"));
      }
      // The name as given: one with ".." components is under no root (PathUnder).
      if (!file.empty() && !Writable(config, file) &&
          (PathUnder(named, config.code_roots) || PathUnder(named, config.dsl_roots) ||
           PathUnder(named, config.stdlib_roots) || PathUnder(named, config.judge_roots))) {
        return Allow();
      }
      return Deny("runtime.dynamic_code",
                  absl::StrCat("import of code from '", named.substr(0, 160),
                               "': only installed packages and kernel.py are imported"));
    }
    if (event != "marshal.loads" && event != "marshal.load" &&
        (StdlibCodegen(config, event, caller) || TrustedCaller(config, caller) ||
         InstalledImportTime(config, caller))) {
      return Allow();
    }
    return Deny("runtime.dynamic_code",
                absl::StrCat(event, " of code made at run time (", caller.direct_file, ")"));
  }
  if (OneOf(event, {"pickle.find_class", "copyreg.__reduce_ex__"})) {
    if (TrustedCaller(config, caller)) return Allow();
    return Deny("runtime.dynamic_code",
                absl::StrCat(event, " ", arg0, ".", arg1, ": unpickling runs code"));
  }

  // Native code.
  if (absl::StartsWith(event, "ctypes.") || event == "mmap.__new__") {
    // The interpreter's own C API, looked up once kernel.py's import began: never, whoever asks.
    // A C callable of the kernel's, called by the DSL's native layer inside an entry point (an
    // attribute of an object kernel.py made, which jit_executor.py calls), looked up
    // Py_AddPendingCall with the layer's trust and did the work on the main thread after the
    // clock (red team, 2026-12-06: 5.2-5.6x strict). The DSLs look up what they use of it as
    // their modules load (cutlass_function.py: PyCapsule_*), before kernel.py.
    if (caller.kernel_started && (event == "ctypes.dlsym" || event == "ctypes.dlsym/handle") &&
        (absl::StartsWith(arg1, "Py") || absl::StartsWith(arg1, "_Py"))) {
      return Deny("runtime.native_code",
                  absl::StrCat(event, " ", arg1.substr(0, 80),
                               ": the interpreter's C API through ctypes is off limits once "
                               "kernel.py is loaded, whoever asks"));
    }
    if (TrustedCaller(config, caller, /*native=*/true)) return Allow();
    // The worker's own events (bindings/ctypes_guard.cc), for what CPython raises none for: an
    // operation through a stored address (a pointer's item or contents, a c_char_p's or
    // py_object's value, a union's field) and a foreign function's call. A kernel that reached
    // ctypes through a library read and wrote any byte of the worker so (red team, 2026-12-06).
    // Allowed also where an installed module is imported (scipy's _ccallback casts as it loads):
    // never refused to installed imports before the guard raised them; the kernel only chose the
    // import.
    const bool guard_event =
        absl::StartsWith(event, "ctypes.memory/") || event == "ctypes.foreign_call";
    if (guard_event && caller.kernel_started && InstalledImportTime(config, caller)) {
      return Allow();
    }
    if (absl::StartsWith(event, "ctypes.memory/")) {
      return Deny("runtime.native_code",
                  absl::StrCat(event.substr(14),
                               " through a ctypes object: memory through ctypes objects is the "
                               "DSL runtime's only"));
    }
    return Deny("runtime.native_code",
                absl::StrCat(event, arg0.empty() ? "" : absl::StrCat(" ", arg0),
                             ": native calls are the DSL runtime's only"));
  }

  // Imports: the judge, the reference and the other DSL never; a forbidden module only where an
  // installed library imports it (its use raises the events above all the same).
  if (event == "import") {
    const absl::string_view module = arg0;
    // A file with the event (arg1) is an extension module's, about to be loaded (dlopen; the
    // import statement's own event has none): only installed code, whoever asks. The workspace
    // is writable, and a kernel wrote a compiled extension there that the DSL's import retry
    // (kernel.py's folder first on sys.path) loaded: native code in the worker with no ctypes,
    // which forged its timing (red team, 2026-12-06: 20-24x on the CPU judge).
    if (!arg1.empty()) {
      const std::string file = Normalize(arg1);
      if (file.empty() || !InstalledCode(config, arg1) || file == config.kernel_path) {
        return Deny("runtime.native_code",
                    absl::StrCat("import ", module, " from ", arg1,
                                 ": extension modules load from the installed packages only"));
      }
    }
    const absl::string_view root = module.substr(0, module.find('.'));
    const char* other_dsl = config.dsl == v1::CUTEDSL ? "tvm"
                            : config.dsl == v1::TIRX  ? "cutlass"
                                                      : "";
    if (root == "metakernelbench" || absl::StartsWith(root, "_mkb") ||
        (other_dsl[0] != '\0' && root == other_dsl)) {
      return Deny("runtime.forbidden_import", absl::StrCat("import ", module, ": off limits"));
    }
    if (auto forbidden = AuditModule(module); forbidden && !LibraryCaller(config, caller)) {
      return Deny("runtime.forbidden_import",
                  absl::StrCat("import ", module, ": ", forbidden->second));
    }
    return Allow();
  }

  // Files.
  if (event == "open" && FromImportSystem(caller) && !WriteMode(arg1)) {
    // The import system reads code only from installed trees and kernel.py (with its own
    // bytecode cache): a module the kernel wrote in the workspace is never imported. A source
    // file there already failed its compile (above); a bytecode file did not, and its code
    // object names whatever file it likes.
    const std::string file = Normalize(arg0);
    if (!file.empty() && Writable(config, file) && file != config.kernel_path &&
        !KernelBytecode(config, file)) {
      return Deny("runtime.dynamic_code",
                  absl::StrCat("import of code from '", arg0.substr(0, 160),
                               "': only installed packages and kernel.py are imported"));
    }
  }
  if (event == "open") return DecideFile(config, event, arg0, WriteMode(arg1));
  if (OneOf(event, {"os.listdir", "os.scandir", "glob.glob", "glob.glob/2", "os.chdir"})) {
    return DecideFile(config, event, arg0.empty() ? "fd:" : arg0, false);
  }
  if (OneOf(event, {"os.remove",       "os.rename",       "os.rmdir",        "os.mkdir",
                    "os.chmod",        "os.chown",        "os.chflags",      "os.lchown",
                    "os.symlink",      "os.link",         "os.truncate",     "os.utime",
                    "os.setxattr",     "os.removexattr",  "shutil.copyfile", "shutil.copymode",
                    "shutil.copystat", "shutil.copytree", "shutil.rmtree",   "shutil.move",
                    "shutil.chown",    "os.mkfifo",       "os.mknod"})) {
    if (absl::StartsWith(arg0, "fd:")) return Allow();
    return DecideFile(config, event, arg0, true);
  }
  if (OneOf(event, {"os.putenv", "os.unsetenv"})) {
    if (LibraryCaller(config, caller)) return Allow();
    return Deny("runtime.environment",
                absl::StrCat(event, " ", arg0, ": the environment is the judge's"));
  }
  return Allow();
}

std::vector<std::string> RefusedPrivateOperators(const std::vector<std::string>& operator_names) {
  const absl::Span<const char* const> allowed = audit_detail::PrivateTorchAllowed();
  std::vector<std::string> out;
  for (const std::string& name : operator_names) {
    if (!absl::StartsWith(name, "_") || absl::StartsWith(name, "__")) continue;
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string TirCompileRefusal(const std::vector<std::string>& call_ops,
                              const std::vector<std::string>& target_kinds) {
  static constexpr absl::string_view kNativeByName[] = {"call_extern",
                                                        "call_pure_extern",
                                                        "call_llvm_intrin",
                                                        "call_llvm_pure_intrin",
                                                        "tvm_call_packed",
                                                        "tvm_call_cpacked",
                                                        "tvm_call_packed_lowered",
                                                        "tvm_call_cpacked_lowered",
                                                        "tvm_call_trace_packed",
                                                        "tvm_call_trace_packed_lowered",
                                                        "tvm_struct_get",
                                                        "tvm_struct_set",
                                                        "tvm_stack_alloca",
                                                        "tvm_stack_make_shape",
                                                        "tvm_stack_make_array",
                                                        "cast_to_handle",
                                                        "reinterpret_to_handle",
                                                        "unmatched_handle_param",
                                                        "let_handle"};
  for (const std::string& op : call_ops) {
    const size_t dot = op.rfind('.');
    const absl::string_view name =
        dot == std::string::npos ? absl::string_view(op) : absl::string_view(op).substr(dot + 1);
    for (absl::string_view refused : kNativeByName) {
      if (name == refused) {
        return absl::StrCat(
            "a TIR call of a native symbol or packed function by name, or of "
            "the packed API's memory builtins on a handle made from a number (",
            op, "): it calls or reaches anything in the process");
      }
    }
  }
  for (const std::string& op : call_ops) {
    if (op == "host_buffer_access" || op == "handle_to_number" || op == "handle_buffer" ||
        op == "disabled_pass") {
      return absl::StrCat(
          "TIR host code that reads or writes a buffer, or makes a number of a pointer, a buffer "
          "of pointers, or a compile with TVM's passes switched off (",
          op,
          "): host code is compiled into the worker, where it indexes memory unchecked; a "
          "kernel's host code launches its kernels");
    }
  }
  if (target_kinds.empty())
    return "tvm.compile with no target: a kernel's TIR is built for the GPU";
  for (const std::string& kind : target_kinds) {
    if (kind != "cuda") {
      return absl::StrCat("tvm.compile for the '", kind.substr(0, 40),
                          "' target: a kernel's TIR is built for the GPU (host code compiled "
                          "from it indexes memory unchecked)");
    }
  }
  return "";
}

const std::vector<std::string>& RawAddressFfiFunctions() {
  static const std::vector<std::string>* names = new std::vector<std::string>{
      "ffi.MakeFieldSetter",
  };
  return *names;
}

std::string CuteHostRefusal(const std::vector<std::string>& host_ops) {
  // The dialects a kernel's host code is made of (its layouts, views, control flow and launches);
  // an op of any other (llvm, memref, vector, nvvm, ...) is the DSL's IR written by hand.
  static constexpr absl::string_view kHostDialects[] = {"arith.",      "scf.",    "cf.",   "func.",
                                                        "math.",       "index.",  "cuda.", "cute.",
                                                        "cute_nvgpu.", "builtin."};
  // Words of the ops that read or write through a pointer or a tensor (cute.memref.store,
  // cute.copy, nvvm.atomicrmw ...), matched as whole words of the name (split at '.' and '_':
  // "programmatic" holds no "mma"), and the prints of a tensor (cute.print_view); not the
  // builders that only describe one (cute_nvgpu.atom.make_non_exec_tiled_tma_load: a TMA
  // descriptor, honest host code).
  static constexpr absl::string_view kMemoryWords[] = {
      "memref", "load",     "store", "copy", "atomic", "atomicrmw", "cmpxchg",  "memcpy", "memmove",
      "memset", "inttoptr", "asm",   "gemm", "mma",    "fill",      "prefetch", "alloca"};
  for (const std::string& op : host_ops) {
    // A function the host code declares without a body is a native symbol it calls by name
    // (cute.ffi: libc's memcpy, mmap ...; red team, fourteenth session): any address, any call.
    if (op == "func.external_declaration") {
      return "a call of a native symbol by name from the DSL's host code (a function declared "
             "without a body, as cute.ffi makes): it reads and writes any address and calls "
             "anything in the worker";
    }
    bool known = false;
    for (absl::string_view dialect : kHostDialects) known = known || absl::StartsWith(op, dialect);
    const size_t last_dot = op.rfind('.');
    const absl::string_view last = last_dot == std::string::npos
                                       ? absl::string_view(op)
                                       : absl::string_view(op).substr(last_dot + 1);
    bool memory = absl::StartsWith(last, "print_");
    if (!absl::StartsWith(last, "make_")) {
      for (absl::string_view word : absl::StrSplit(op, absl::ByAnyChar("._"))) {
        for (absl::string_view refused : kMemoryWords) memory = memory || word == refused;
      }
    }
    if (!known || memory) {
      return absl::StrCat(
          known ? "a memory access in the DSL's host code ("
                : "an op of the DSL's IR by hand in its host code (",
          op.substr(0, 80),
          " outside any kernel): a @cute.jit function is compiled to native code in the worker, "
          "where it reads and writes any address; a kernel's memory is touched on the GPU");
    }
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> RuntimeAuditCodes() {
  return {
      {"runtime.subprocess", "started or replaced a process (os.system, subprocess, exec, fork)"},
      {"runtime.signal", "signalled a process"},
      {"runtime.network", "opened a socket or a URL"},
      {"runtime.introspection",
       "read frames or the collector, or installed tracing / audit hooks, outside the DSL's own "
       "code"},
      {"runtime.dynamic_code",
       "ran code made at run time (exec, compile, code objects, unpickling) other than the "
       "DSL compiler's or installed packages'"},
      {"runtime.native_code",
       "used ctypes / mmap or torch's raw-pointer constructors outside the DSL runtime"},
      {"runtime.forbidden_import",
       "imported the judge, the reference, the other DSL, or a "
       "forbidden module from its own code"},
      {"runtime.file_access",
       "read outside the toolchain and the workspace, wrote outside the workspace, or opened "
       "process memory"},
      {"runtime.limits", "changed the worker's resource limits"},
      {"runtime.environment", "changed the environment from its own code"},
      {"runtime.thread",
       "had a Python thread of its own (started any way: threading, a re-export of it, a C "
       "callable) alive when solve returned or its import ended; such a thread can work after "
       "the clock stops"},
      {"runtime.pending_call",
       "queued a call for the interpreter's main thread (Py_AddPendingCall, reached any way) "
       "while its code ran: the main thread would run it after the clock stopped"},
      {"runtime.clock_tampered",
       "changed a name the judge's clock, its handling of the outputs or its check of the "
       "DSL's compiles looks up when it runs (torch's synchronise, its current stream, "
       "torch.Tensor's methods, torch's functions, a module's class, a shadowing builtin, the "
       "DSL's checked compile entry points), seen when the call or the import returns, before "
       "the timed window closes"},
      {"runtime.outside_call",
       "ran its code while no call of solve was under way (a torch mode, library override, "
       "finaliser or thread it installed), i.e. outside the timed call"},
  };
}

}  // namespace mkb
