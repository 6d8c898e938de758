// Which module paths each expression of a kernel may evaluate to (the static audit's
// points-to pass), and where a module object leaves what it follows.
#ifndef LIBMKB_JUDGE_DETAIL_MODULE_VALUES_H_
#define LIBMKB_JUDGE_DETAIL_MODULE_VALUES_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "libmkb/judge/detail/audit_paths.h"
#include "libmkb/judge/detail/name_scopes.h"
#include "libmkb/judge/python_syntax.h"

namespace mkb::audit_detail {

// An expression whose value leaves tracking, and how ("passed to f(...), which the audit does
// not follow").
struct EscapeSite {
  const PyNode* expression;
  std::string how;
};

// A flow-insensitive points-to analysis over module paths. Sinks are names (without regard
// to scope), attribute names (class bodies and attribute stores, whatever the object), the
// return values of the kernel's own functions, and the escaped set. Each binding is a
// constraint `sink ⊇ value(expression)`; a worklist runs them to a fixed point.
//
// The escape rule: a module object -- a path an `import` statement binds (`import torch`,
// `import cuda.bindings.driver as cuda`), through any alias -- may be the base of an attribute
// access, be bound to names and attributes, be passed to the kernel's own functions called by
// name (their parameters then hold it) and be returned from them to such a call. Any other
// use is an escape site (EscapeSite): an argument to a function the audit does not follow, an
// element of a container, a subscript store, *args / **kwargs, a yield, a raise, a class base,
// a return from a function others call. Other module-derived values (functions, classes,
// submodules reached by attribute) may escape: they join the escaped set, and every value the
// audit cannot follow may be any escaped path.
//
// Reads the tree of a module and its scopes (both must outlive this object). Not copyable.
class ModuleValues {
 public:
  ModuleValues(const PyNode& module, const NameScopes& scopes);
  ModuleValues(const ModuleValues&) = delete;
  ModuleValues& operator=(const ModuleValues&) = delete;
  ~ModuleValues();

  // The module paths an expression of the tree may evaluate to (kUnknown: an object the
  // audit cannot follow). Memoised: the reference lives as long as this object.
  const Paths& Of(const PyNode& node);
  // Module-derived paths that left tracking (module objects excluded: those are escape sites).
  const Paths& escaped() const;
  // The escaped paths that may still reach a rule when more attributes follow them.
  std::vector<std::string> RelevantEscapes() const;
  // Paths `import` statements bind: modules for certain.
  const std::set<std::string>& module_objects() const;
  const std::vector<EscapeSite>& escape_sites() const;
  // Modules of `from m import *`.
  const std::vector<std::string>& star_modules() const;
  // More paths than the analysis follows (kMaxPathsPerSet, kMaxSteps).
  bool too_complex() const;

 private:
  class Analysis;
  std::unique_ptr<Analysis> analysis_;
};

}  // namespace mkb::audit_detail

#endif  // LIBMKB_JUDGE_DETAIL_MODULE_VALUES_H_
