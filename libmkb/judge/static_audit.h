// The static audit of a kernel.py: forbidden imports, calls and introspection, found
// in the source before anything runs. It reads the syntax tree (CPython's own `ast` in the judge
// host, python_parser.h for C++ callers) and follows every name that may hold a module, however
// it was bound; it is the first line of defence, the runtime audit in the worker the second.
//
// What it resolves (docs/judge.md, "Static audit"):
// - Rules match anywhere inside a dotted chain, through any module: `torch.os.system` is found
//   as `os.system`, `x.ctypes` as `ctypes`.
// - A name holds every module path ever bound to it, by any binding form: import, assignment
//   (plain, tuple unpacking, annotated, augmented, walrus), for / with / except / match
//   targets, comprehensions, default arguments, class bodies and attribute stores
//   (`self.m = torch` makes every `.m` a possible torch); transitively and without regard to
//   scope.
// - Escapes: a module path that leaves tracking (passed to a call, stored in a container or
//   subscript, returned, yielded, raised, a class base) joins the escaped set; every value the
//   audit cannot follow (parameters, call results, subscripts, loop and exception targets,
//   attributes of such values) may be any escaped module, so a forbidden reach through it is
//   still found.
#ifndef LIBMKB_JUDGE_STATIC_AUDIT_H_
#define LIBMKB_JUDGE_STATIC_AUDIT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "libmkb/judge/python_syntax.h"
#include "mkb/v1/common.pb.h"
#include "mkb/v1/judge.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

struct StaticAuditOptions {
  v1::Dsl dsl = v1::DSL_UNSPECIFIED;
  bool require_dsl = true;  // the source must import the variant's DSL
  std::string filename = "kernel.py";
  // Attribute paths of installed modules that hold a module under another name, as
  // (alias, module): ("enum.bltns", "builtins"), ("torch._python_dispatcher.C", "torch._C").
  // A path the kernel reaches through an alias is also checked as the module's own path. The
  // judge host lists them from the modules it has loaded (metakernelbench/module_aliases.py); only
  // those whose module a rule forbids, or leads to one, are kept.
  std::vector<std::pair<std::string, std::string>> module_aliases;
  // Top-level packages installed beside the toolchain that a kernel may not import (sympy,
  // jinja2, yaml, _pytest, ...): the variant's code is torch, numpy, the DSL and Python's
  // standard library, and every other package is a library of helpers that import,
  // read attributes or evaluate text for it (red team, 2026-12-06). The judge host lists them
  // from the installed distributions (metakernelbench/kernel_imports.py); empty, no check.
  std::vector<std::string> third_party_roots;
};

// Findings with their default severities: VIOLATION for what SPEC §2 forbids, WARNING for what
// only the runtime audit can judge (library compute ops, side streams), SKIPPED for checks
// turned off. At most 64 findings; one per code and line.
//
// `module` is the tree of `source` (its Module node): the judge host passes CPython's own
// parse. `source` is read too, for what the tree does not show (the encoding declaration).
std::vector<v1::AuditFinding> StaticAudit(absl::string_view source, const PyNode& module,
                                          const StaticAuditOptions& options);

// Parses `source` with ParsePython first. Source that parser cannot read (not Python, or
// Python it does not read the way CPython does, such as non-ASCII identifiers) is a
// static.unparsable violation: what the audit cannot read, it does not pass.
std::vector<v1::AuditFinding> StaticAudit(absl::string_view source,
                                          const StaticAuditOptions& options);

// The top-level modules a kernel may import (the static audit refuses every other): the
// toolchain's (torch, numpy, both DSLs and their runtimes) and the standard library's allowed ones.
std::vector<std::string> KernelToolchainRoots();
std::vector<std::string> KernelStdlibRoots();
// The protocol methods (`__x__` names) kernel.py may define or bind, and the library classes it
// may derive from (besides its own classes and builtin types): the static audit's own lists.
std::vector<std::string> KernelProtocolMethods();
std::vector<std::string> KernelBaseClasses();

// The rule that forbids importing `module` ("ctypes", "torch.utils.cpp_extension"), as
// (finding code, reason), or nullopt when the import is allowed. Used by the runtime audit too.
std::optional<std::pair<std::string, std::string>> AuditModule(absl::string_view module);

// Applies a policy to findings (permissive, allow / deny lists) in place.
void ApplyAuditPolicy(const v1::AuditPolicy& policy, std::vector<v1::AuditFinding>* findings);

// The finding codes StaticAudit can emit, with a one-line description each (for docs and --help).
std::vector<std::pair<std::string, std::string>> StaticAuditCodes();

}  // namespace mkb

#endif  // LIBMKB_JUDGE_STATIC_AUDIT_H_
