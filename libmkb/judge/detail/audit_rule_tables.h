// The static audit's rule tables: what SPEC §2 forbids a kernel to import, call or reach, as
// dotted paths with a finding code and a reason each, and the name lists the audit reads.
// Data only: audit_rules.h matches paths against these tables.
#ifndef LIBMKB_JUDGE_DETAIL_AUDIT_RULE_TABLES_H_
#define LIBMKB_JUDGE_DETAIL_AUDIT_RULE_TABLES_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace mkb::audit_detail {

// A rule's pattern is a dotted path that matches itself and everything below it; a last
// component "*" matches only what is below ("os.*": os.system, not os itself), one ending in
// "*" a family ("os.exec*": os.execv, os.execlp). The most specific matching pattern decides;
// a rule without a code allows (an exception under a broader rule).
struct Rule {
  const char* pattern;
  const char* code;
  const char* reason;
  // Modules: whether the rule also matches where its first component is reached as an
  // attribute inside a chain (torch.ctypes, x.subprocess). Off for names that are ordinary
  // words as attributes (tensor.select, torch.signal): those are import rules only.
  bool inside_chains = true;
};

// Modules a kernel may not import (also reached inside a chain, where inside_chains).
absl::Span<const Rule> ModuleRules();
// Attribute paths a kernel may not touch (calls or references), below allowed modules.
absl::Span<const Rule> AttributeRules();
// Builtins a kernel may not reach (called or not); the pattern is the builtin's name.
absl::Span<const Rule> BuiltinRules();

// The top-level modules a kernel may import (SPEC §2): the toolchain (torch, numpy, both DSLs and
// their runtimes) and the standard library's modules a kernel needs (math, functools, typing,
// collections, ...; posixpath is os.path). Every other module is refused by the static audit (an
// import, or a path through another module's attribute that holds it): the standard library's
// other modules are C routines and classes that reach raw memory for a kernel (ninth session's
// red teams, 2026-12-07: ipaddress, fractions and numbers through deque.index; xml.etree's
// Element.remove), and no shipped or honest kernel imports one. At run time the rule tables
// apply (AuditModule), so that the permissive mode still exercises the runtime layers behind.
absl::Span<const char* const> KernelToolchainRoots();
absl::Span<const char* const> KernelStdlibRoots();
bool KernelMayImport(absl::string_view root);
// The finding's reason for a module whose root a kernel may not import.
std::string NotImportableReason(absl::string_view root);

// Module globals that reach the interpreter (__builtins__, __loader__, __spec__).
absl::Span<const char* const> InterpreterGlobals();
// getattr, setattr, delattr, hasattr: allowed only as direct calls with a literal name.
absl::Span<const char* const> AttributeBuiltins();
// Attributes that reach the interpreter's internals from any object (__globals__, f_back).
absl::Span<const char* const> IntrospectionAttributes();
// Names flagged wherever they appear: raw memory or a file through any object (__array_interface__,
// a storage's _set_cdata, from_file), each with why.
struct RawName {
  const char* name;
  const char* why;
};
absl::Span<const RawName> RawNames();
// The protocol methods and the module dunders kernel.py may define or bind (ProtocolHookReason),
// and why the others are refused.
absl::Span<const char* const> ProtocolMethodsAllowed();
absl::Span<const char* const> ModuleDundersAllowed();
extern const char kProtocolHook[];
// Why a _sunder_ name bound by kernel.py is refused (ProtocolHookReason).
extern const char kSunderHook[];
// The library classes kernel.py may derive from, by exact path (torch.nn.Module, abc.ABC, ...):
// a class of any other library inherits protocol methods written in Python that read attributes
// the kernel's class defines (statistics.NormalDist's __rmul__ reads _mu).
absl::Span<const char* const> BaseClassesAllowed();
// Names of library helpers that import or resolve by text, besides any name containing "import".
absl::Span<const char* const> ImportHelperNames();
// Parts of names of library helpers that read attributes by text (getattr, attrgetter, ...).
absl::Span<const char* const> AttributeHelperParts();
// Library compute only the runtime audit can weigh: these paths and everything below them.
absl::Span<const char* const> LibraryComputeCalls();
// Builtins that only read what is passed to them (print, repr, type, isinstance).
absl::Span<const char* const> InertBuiltins();
// Prefixes of the paths that make or enter a side stream (torch.cuda.Stream, .stream).
absl::Span<const char* const> SideStreamPrefixes();
// torch's private names that are allowed (torch._scaled_mm, torch._unique2, torch._check...):
// the exceptions to the rule on private operators, static and at run time.
absl::Span<const char* const> PrivateTorchAllowed();
// Whether `rule` is that rule (its "_*" component names the private name).
bool IsPrivateOpRule(const Rule& rule);
// Whether `rule` is the DSLs' private-name rule (its "_*" names the private name; a name with
// two leading underscores is not private: cutlass.__version__, T.cuda.__shfl_xor_sync).
bool IsDslPrivateRule(const Rule& rule);

}  // namespace mkb::audit_detail

#endif  // LIBMKB_JUDGE_DETAIL_AUDIT_RULE_TABLES_H_
