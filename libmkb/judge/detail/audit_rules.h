// The static audit's rule matching: which rule of the tables (audit_rule_tables.h) decides a
// path, a builtin or a name. Internal to static_audit.cc and its passes.
#ifndef LIBMKB_JUDGE_DETAIL_AUDIT_RULES_H_
#define LIBMKB_JUDGE_DETAIL_AUDIT_RULES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "libmkb/judge/detail/audit_paths.h"
#include "libmkb/judge/detail/audit_rule_tables.h"

namespace mkb::audit_detail {

// The most specific rule matching parts[begin, end) from its start (the path or an ancestor of
// it), or nullptr; a rule without a code allows. `inside_chain`: begin is not the chain's root
// (only rules that match inside chains apply).
const Rule* BestRule(const std::vector<std::string>& parts, size_t begin, size_t end,
                     bool inside_chain);

// True when some rule's pattern starts with parts[begin, end) and goes further: a path with
// that tail may still reach a forbidden one by more attributes.
bool IsRuleStem(const std::vector<std::string>& parts, size_t begin, size_t end);

// The rule for a builtin's name (eval, open, reference), or nullptr.
const Rule* BuiltinRule(absl::string_view name);
// Module globals that reach the interpreter (__builtins__, __loader__, __spec__).
bool IsInterpreterGlobal(absl::string_view name);
// getattr, setattr, delattr, hasattr: allowed only as direct calls with a literal name.
bool IsAttributeBuiltin(absl::string_view name);
// Builtins that only read what is passed to them (print, repr, type, isinstance).
bool IsInertBuiltin(absl::string_view name);
// Attributes that reach the interpreter's internals from any object (__globals__, f_back).
bool IsIntrospectionAttribute(absl::string_view name);
// Why `name` is flagged wherever it appears (raw memory or a file through any object: the
// array-interface protocols, a storage's _set_cdata, from_file), or nullptr.
const char* RawNameReason(absl::string_view name);
// A protocol method's name (__len__, __getitem__, __add__, ...) that kernel.py may not define or
// bind: any name of the form __x__ outside the short list of those it may (ProtocolMethodsAllowed:
// __init__, __call__, the DSLs' argument protocols, ...) and outside the names other rules
// already refuse; and any _sunder_ name (IsSunderName: enum's _name_ and _value_, which Enum's
// own protocol methods, written in Python, read). Why, or nullptr where the name is not such a
// name.
const char* ProtocolHookReason(absl::string_view name);
// A name of the form _x_ (one underscore each side, not a dunder): the names libraries reserve
// for their classes' protocols (enum's _name_, _value_, _missing_; ctypes' _fields_, _type_).
bool IsSunderName(absl::string_view name);
// Whether kernel.py may derive from the library class at `path` (BaseClassesAllowed).
bool MayDeriveFrom(absl::string_view path);
// A library helper that imports a module or resolves an object by a name given as text
// (import_module, import_string, locate): any name containing "import", case aside, or one of
// ImportHelperNames().
bool IsImportHelperName(absl::string_view name);
// A library helper that reads an attribute by a name given as text (Environment.getattr,
// attrgetter): a name containing one of AttributeHelperParts(), case aside, or getitem. The
// interpreter's own hooks (__getattr__ and kin) are introspection attributes, not these.
bool IsAttributeHelperName(absl::string_view name);
// Library compute only the runtime audit can weigh (torch.matmul and below).
bool IsLibraryCompute(absl::string_view path);
// A path that makes or enters a side stream (torch.cuda.Stream(...), torch.cuda.stream(s)).
bool IsSideStream(absl::string_view path);

// `path` + "." + `attribute` as a value: an unknown-rooted path keeps only the tail further
// attributes can combine with into a rule.
std::string AppendToValue(absl::string_view path, absl::string_view attribute);

}  // namespace mkb::audit_detail

#endif  // LIBMKB_JUDGE_DETAIL_AUDIT_RULES_H_
