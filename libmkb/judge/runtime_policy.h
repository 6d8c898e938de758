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
  // they generate, use ctypes, and read frames.
  std::vector<std::string> dsl_roots;
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

// Whether `event` makes or runs code at run time (exec, compile, a code or function object
// made); such events get an AuditCaller::import_chain. marshal.load(s) also turns bytes into
// code but only ever reads a .pyc here: it is decided apart.
bool IsRuntimeCodeEvent(absl::string_view event);

// Whether `path` (absolute, normalised) lies in one of `roots`.
bool PathUnder(absl::string_view path, const std::vector<std::string>& roots);

// The runtime finding codes with a line each (docs, --help).
std::vector<std::pair<std::string, std::string>> RuntimeAuditCodes();

}  // namespace mkb

#endif  // LIBMKB_JUDGE_RUNTIME_POLICY_H_
