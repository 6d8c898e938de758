// Which loads of a builtin's name reach the builtin (the static audit's scope pass).
#ifndef LIBMKB_JUDGE_DETAIL_NAME_SCOPES_H_
#define LIBMKB_JUDGE_DETAIL_NAME_SCOPES_H_

#include <memory>
#include <string>

#include "libmkb/judge/python_syntax.h"

namespace mkb::audit_detail {

// Python resolves a name statically: a function's own names (parameters, assignments, defs,
// imports) never fall back to builtins, nor do an enclosing function's; a module's names do
// until they are bound, and again after `del`. The audit takes a kernel's module-level name
// as its own only where an unconditional top-level statement before the one that uses it
// binds it, and nothing deletes it. Class bodies are not trusted to shadow.
//
// Reads the tree of a module (it must outlive this object). Not copyable.
class NameScopes {
 public:
  explicit NameScopes(const PyNode& module);
  NameScopes(const NameScopes&) = delete;
  NameScopes& operator=(const NameScopes&) = delete;
  ~NameScopes();

  // Whether the Name node (a load in the module's tree) refers to the builtin of its name.
  bool IsBuiltin(const PyNode* name_node) const;
  // Whether anything in the module, in any scope, binds the name.
  bool BoundAnywhere(const std::string& name) const;

 private:
  class Analysis;
  std::unique_ptr<Analysis> analysis_;
};

}  // namespace mkb::audit_detail

#endif  // LIBMKB_JUDGE_DETAIL_NAME_SCOPES_H_
