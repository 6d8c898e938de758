#include "libmkb/judge/static_audit.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "libmkb/judge/detail/audit_codes.h"
#include "libmkb/judge/detail/audit_paths.h"
#include "libmkb/judge/detail/audit_rules.h"
#include "libmkb/judge/detail/audit_tree.h"
#include "libmkb/judge/detail/module_values.h"
#include "libmkb/judge/detail/name_scopes.h"
#include "libmkb/judge/python_parser.h"

namespace mkb {
namespace {

using audit_detail::Append;
using audit_detail::ChainText;
using audit_detail::ContextOf;
using audit_detail::ForEachChild;
using audit_detail::IsUnknownRooted;
using audit_detail::kGap;
using audit_detail::kUnknown;
using audit_detail::NodeItems;
using audit_detail::Parts;
using audit_detail::SplitPath;
using audit_detail::StringConstant;
using Scopes = audit_detail::NameScopes;
using Values = audit_detail::ModuleValues;

// --- the audit ----------------------------------------------------------------------------

// PEP 263: an encoding declaration in the first two lines. The worker imports kernel.py from
// its file, so the declared codec decides what runs; the audit reads the text as UTF-8.
std::optional<std::string> DeclaredEncoding(absl::string_view source) {
  if (absl::StartsWith(source, "\xEF\xBB\xBF")) source.remove_prefix(3);
  const std::string head = absl::StrReplaceAll(source.substr(0, 4096), {{"\r\n", "\n"}});
  std::vector<absl::string_view> lines = absl::StrSplit(head, absl::ByAnyChar("\r\n"));
  int seen = 0;
  for (absl::string_view line : lines) {
    if (seen++ == 2) break;
    const absl::string_view stripped = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::StartsWith(stripped, "#")) continue;
    for (size_t at = stripped.find("coding"); at != absl::string_view::npos;
         at = stripped.find("coding", at + 1)) {
      size_t k = at + 6;
      if (k >= stripped.size() || (stripped[k] != ':' && stripped[k] != '=')) continue;
      ++k;
      while (k < stripped.size() && (stripped[k] == ' ' || stripped[k] == '\t')) ++k;
      size_t end = k;
      while (end < stripped.size() && (absl::ascii_isalnum(stripped[end]) || stripped[end] == '-' ||
                                       stripped[end] == '_' || stripped[end] == '.')) {
        ++end;
      }
      if (end > k) return std::string(stripped.substr(k, end - k));
    }
  }
  return std::nullopt;
}

bool IsUtf8Name(std::string name) {
  name = absl::AsciiStrToLower(name);
  std::replace(name.begin(), name.end(), '_', '-');
  return name == "utf-8" || absl::StartsWith(name, "utf-8-") || name == "utf8" || name == "u8" ||
         name == "utf";
}

// --- names made at run time ----------------------------------------------------------------
//
// An attribute whose name the source does not spell cannot be matched against the rules. The
// routes that make one without setattr: a namespace built from a mapping (three-argument type(),
// types.new_class, a metaclass), keyword names unpacked from a mapping into a callee that keeps
// them as attributes (SimpleNamespace(**d)), field lists of class factories (make_dataclass,
// namedtuple, Enum's functional form), and a hook that answers any name (__getattr__). Each is
// refused unless the names it carries are literal.

// Class hooks that answer attribute names the source never spells.
constexpr const char* kAttributeHooks[] = {"__getattr__", "__getattribute__", "__prepare__"};

// Names the import system and the interpreter read from kernel.py's own namespace: binding one
// makes kernel.py a package whose submodules load from anywhere (`__path__`: a zip the kernel
// wrote, imported by CuTe DSL's import re-run; red team, 2026-12-06), changes where its code
// claims to come from, or swaps the builtins its functions see.
constexpr const char* kModuleMachinery[] = {"__path__", "__spec__",   "__loader__",  "__package__",
                                            "__file__", "__cached__", "__builtins__"};

// Callees that turn names they are given into attributes, by path, and which positional
// argument carries the names (-1: every positional argument is a mapping of names).
struct NameMaker {
  const char* path;
  int names_argument;
  const char* names_keyword;
};
constexpr NameMaker kNameMakers[] = {
    {"types.new_class", 2, "kwds"},
    {"types.prepare_class", 2, "kwds"},
    {"types.SimpleNamespace", -1, nullptr},
    {"argparse.Namespace", -1, nullptr},
    {"optparse.Values", -1, nullptr},
    {"logging.makeLogRecord", -1, nullptr},
    {"abc.ABCMeta", 2, "namespace"},
    {"enum.EnumMeta", 2, "classdict"},
    {"enum.EnumType", 2, "classdict"},
    {"dataclasses.make_dataclass", 1, "fields"},
    {"collections.namedtuple", 1, "field_names"},
    {"typing.NamedTuple", 1, "fields"},
    {"typing.TypedDict", 1, "fields"},
    {"enum.Enum", 1, "names"},
    {"enum.IntEnum", 1, "names"},
    {"enum.StrEnum", 1, "names"},
    {"enum.Flag", 1, "names"},
    {"enum.IntFlag", 1, "names"},
};

// The factory at `path`, or null.
const NameMaker* FindNameMaker(absl::string_view path) {
  for (const NameMaker& maker : kNameMakers) {
    if (path == maker.path) return &maker;
  }
  return nullptr;
}

// `node` is the attribute __new__ or __call__ (of a metaclass: type(x).__new__).
bool IsConstructorAttribute(const PyNode* node) {
  return node != nullptr && node->Is("Attribute") &&
         (node->Str("attr") == "__new__" || node->Str("attr") == "__call__");
}

// A `**mapping` keyword of a call or class statement (its name is None).
bool IsDoubleStar(const PyNode& keyword) {
  return keyword.Get("arg") == nullptr || keyword.Str("arg").empty();
}

// Whether `node` spells every name it carries: a str constant, a display of them (or of
// (name, ...) pairs, as field lists are), a dict display with str-constant keys and no **, the
// builtin dict called with keywords only.
bool LiteralNames(const PyNode* node, const Scopes& scopes) {
  if (node == nullptr) return false;
  if (node->Is("Constant")) return true;  // a str of names; a number or None names nothing
  if (audit_detail::IsDisplay(*node)) {
    for (const PyNode* item : NodeItems(*node, "elts")) {
      if (item == nullptr || item->Is("Starred")) return false;
      if (StringConstant(item)) continue;
      if (!audit_detail::IsDisplay(*item)) return false;
      const auto parts = NodeItems(*item, "elts");
      if (parts.empty() || !StringConstant(parts[0])) return false;
    }
    return true;
  }
  if (node->Is("Dict")) {
    for (const PyNode* key : NodeItems(*node, "keys")) {
      if (!StringConstant(key)) return false;  // a computed key, or ** (a null key)
    }
    return true;
  }
  if (node->Is("Call")) {
    const PyNode* func = node->Child("func");
    if (func == nullptr || !func->Is("Name") || func->Str("id") != "dict" ||
        !scopes.IsBuiltin(func) || !NodeItems(*node, "args").empty()) {
      return false;
    }
    for (const PyNode* keyword : NodeItems(*node, "keywords")) {
      if (keyword == nullptr || IsDoubleStar(*keyword)) return false;
    }
    return true;
  }
  return false;
}

class Auditor {
 public:
  Auditor(absl::string_view source, const PyNode& module, const StaticAuditOptions& options)
      : source_(source), module_(module), options_(options) {
    for (const auto& [alias, target] : options.module_aliases) {
      const Parts parts = SplitPath(target);
      if (parts.empty() || alias.empty()) continue;
      const audit_detail::Rule* rule = audit_detail::BestRule(parts, 0, parts.size(), false);
      if ((rule != nullptr && rule->code != nullptr) ||
          audit_detail::IsRuleStem(parts, 0, parts.size()) ||
          !audit_detail::KernelMayImport(parts[0])) {
        aliases_.emplace(alias, target);
      }
    }
  }

  std::vector<v1::AuditFinding> Run() {
    CheckEncoding();
    Scopes scopes(module_);
    scopes_ = &scopes;
    Values values(module_, scopes);
    values_ = &values;
    const bool complex_reported = values.too_complex();
    if (complex_reported) {
      Add(audit_detail::kTooComplex, v1::SEVERITY_VIOLATION, 0,
          "the audit cannot follow the module aliasing in this file (too many paths)", "");
    }
    relevant_escapes_ = values.RelevantEscapes();
    CollectClassNames(module_);
    CheckEscapes();
    Check(module_);
    CheckDsl();
    if (values.too_complex() && !complex_reported) {  // the work bound, reached while checking
      Add(audit_detail::kTooComplex, v1::SEVERITY_VIOLATION, 0,
          "the audit cannot follow the module aliasing in this file (too much work)", "");
    }
    return std::move(findings_);
  }

  void AddUnparsable(const std::string& message) {
    Add(audit_detail::kUnparsable, v1::SEVERITY_VIOLATION, 0,
        absl::StrCat("the audit's parser cannot read kernel.py (", message,
                     "); what it cannot read, it does not pass"),
        message);
  }

  std::vector<v1::AuditFinding> TakeFindings() { return std::move(findings_); }

 private:
  void Add(const std::string& code, v1::FindingSeverity severity, int line,
           const std::string& message, const std::string& snippet) {
    if (findings_.size() >= 64) return;
    if (!seen_.insert(absl::StrCat(code, ":", line)).second) return;
    v1::AuditFinding finding;
    finding.set_code(code);
    finding.set_severity(severity);
    finding.set_phase(v1::PHASE_STATIC_AUDIT);
    finding.set_message(message);
    finding.set_evidence(line > 0 ? absl::StrCat(options_.filename, ":", line, ": ", snippet)
                                  : absl::StrCat(options_.filename, ": ", snippet));
    findings_.push_back(std::move(finding));
  }

  void CheckEncoding() {
    const auto encoding = DeclaredEncoding(source_);
    if (encoding && !IsUtf8Name(*encoding)) {
      Add(audit_detail::kSourceEncoding, v1::SEVERITY_VIOLATION, 0,
          absl::StrCat("kernel.py declares the encoding '", *encoding,
                       "': Python would decode it differently from the UTF-8 text audited"),
          absl::StrCat("coding: ", *encoding));
    }
  }

  // Matches the rules against every run of components of `path` (a path the kernel reaches)
  // and reports each forbidden one. `what` is how the kernel wrote it.
  void CheckPath(const std::string& path, int line, const std::string& what, int depth = 0) {
    const Parts parts = SplitPath(path);
    // A module held under another name (enum.bltns is builtins): the path through it is also
    // the module's own path, checked as such (twice at most: an alias inside an alias's module).
    if (depth < 2 && !aliases_.empty() && !IsUnknownRooted(path)) {
      std::string prefix;
      for (size_t k = 0; k < parts.size() && parts[k] != kGap; ++k) {
        prefix = k == 0 ? parts[0] : absl::StrCat(prefix, ".", parts[k]);
        auto it = aliases_.find(prefix);
        if (it == aliases_.end()) continue;
        const std::string target = it->second;
        const std::string root = target.substr(0, target.find('.'));
        if (!audit_detail::KernelMayImport(root)) {
          // A module a kernel may not import, reached through another's attribute.
          Add(audit_detail::kImport, v1::SEVERITY_VIOLATION, line,
              absl::StrCat(path, " reaches ", target, ": ",
                           audit_detail::NotImportableReason(root)),
              what.empty() ? path : what);
        }
        CheckPath(absl::StrCat(target, path.substr(prefix.size())), line,
                  what.empty() ? path : what, depth + 1);
      }
    }
    for (const std::string& part : parts) {
      if (part != kGap && part != kUnknown && audit_detail::IsImportHelperName(part)) {
        AddImportHelper(part, line, what.empty() ? path : what);
        break;
      }
    }
    for (size_t k = 1; k < parts.size(); ++k) {  // below a module: from m import getattr_helper
      if (parts[k] != kGap && parts[k] != kUnknown &&
          audit_detail::IsAttributeHelperName(parts[k])) {
        AddDynamicName(
            line, absl::StrCat(path, ": a helper that reads attributes by a name given as text"),
            what.empty() ? path : what);
        break;
      }
    }
    for (size_t begin = 0; begin < parts.size(); ++begin) {
      if (parts[begin] == kGap || parts[begin] == kUnknown) continue;
      size_t end = begin;
      while (end < parts.size() && parts[end] != kGap) ++end;
      const bool inside_chain = begin > 0;
      const audit_detail::Rule* rule = audit_detail::BestRule(parts, begin, end, inside_chain);
      if (rule == nullptr || rule->code == nullptr) continue;
      std::string shown = path;
      if (IsUnknownRooted(shown)) shown = shown.substr(std::min<size_t>(2, shown.size()));
      Add(rule->code, v1::SEVERITY_VIOLATION, line,
          absl::StrCat(shown, shown == what || what.empty() ? "" : absl::StrCat(" (", what, ")"),
                       ": ", rule->reason),
          what.empty() ? shown : what);
    }
  }

  // CheckPath for a path the kernel reaches through a value; an unknown root may be any
  // escaped module.
  void CheckReach(const std::string& path, int line, const std::string& what) {
    CheckPath(path, line, what);
    if (!IsUnknownRooted(path)) return;
    const std::string rest = path.size() > 1 ? path.substr(2) : "";
    if (rest.empty()) return;
    for (const std::string& escaped : relevant_escapes_) {
      CheckPath(absl::StrCat(escaped, ".", rest), line, what);
    }
  }

  // A module object where the audit cannot follow it (the escape rule, class Values); a name
  // maker there too (abc.ABCMeta in a list, called later: CheckNameMakers never sees the call).
  void CheckEscapes() {
    for (const audit_detail::EscapeSite& site : values_->escape_sites()) {
      for (const std::string& path : values_->Of(*site.expression)) {
        // A class base is the ordinary use of Enum and NamedTuple (class Mode(enum.Enum)).
        if (site.how != "used as a class base" && FindNameMaker(path) != nullptr) {
          AddDynamicName(
              site.expression->line,
              absl::StrCat(path, " is ", site.how, ", where its later calls are not seen"),
              ChainText(*site.expression));
          break;
        }
        if (!values_->module_objects().count(path)) continue;
        const std::string what = ChainText(*site.expression);
        Add(audit_detail::kModuleEscape, v1::SEVERITY_VIOLATION, site.expression->line,
            absl::StrCat("the module ", path, what.empty() || what == path ? "" : " (" + what + ")",
                         " is ", site.how, ": what is reached through it cannot be audited"),
            what.empty() ? path : what);
        break;
      }
    }
  }

  // An attribute store or delete on `base`: patching a module (or a class of one), through
  // any alias the audit follows. (A store on a value it cannot follow is not attributed: the
  // runtime audit and the process boundary bound what a patch of the kernel's own process
  // gains.)
  void CheckPatch(const PyNode& base, absl::string_view attribute, int line,
                  const std::string& what) {
    for (const std::string& path : values_->Of(base)) {
      if (IsUnknownRooted(path)) continue;
      Add(audit_detail::kModulePatch, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("assigning to ", path, ".", attribute, ": patching modules is forbidden"),
          what + " = ...");
      return;
    }
  }

  void CheckIntrospectionAttribute(absl::string_view attribute, int line, const std::string& what) {
    if (audit_detail::IsIntrospectionAttribute(attribute)) {
      Add(audit_detail::kIntrospection, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("access to .", attribute, ": reaching interpreter internals is forbidden"),
          what.empty() ? absl::StrCat(".", attribute) : what);
    }
  }

  // A library helper that imports a module or resolves an object by a name given as text
  // (sympy.external.import_module, jinja2.utils.import_string), reached through a module or any
  // value: what it returns is a module the audit cannot follow.
  void AddImportHelper(absl::string_view name, int line, const std::string& what) {
    Add(audit_detail::kDynamicImport, v1::SEVERITY_VIOLATION, line,
        absl::StrCat(name,
                     ": a helper that imports or resolves by a name given as text (dynamic "
                     "imports are forbidden: what it returns cannot be audited)"),
        what);
  }

  // __array_interface__ and its kin, torch's raw-address and C++-file members, wherever the
  // name appears: through any object that has it (an instance, an alias, a subclass), numpy,
  // torch or a DSL wraps a raw address or opens a file, with no ctypes and no audit event.
  void CheckRawMemoryName(absl::string_view name, int line, const std::string& what) {
    const char* why = audit_detail::RawNameReason(name);
    if (why == nullptr) return;
    Add(audit_detail::kCall, v1::SEVERITY_VIOLATION, line, absl::StrCat(name, ": ", why),
        what.empty() ? std::string(name) : what);
  }

  // A protocol method's name defined or bound (def __len__, __getitem__ = f, C.__iter__ = g,
  // setattr(C, "__hash__", h), type(..., {"__add__": f})): refused outside the short list of
  // those a kernel may define (audit_detail::ProtocolHookReason). Reads are not checked.
  void CheckProtocolHook(absl::string_view name, int line, const std::string& what) {
    if (audit_detail::Contains(kAttributeHooks, name)) return;  // CheckAttributeHook's
    const char* why = audit_detail::ProtocolHookReason(name);
    if (why == nullptr) return;
    Add(audit_detail::kCall, v1::SEVERITY_VIOLATION, line, absl::StrCat(name, ": ", why),
        what.empty() ? std::string(name) : what);
  }

  // A class's base: the kernel's own classes, builtin types and the library classes
  // audit_detail::MayDeriveFrom allows; any other library class (or a base the audit cannot
  // follow) brings protocol methods written in Python that read what the subclass defines.
  void CheckBase(const PyNode* base, int line, const std::string& what) {
    if (base == nullptr) return;
    // A name of the kernel's own classes, or a builtin type: no module path of its own (where
    // the name is also bound to a library class, that class's path is among its values).
    const bool own_or_builtin =
        base->Is("Name") &&
        (class_names_.count(std::string(base->Str("id"))) > 0 || scopes_->IsBuiltin(base));
    for (const std::string& path : values_->Of(*base)) {
      if (audit_detail::MayDeriveFrom(path)) continue;
      const bool unknown = IsUnknownRooted(path);
      if (own_or_builtin && (unknown || path == base->Str("id"))) continue;
      Add(audit_detail::kCall, v1::SEVERITY_VIOLATION, line,
          absl::StrCat(what, " derives from ", unknown ? "a class the audit cannot follow" : path,
                       ": a library class's protocol methods, written in Python, run on "
                       "attributes its subclass defines, which C code may call holding what it "
                       "passes borrowed (raw memory access is forbidden); kernel.py may derive "
                       "from its own classes, builtin types, torch.nn.Module, "
                       "torch.autograd.Function, typing.NamedTuple, typing.Generic, abc.ABC, "
                       "enum.Enum and enum.IntEnum"),
          what);
      return;
    }
  }

  // The names the kernel's class statements bind, in any scope.
  void CollectClassNames(const PyNode& node) {
    if (node.Is("ClassDef")) class_names_.insert(std::string(node.Str("name")));
    ForEachChild(node, [&](const PyNode& child) { CollectClassNames(child); });
  }

  // `node` is the name `id` and means the builtin (no binding of the kernel's shadows it).
  bool IsBuiltinName(const PyNode* node, absl::string_view id) const {
    return node != nullptr && node->Is("Name") && node->Str("id") == id && scopes_->IsBuiltin(node);
  }

  void AddDynamicName(int line, const std::string& message, const std::string& what) {
    Add(audit_detail::kDynamicAttribute, v1::SEVERITY_VIOLATION, line,
        absl::StrCat(message, ": names made at run time become attributes the audit cannot see"),
        what);
  }

  // A definition or binding of an attribute hook (def __getattr__, __getattr__ = f).
  void CheckAttributeHook(absl::string_view name, int line, const std::string& what) {
    if (audit_detail::Contains(kAttributeHooks, name)) {
      AddDynamicName(line, absl::StrCat("defines ", name, ", which answers any attribute name"),
                     what);
    }
  }

  // Whether a class body binds a value at class level (an Enum's members).
  static bool HasClassLevelValues(const PyNode& class_def) {
    for (const PyNode* statement : NodeItems(class_def, "body")) {
      if (statement == nullptr) continue;
      if (statement->Is("Assign") || (statement->Is("AnnAssign") && statement->Child("value"))) {
        return true;
      }
    }
    return false;
  }

  // class M(type), class C(metaclass=M): the metaclass builds the namespace.
  void CheckClassDef(const PyNode& node) {
    for (const PyNode* base : NodeItems(node, "bases")) {
      CheckBase(base, node.line, absl::StrCat("class ", node.Str("name")));
    }
    for (const PyNode* base : NodeItems(node, "bases")) {
      if (IsBuiltinName(base, "type")) {
        allowed_type_values_.insert(base);
        AddDynamicName(node.line, absl::StrCat("class ", node.Str("name"), "(type) is a metaclass"),
                       absl::StrCat("class ", node.Str("name"), "(type)"));
      }
    }
    // A class deriving from a factory that makes attributes from names given at run time has
    // its maker's call: a namespace type (class N(types.SimpleNamespace), then N(**d)), a
    // metaclass, or an Enum with no members of its own (its functional form: E('X', names)).
    for (const PyNode* base : NodeItems(node, "bases")) {
      if (base == nullptr) continue;
      for (const std::string& path : values_->Of(*base)) {
        const bool enum_family =
            absl::StartsWith(path, "enum.") && path != "enum.EnumMeta" && path != "enum.EnumType";
        if (FindNameMaker(path) == nullptr || path == "typing.NamedTuple" ||
            path == "typing.TypedDict") {
          continue;
        }
        if (enum_family && HasClassLevelValues(node)) continue;
        AddDynamicName(node.line,
                       absl::StrCat("class ", node.Str("name"), " derives from ", path,
                                    enum_family ? " with no members, so its call makes them" : ""),
                       absl::StrCat("class ", node.Str("name"), "(", path, ")"));
        break;
      }
    }
    for (const PyNode* keyword : NodeItems(node, "keywords")) {
      if (keyword == nullptr) continue;
      if (keyword->Str("arg") == "metaclass") {
        AddDynamicName(node.line, absl::StrCat("class ", node.Str("name"), " names a metaclass"),
                       absl::StrCat("class ", node.Str("name"), "(metaclass=...)"));
      } else if (IsDoubleStar(*keyword)) {
        AddDynamicName(node.line, "class keywords unpacked from a mapping",
                       absl::StrCat("class ", node.Str("name"), "(**...)"));
      }
    }
  }

  // type(name, bases, namespace), type(x)(...), types.new_class(...), SimpleNamespace(**d), ...
  void CheckNameMakers(const PyNode& call) {
    const PyNode* func = call.Child("func");
    const auto args = NodeItems(call, "args");
    const auto keywords = NodeItems(call, "keywords");
    const int line = call.line;
    const std::string what = ChainText(*func) + "(...)";
    auto unpacked = [&]() -> const PyNode* {
      for (const PyNode* keyword : keywords) {
        if (keyword == nullptr) continue;
        if (IsDoubleStar(*keyword)) {
          const PyNode* value = keyword->Child("value");
          const bool mapping = value != nullptr && (value->Is("Dict") || value->Is("Call"));
          if (!mapping || !LiteralNames(value, *scopes_)) return value;
        }
      }
      return nullptr;
    };
    auto starred = [&]() {
      return std::any_of(args.begin(), args.end(),
                         [](const PyNode* a) { return a == nullptr || a->Is("Starred"); });
    };
    // The builtin type, called with a namespace (or through the type of a value).
    const bool type_call = IsBuiltinName(func, "type");
    // type(x)(...), type(x).__new__(mcs, ...), type(x).__call__(...): a value's metaclass.
    const bool method = IsConstructorAttribute(func);
    const PyNode* metaclass = method ? func->Child("value") : func;
    const bool type_of_call = metaclass != nullptr && metaclass->Is("Call") &&
                              IsBuiltinName(metaclass->Child("func"), "type");
    if (type_call || type_of_call) {
      const std::string shown = type_call ? "type(name, bases, namespace)" : "type(...)(...)";
      const size_t namespace_at = method ? 3 : 2;  // __new__ / __call__ take the class first
      if (args.size() > namespace_at) {
        const PyNode* bases = args[namespace_at - 1];
        if (bases != nullptr && bases->Is("Tuple")) {
          for (const PyNode* base : NodeItems(*bases, "elts")) CheckBase(base, line, shown);
        } else {
          CheckBase(bases, line, shown);
        }
      }
      if (starred() || unpacked() != nullptr) {
        AddDynamicName(line, absl::StrCat(shown, " with unpacked arguments"), shown);
      } else if (args.size() > namespace_at && !LiteralNames(args[namespace_at], *scopes_)) {
        AddDynamicName(line, absl::StrCat(shown, " with a namespace whose keys are not literal"),
                       shown);
      }
      return;
    }
    for (const std::string& path : values_->Of(*func)) {
      if (IsUnknownRooted(path)) continue;
      const NameMaker* maker = FindNameMaker(path);
      if (maker == nullptr) continue;
      if (starred()) {
        AddDynamicName(line, absl::StrCat(path, " with unpacked positional arguments"), what);
        return;
      }
      if (unpacked() != nullptr) {
        AddDynamicName(line, absl::StrCat(path, " with keywords unpacked from a mapping"), what);
        return;
      }
      for (size_t i = 0; i < args.size(); ++i) {
        const bool names =
            maker->names_argument < 0 || static_cast<int>(i) == maker->names_argument;
        if (names && !LiteralNames(args[i], *scopes_)) {
          AddDynamicName(line, absl::StrCat(path, " with names that are not literal"), what);
          return;
        }
      }
      for (const PyNode* keyword : keywords) {
        if (keyword == nullptr) continue;
        const absl::string_view arg = keyword->Str("arg");
        if (arg == "exec_body") {
          AddDynamicName(line, absl::StrCat(path, " with exec_body, which fills the namespace"),
                         what);
          return;
        }
        // make_dataclass's namespace= is merged into the class it makes.
        const bool names =
            (maker->names_keyword != nullptr && arg == maker->names_keyword) || arg == "namespace";
        if (names && !LiteralNames(keyword->Child("value"), *scopes_)) {
          AddDynamicName(line, absl::StrCat(path, " with names that are not literal"), what);
          return;
        }
      }
      if (path == "types.new_class" && args.size() >= 4) {
        AddDynamicName(line, absl::StrCat(path, " with exec_body, which fills the namespace"),
                       what);
        return;
      }
    }
  }

  // type(x): the builtin type called on one value, which gives the value's class (its metaclass,
  // when the value is a class: type(torch.Tensor)).
  bool IsTypeOf(const PyNode* node) const {
    return node != nullptr && node->Is("Call") && IsBuiltinName(node->Child("func"), "type") &&
           NodeItems(*node, "args").size() == 1 && NodeItems(*node, "keywords").empty();
  }

  void AllowTypeOf(const PyNode* node) {
    if (IsTypeOf(node)) allowed_type_of_.insert(node);
  }

  // Where type(x) may stand, marked before it is visited: compared (is, ==, in), its name read,
  // tested against (isinstance / issubclass), formatted (f-strings, str, repr, print, format), or
  // called or its __new__ / __call__ taken (CheckNameMakers judges those). Anywhere else it is a
  // class held as a value, which may be a metaclass called later with a namespace
  // (M = type(torch.Tensor); M(name, bases, ns)), where no rule sees the call.
  void MarkTypeOfUses(const PyNode& node) {
    if (node.Is("Compare")) {
      AllowTypeOf(node.Child("left"));
      for (const PyNode* item : NodeItems(node, "comparators")) AllowTypeOf(item);
    } else if (node.Is("Attribute")) {
      static constexpr const char* kReadable[] = {"__name__", "__qualname__", "__module__"};
      if (audit_detail::Contains(kReadable, node.Str("attr"))) AllowTypeOf(node.Child("value"));
    } else if (node.Is("FormattedValue")) {
      AllowTypeOf(node.Child("value"));
    } else if (node.Is("Call")) {
      const PyNode* callee = node.Child("func");
      AllowTypeOf(callee);  // type(x)(...)
      // type(x).__new__(...), type(x).__call__(...): called there, not held.
      if (IsConstructorAttribute(callee)) AllowTypeOf(callee->Child("value"));
      static constexpr const char* kTakers[] = {"isinstance", "issubclass", "str",
                                                "repr",       "print",      "format"};
      if (callee != nullptr && callee->Is("Name") &&
          audit_detail::Contains(kTakers, callee->Str("id")) && scopes_->IsBuiltin(callee)) {
        for (const PyNode* arg : NodeItems(node, "args")) {
          AllowTypeOf(arg);
          if (arg != nullptr && audit_detail::IsDisplay(*arg)) {
            for (const PyNode* item : NodeItems(*arg, "elts")) AllowTypeOf(item);
          }
        }
      }
    }
  }

  void CheckTypeOf(const PyNode& node) {
    if (!IsTypeOf(&node) || allowed_type_of_.count(&node)) return;
    AddDynamicName(node.line,
                   "type(...) held as a value (a class's type is its metaclass, which makes "
                   "classes from a namespace when called later)",
                   "type(...)");
  }

  // The builtin type as a value (t = type): only isinstance / issubclass may take it.
  void CheckTypeValue(const PyNode& node) {
    if (!IsBuiltinName(&node, "type") || ContextOf(node) != "Load") return;
    if (allowed_type_values_.count(&node)) return;
    AddDynamicName(node.line, "type used as a value (it makes classes from a namespace)", "type");
  }

  void CheckModule(const std::string& module, int line, const std::string& snippet) {
    imported_.insert(module);
    const std::string root = module.substr(0, module.find('.'));
    if (std::find(options_.third_party_roots.begin(), options_.third_party_roots.end(), root) !=
        options_.third_party_roots.end()) {
      Add(audit_detail::kImport, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("import of ", module, ": ", root,
                       " is a package installed beside the toolchain, not part of it (a kernel "
                       "uses torch, numpy, the variant's DSL and Python's standard library)"),
          snippet);
    }
    const Parts parts = SplitPath(module);
    const audit_detail::Rule* rule = audit_detail::BestRule(parts, 0, parts.size(), false);
    if (rule != nullptr && rule->code != nullptr) {
      Add(rule->code, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("import of ", module, ": ", rule->reason), snippet);
    } else if (!audit_detail::KernelMayImport(root)) {
      Add(audit_detail::kImport, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("import of ", module, ": ", audit_detail::NotImportableReason(root)),
          snippet);
    }
    // Forbidden modules reached inside the imported path (from torch import ctypes).
    CheckPath(module, line, snippet);
  }

  void CheckImport(const PyNode& node) {
    const int line = node.line;
    if (node.Is("Import")) {
      for (const PyNode* alias : NodeItems(node, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        CheckModule(name, line, absl::StrCat("import ", name));
      }
      return;
    }
    const std::string module(node.Str("module"));
    const PyValue* level = node.Get("level");
    const bool relative = level != nullptr && level->text != "0";
    if (relative) {
      Add(audit_detail::kImport, v1::SEVERITY_VIOLATION, line,
          "relative import: kernel.py must be self-contained",
          absl::StrCat("from ", std::string(std::stoi(level->text), '.'), module, " import ..."));
    }
    if (!module.empty()) CheckModule(module, line, absl::StrCat("from ", module, " import ..."));
    for (const PyNode* alias : NodeItems(node, "names")) {
      if (alias == nullptr || module.empty()) continue;
      const std::string name(alias->Str("name"));
      if (name == "*") continue;
      const std::string full = absl::StrCat(module, ".", name);
      CheckModule(full, line, absl::StrCat("from ", module, " import ", name));
      // A flagged name imported from any module (from cutlass.cute.runtime import make_ptr).
      CheckRawMemoryName(name, line, absl::StrCat("from ", module, " import ", name));
    }
  }

  void CheckName(const PyNode& node, bool is_call_target) {
    const std::string id(node.Str("id"));
    const int line = node.line;
    CheckRawMemoryName(id, line, id);
    if (ContextOf(node) != "Load") {
      CheckAttributeHook(id, line, absl::StrCat(id, " = ..."));
      CheckProtocolHook(id, line, absl::StrCat(id, " = ..."));
      if (audit_detail::Contains(kModuleMachinery, id)) {
        Add(audit_detail::kModulePatch, v1::SEVERITY_VIOLATION, line,
            absl::StrCat("binding ", id,
                         ": the import system's names of kernel.py's module are the judge's"),
            absl::StrCat(id, " = ..."));
      }
      return;
    }
    if (!is_call_target) CheckTypeValue(node);
    if (audit_detail::IsInterpreterGlobal(id)) {
      Add(audit_detail::kIntrospection, v1::SEVERITY_VIOLATION, line,
          absl::StrCat(id, ": reaching interpreter internals is forbidden"), id);
      return;
    }
    const bool builtin = scopes_->IsBuiltin(&node);
    if (builtin) {
      if (const audit_detail::Rule* rule = audit_detail::BuiltinRule(id)) {
        Add(rule->code, v1::SEVERITY_VIOLATION, line,
            absl::StrCat(id, ": ", rule->reason,
                         is_call_target ? "" : " (referenced, not only called)"),
            id + (is_call_target ? "(...)" : ""));
      }
      if (audit_detail::IsAttributeBuiltin(id) && !is_call_target) {
        Add(audit_detail::kDynamicAttribute, v1::SEVERITY_VIOLATION, line,
            absl::StrCat(id, " used as a value: the audit cannot see what it reaches"), id);
      }
    }
    // Names a star import may have bound (from torch import *; compile(...)).
    if (!values_->star_modules().empty() && !scopes_->BoundAnywhere(id)) {
      for (const std::string& module : values_->star_modules()) {
        CheckPath(absl::StrCat(module, ".", id), line, id);
      }
    }
  }

  // getattr / setattr / delattr / hasattr called directly.
  void CheckAttributeBuiltinCall(const PyNode& call) {
    const PyNode* func = call.Child("func");
    const std::string name(func->Str("id"));
    const auto args = NodeItems(call, "args");
    const int line = call.line;
    const auto attribute = args.size() >= 2 ? StringConstant(args[1]) : std::nullopt;
    if (!attribute || args[0] == nullptr || args[0]->Is("Starred")) {
      Add(audit_detail::kDynamicAttribute, v1::SEVERITY_VIOLATION, line,
          absl::StrCat(name,
                       " with a computed attribute name: the audit cannot see what it reaches"),
          name + "(...)");
      return;
    }
    const std::string what =
        absl::StrCat(name, "(", ChainText(*args[0]), ", \"", *attribute, "\")");
    if (!audit_detail::IsIdentifier(*attribute)) {
      Add(audit_detail::kDynamicAttribute, v1::SEVERITY_VIOLATION, line,
          absl::StrCat(name, " of '", *attribute, "', which is not an identifier"), what);
      return;
    }
    CheckIntrospectionAttribute(*attribute, line, what);
    for (const std::string& path : values_->Of(*args[0])) {
      CheckReach(Append(path, *attribute), line, what);
    }
    if (name == "setattr" || name == "delattr") CheckPatch(*args[0], *attribute, line, what);
  }

  void CheckAttribute(const PyNode& node) {
    const std::string attribute(node.Str("attr"));
    const int line = node.line;
    const std::string what = ChainText(node);
    CheckIntrospectionAttribute(attribute, line, what);
    CheckRawMemoryName(attribute, line, what);
    if (ContextOf(node) != "Load") CheckProtocolHook(attribute, line, what + " = ...");
    if (ContextOf(node) != "Load" && (attribute == "__name__" || attribute == "__qualname__")) {
      // Libraries set attributes under an object's name (torch.distributions' lazy_property:
      // setattr(instance, fn.__name__, ...)): a name given at run time is a setattr by text
      // (red team, thirteenth session: __array_interface__ put on an instance so).
      AddDynamicName(line, absl::StrCat(what, " = ...: renaming a function or class"), what);
    }
    if (audit_detail::IsImportHelperName(attribute)) AddImportHelper(attribute, line, what);
    if (audit_detail::IsAttributeHelperName(attribute)) {
      AddDynamicName(line,
                     absl::StrCat(what, ": a helper that reads attributes by a name given as text"),
                     what);
    }
    const PyNode* value = node.Child("value");
    if (value == nullptr) return;
    for (const std::string& path : values_->Of(*value)) {
      CheckReach(Append(path, attribute), line, what);
    }
    if (ContextOf(node) != "Load") CheckPatch(*value, attribute, line, what);
  }

  void CheckSubscript(const PyNode& node) {
    const PyNode* value = node.Child("value");
    const auto key = StringConstant(node.Child("slice"));
    if (value == nullptr || !key || !audit_detail::IsDottedIdentifier(*key)) return;
    for (const std::string& path : values_->Of(*value)) {
      if (IsUnknownRooted(path)) continue;
      const std::string what = absl::StrCat(ChainText(*value), "[\"", *key, "\"]");
      CheckPath(Append(path, *key), node.line, what);
      CheckPath(*key, node.line, what);
    }
  }

  void CheckCall(const PyNode& node) {
    const PyNode* func = node.Child("func");
    if (func == nullptr) return;
    // "{0.__globals__}".format(f): a format string reads attributes by the names in it.
    if (func->Is("Attribute") &&
        (func->Str("attr") == "format" || func->Str("attr") == "format_map")) {
      if (const auto text = StringConstant(func->Child("value"))) {
        for (size_t open = text->find('{'); open != std::string::npos;
             open = text->find('{', open + 1)) {
          const size_t close = text->find_first_of(":!}", open);
          const std::string field = text->substr(open + 1, close - open - 1);
          if (field.find("__") != std::string::npos) {
            Add(audit_detail::kIntrospection, v1::SEVERITY_VIOLATION, node.line,
                absl::StrCat("the format field {", field, "} reads interpreter internals by name"),
                absl::StrCat("\"{", field, "}\".format(...)"));
            break;
          }
        }
      }
    }
    if (func->Is("Name") && audit_detail::IsAttributeBuiltin(func->Str("id")) &&
        scopes_->IsBuiltin(func)) {
      CheckAttributeBuiltinCall(node);
    }
    const std::string what = ChainText(*func) + "(...)";
    for (const std::string& path : values_->Of(*func)) {
      if (IsUnknownRooted(path)) continue;
      if (audit_detail::IsLibraryCompute(path)) {
        Add(audit_detail::kLibraryCompute, v1::SEVERITY_WARNING, node.line,
            absl::StrCat(path, " runs a library / ATen kernel; the runtime audit weighs its share"),
            what);
      }
      if (audit_detail::IsSideStream(path)) {
        Add(audit_detail::kSideStream, v1::SEVERITY_WARNING, node.line,
            "side streams must be joined before solve returns; the judge checks outputs on the "
            "current stream",
            what);
      }
    }
  }

  void Check(const PyNode& node) {
    const std::string& type = node.type;
    MarkTypeOfUses(node);
    // A name split to pass the audit ("c" + "types", f"{'ca'}st", "".join([...]), "sepytc"[::-1]):
    // the text the expression makes, checked as its parts would be if written whole.
    if (type == "BinOp" || type == "JoinedStr" || type == "Call" || type == "Subscript") {
      CheckFolded(node);
    }
    if (type == "Import" || type == "ImportFrom") {
      CheckImport(node);
    } else if (type == "Attribute") {
      CheckAttribute(node);
    } else if (type == "Subscript") {
      CheckSubscript(node);
    } else if (type == "Call") {
      CheckCall(node);
      CheckNameMakers(node);
      CheckTypeOf(node);
      if (const PyNode* callee = node.Child("func");
          IsBuiltinName(callee, "isinstance") || IsBuiltinName(callee, "issubclass")) {
        for (const PyNode* arg : NodeItems(node, "args")) AllowTypeIn(arg);
      }
      // The callee position: a forbidden builtin called, getattr called directly.
      const PyNode* func = node.Child("func");
      if (func != nullptr && func->Is("Name")) CheckName(*func, true);
      ForEachChild(node, [&](const PyNode& child) {
        if (&child != func || !func->Is("Name")) Check(child);
      });
      return;
    } else if (type == "Name") {
      CheckName(node, false);
    } else if (type == "FunctionDef" || type == "AsyncFunctionDef") {
      CheckRawMemoryName(node.Str("name"), node.line, absl::StrCat("def ", node.Str("name")));
      CheckAttributeHook(node.Str("name"), node.line, absl::StrCat("def ", node.Str("name")));
      CheckProtocolHook(node.Str("name"), node.line, absl::StrCat("def ", node.Str("name")));
    } else if (type == "ClassDef") {
      CheckClassDef(node);
    } else if (type == "keyword" || type == "arg") {
      CheckRawMemoryName(node.Str("arg"), node.line, absl::StrCat(node.Str("arg"), "=..."));
      if (type == "keyword") {
        CheckProtocolHook(node.Str("arg"), node.line, absl::StrCat(node.Str("arg"), "=..."));
      }
    } else if (type == "Constant") {
      if (const auto text = StringConstant(&node)) {
        CheckRawMemoryName(*text, node.line, "");
        CheckProtocolHook(*text, node.line, absl::StrCat("\"", *text, "\""));
        CheckNamedText(*text, node.line, /*computed=*/false);
      }
    } else if (type == "Match") {
      // `case C(attr=p)` reads attr of the subject (of a part of it: taken as the subject).
      if (const PyNode* subject = node.Child("subject")) CheckPatternReads(node, *subject);
    } else if (type == "match_case" || type == "MatchClass") {
      // `case C(attr=p)` reads attr of the subject: forbidden names are forbidden there too.
      for (const PyValue& attribute : node.Items("kwd_attrs")) {
        CheckIntrospectionAttribute(attribute.text, node.line,
                                    "case ...(" + attribute.text + "=...)");
      }
    } else if (type == "BinOp") {
      const PyNode* op = node.Child("op");
      if (op != nullptr && op->Is("MatMult")) {
        Add(audit_detail::kLibraryCompute, v1::SEVERITY_WARNING, node.line,
            "matrix product with @ runs a library kernel (cuBLAS); the runtime audit weighs its "
            "share",
            "@");
      }
    }
    ForEachChild(node, [&](const PyNode& child) { Check(child); });
  }

  // The text a string expression of constants makes: a constant, + of two such, an f-string
  // of constants and such expressions, a constant sliced [::-1]; nullopt for anything else.
  std::optional<std::string> FoldedText(const PyNode& node, int depth = 0) {
    if (depth > 2000 || unfoldable_.count(&node)) return std::nullopt;
    auto text = FoldText(node, depth);
    if (!text || text->size() > (1u << 20)) {
      unfoldable_.insert(&node);
      return std::nullopt;
    }
    return text;
  }

  // Checks the text a string expression of constants makes, once for the largest expression
  // that makes one (its parts are not checked again: a chain of n pieces costs n, not n^2).
  void CheckFolded(const PyNode& node) {
    if (folded_.count(&node) || StringConstant(&node)) return;
    const auto text = FoldedText(node);
    if (!text) return;
    MarkFolded(node);
    CheckNamedText(*text, node.line, /*computed=*/true);
  }

  void MarkFolded(const PyNode& node) {
    if (!folded_.insert(&node).second) return;
    ForEachChild(node, [&](const PyNode& child) { MarkFolded(child); });
  }

  std::optional<std::string> FoldText(const PyNode& node, int depth) {
    if (const auto text = StringConstant(&node)) return text;
    if (node.Is("BinOp")) {
      const PyNode* op = node.Child("op");
      const PyNode* left = node.Child("left");
      const PyNode* right = node.Child("right");
      if (op == nullptr || !op->Is("Add") || left == nullptr || right == nullptr)
        return std::nullopt;
      auto a = FoldedText(*left, depth + 1);
      if (!a) return std::nullopt;
      auto b = FoldedText(*right, depth + 1);
      if (!b) return std::nullopt;
      return *a + *b;
    }
    if (node.Is("JoinedStr")) {
      std::string out;
      for (const PyNode* part : NodeItems(node, "values")) {
        const PyNode* value =
            part != nullptr && part->Is("FormattedValue") ? part->Child("value") : part;
        if (value == nullptr) return std::nullopt;
        auto text = FoldedText(*value, depth + 1);
        if (!text) return std::nullopt;
        out += *text;
      }
      return out;
    }
    if (node.Is("Call")) {
      // "".join(["c", "types"]), chr(99), b"ctypes".decode()
      const PyNode* func = node.Child("func");
      const auto args = NodeItems(node, "args");
      if (func != nullptr && func->Is("Attribute") && func->Str("attr") == "join" &&
          args.size() == 1 && args[0] != nullptr && (args[0]->Is("List") || args[0]->Is("Tuple"))) {
        const PyNode* separator = func->Child("value");
        auto joiner = separator != nullptr ? FoldedText(*separator, depth + 1) : std::nullopt;
        if (!joiner) return std::nullopt;
        std::string out;
        bool first = true;
        for (const PyNode* item : NodeItems(*args[0], "elts")) {
          auto text = item != nullptr ? FoldedText(*item, depth + 1) : std::nullopt;
          if (!text) return std::nullopt;
          if (!first) out += *joiner;
          out += *text;
          first = false;
        }
        return out;
      }
      if (func != nullptr && func->Is("Name") && func->Str("id") == "chr" && args.size() == 1 &&
          args[0] != nullptr && args[0]->Is("Constant")) {
        const PyValue* value = args[0]->Get("value");
        int code = 0;
        if (value != nullptr && value->kind == PyValue::Kind::kInt &&
            absl::SimpleAtoi(value->text, &code) && code > 0 && code < 128) {
          return std::string(1, static_cast<char>(code));
        }
        return std::nullopt;
      }
      // "CTYPES".lower(), " ctypes ".strip(), "cXtypes".replace("X", ""): a text method of a
      // folded text with constant arguments.
      if (func != nullptr && func->Is("Attribute") && func->Child("value") != nullptr &&
          NodeItems(node, "keywords").empty()) {
        const std::string method(func->Str("attr"));
        const bool no_args = args.empty();
        if ((no_args && (method == "lower" || method == "upper" || method == "casefold" ||
                         method == "swapcase" || method == "strip" || method == "lstrip" ||
                         method == "rstrip")) ||
            (method == "replace" && args.size() == 2)) {
          auto text = FoldedText(*func->Child("value"), depth + 1);
          if (!text) return std::nullopt;
          if (method == "replace") {
            auto from = args[0] != nullptr ? FoldedText(*args[0], depth + 1) : std::nullopt;
            auto to = args[1] != nullptr ? FoldedText(*args[1], depth + 1) : std::nullopt;
            if (!from || !to || from->empty()) return std::nullopt;
            return absl::StrReplaceAll(*text, {{*from, *to}});
          }
          if (method == "strip" || method == "lstrip" || method == "rstrip") {
            absl::string_view view(*text);
            if (method != "rstrip") view = absl::StripLeadingAsciiWhitespace(view);
            if (method != "lstrip") view = absl::StripTrailingAsciiWhitespace(view);
            return std::string(view);
          }
          if (method == "upper") return absl::AsciiStrToUpper(*text);
          if (method != "swapcase") return absl::AsciiStrToLower(*text);  // lower, casefold
          std::string out = *text;
          for (char& c : out) {
            const auto u = static_cast<unsigned char>(c);
            c = absl::ascii_isupper(u) ? absl::ascii_tolower(u) : absl::ascii_toupper(u);
          }
          return out;
        }
      }
      if (func != nullptr && func->Is("Attribute") && func->Str("attr") == "decode" &&
          args.empty()) {
        const PyNode* bytes = func->Child("value");
        const PyValue* value =
            bytes != nullptr && bytes->Is("Constant") ? bytes->Get("value") : nullptr;
        if (value != nullptr && value->kind == PyValue::Kind::kBytes && !value->inexact)
          return value->text;
        // bytes([99, 116, ...]).decode(): a list or tuple of constant byte values.
        const PyNode* made = bytes != nullptr && bytes->Is("Call") ? bytes->Child("func") : nullptr;
        const auto made_args =
            bytes != nullptr ? NodeItems(*bytes, "args") : std::vector<const PyNode*>{};
        if (made != nullptr && made->Is("Name") && made->Str("id") == "bytes" &&
            made_args.size() == 1 && made_args[0] != nullptr &&
            (made_args[0]->Is("List") || made_args[0]->Is("Tuple"))) {
          std::string out;
          for (const PyNode* item : NodeItems(*made_args[0], "elts")) {
            const PyValue* byte =
                item != nullptr && item->Is("Constant") ? item->Get("value") : nullptr;
            int code = -1;
            if (byte == nullptr || byte->kind != PyValue::Kind::kInt ||
                !absl::SimpleAtoi(byte->text, &code) || code < 0 || code > 255) {
              return std::nullopt;
            }
            out += static_cast<char>(code);
          }
          return out;
        }
      }
      return std::nullopt;
    }
    if (node.Is("Subscript")) {  // "sepytc"[::-1]
      const PyNode* slice = node.Child("slice");
      const PyNode* value = node.Child("value");
      if (slice == nullptr || value == nullptr || !slice->Is("Slice") || slice->Child("lower") ||
          slice->Child("upper")) {
        return std::nullopt;
      }
      const PyNode* step = slice->Child("step");
      const PyNode* operand =
          step != nullptr && step->Is("UnaryOp") ? step->Child("operand") : nullptr;
      const PyValue* one =
          operand != nullptr && operand->Is("Constant") ? operand->Get("value") : nullptr;
      if (one == nullptr || one->text != "1" || !step->Child("op") ||
          !step->Child("op")->Is("USub"))
        return std::nullopt;
      auto text = FoldedText(*value, depth + 1);
      if (!text) return std::nullopt;
      return std::string(text->rbegin(), text->rend());
    }
    return std::nullopt;
  }

  // Text that names what the audit refuses by name: a forbidden module ("ctypes",
  // "!!python/module:_ctypes": each dotted name in it), an attribute that reaches the
  // interpreter, the interpreter's C API (Py_*, _Py*). A computed text is checked whole and by
  // its words; a literal one only where it is such a name whole (a docstring's words are not).
  void CheckNamedText(const std::string& text, int line, bool computed) {
    if (!computed && text.size() > 256) return;  // no name a rule knows is that long
    std::vector<std::string> words;
    if (computed) {
      std::string word;
      for (char c : text + " ") {
        if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
          word += c;
        } else if (!word.empty()) {
          words.push_back(word);
          word.clear();
        }
      }
    } else {
      words.push_back(text);
    }
    for (const std::string& word : words) {
      if (word.empty() || !audit_detail::IsDottedIdentifier(word)) continue;
      const std::string shown = computed ? absl::StrCat("\"", text.substr(0, 80), "\"") : word;
      if (computed) CheckRawMemoryName(word, line, shown);
      if (computed) CheckProtocolHook(word, line, shown);
      if (computed && audit_detail::IsIntrospectionAttribute(word)) {
        Add(audit_detail::kIntrospection, v1::SEVERITY_VIOLATION, line,
            absl::StrCat("a string made to name ", word,
                         ": reaching interpreter internals is forbidden"),
            shown);
      }
      const bool c_api = absl::StartsWith(word, "Py_") || absl::StartsWith(word, "_Py") ||
                         (absl::StartsWith(word, "Py") && word.size() > 3 &&
                          absl::ascii_isupper(static_cast<unsigned char>(word[2])) &&
                          absl::StrContains(word, '_'));
      if (c_api) {
        Add(audit_detail::kCall, v1::SEVERITY_VIOLATION, line,
            absl::StrCat("'", word, "': the interpreter's C API is off limits"), shown);
      }
      const Parts parts = SplitPath(word);
      const audit_detail::Rule* rule = audit_detail::BestRule(parts, 0, parts.size(), true);
      if (rule != nullptr && rule->code != nullptr && rule->inside_chains) {
        Add(rule->code, v1::SEVERITY_VIOLATION, line,
            absl::StrCat("a string naming ", word, ": ", rule->reason), shown);
      }
    }
  }

  // isinstance(x, type), isinstance(x, (int, type)): the type only tested against.
  void AllowTypeIn(const PyNode* node) {
    if (node == nullptr) return;
    if (node->Is("Name") && node->Str("id") == "type") allowed_type_values_.insert(node);
    if (audit_detail::IsDisplay(*node)) {
      for (const PyNode* item : NodeItems(*node, "elts")) AllowTypeIn(item);
    }
  }

  void CheckPatternReads(const PyNode& node, const PyNode& subject) {
    if (node.Is("MatchClass")) {
      for (const PyValue& attribute : node.Items("kwd_attrs")) {
        if (!audit_detail::IsIdentifier(attribute.text)) continue;
        for (const std::string& path : values_->Of(subject)) {
          CheckReach(Append(path, attribute.text), node.line,
                     absl::StrCat("case ...(", attribute.text, "=...)"));
        }
      }
    }
    ForEachChild(node, [&](const PyNode& child) { CheckPatternReads(child, subject); });
  }

  void CheckDsl() {
    if (options_.dsl == v1::DSL_UNSPECIFIED) return;
    auto imports = [&](absl::string_view root) {
      for (const std::string& module : imported_) {
        if (module == root || absl::StartsWith(module, absl::StrCat(root, "."))) return true;
      }
      return false;
    };
    const bool cute = imports("cutlass");
    const bool tvm = imports("tvm");
    const bool own = options_.dsl == v1::CUTEDSL ? cute : tvm;
    const bool other = options_.dsl == v1::CUTEDSL ? tvm : cute;
    const char* own_name =
        options_.dsl == v1::CUTEDSL ? "CuTe DSL (import cutlass)" : "TVM TIRx (import tvm)";
    const char* other_name = options_.dsl == v1::CUTEDSL ? "tvm" : "cutlass";
    if (other) {
      Add(audit_detail::kWrongDsl, v1::SEVERITY_VIOLATION, 0,
          absl::StrCat("imports ", other_name, ": a variant may use only its own DSL, ", own_name),
          other_name);
    }
    if (!own) {
      Add(audit_detail::kNoDslImport,
          options_.require_dsl ? v1::SEVERITY_VIOLATION : v1::SEVERITY_SKIPPED, 0,
          absl::StrCat("kernel.py does not import ", own_name,
                       options_.require_dsl ? "; every call must launch a kernel written in it"
                                            : " (not required on this device)"),
          "imports: " + absl::StrJoin(imported_, ", "));
    }
  }

  absl::string_view source_;
  const PyNode& module_;
  StaticAuditOptions options_;
  const Scopes* scopes_ = nullptr;
  Values* values_ = nullptr;
  std::vector<std::string> relevant_escapes_;
  absl::flat_hash_map<std::string, std::string> aliases_;  // alias path -> module (kept ones)
  std::set<std::string> imported_;
  std::set<const PyNode*> allowed_type_values_;
  std::set<std::string> class_names_;        // bound by the kernel's class statements
  std::set<const PyNode*> folded_;           // parts of a string expression already checked whole
  std::set<const PyNode*> unfoldable_;       // expressions that make no text of constants
  std::set<const PyNode*> allowed_type_of_;  // type(x) calls standing where MarkTypeOfUses allows
  std::set<std::string> seen_;
  std::vector<v1::AuditFinding> findings_;
};

}  // namespace

std::vector<std::string> KernelToolchainRoots() {
  const auto roots = audit_detail::KernelToolchainRoots();
  return std::vector<std::string>(roots.begin(), roots.end());
}

std::vector<std::string> KernelStdlibRoots() {
  const auto roots = audit_detail::KernelStdlibRoots();
  return std::vector<std::string>(roots.begin(), roots.end());
}

std::vector<std::string> KernelProtocolMethods() {
  const auto methods = audit_detail::ProtocolMethodsAllowed();
  return std::vector<std::string>(methods.begin(), methods.end());
}

std::vector<std::string> KernelBaseClasses() {
  // Each class once, by its public path (torch.nn.Module, not torch.nn.modules.module.Module).
  std::vector<std::string> out;
  std::set<std::string> names;
  for (absl::string_view path : audit_detail::BaseClassesAllowed()) {
    const size_t dot = path.rfind('.');
    const std::string name(dot == absl::string_view::npos ? path : path.substr(dot + 1));
    if (names.insert(name).second) out.emplace_back(path);
  }
  return out;
}

std::optional<std::pair<std::string, std::string>> AuditModule(absl::string_view module) {
  const Parts parts = SplitPath(module);
  const audit_detail::Rule* rule = audit_detail::BestRule(parts, 0, parts.size(), false);
  if (rule == nullptr || rule->code == nullptr) return std::nullopt;
  return std::make_pair(std::string(rule->code), std::string(rule->reason));
}

std::vector<v1::AuditFinding> StaticAudit(absl::string_view source, const PyNode& module,
                                          const StaticAuditOptions& options) {
  return Auditor(source, module, options).Run();
}

std::vector<v1::AuditFinding> StaticAudit(absl::string_view source,
                                          const StaticAuditOptions& options) {
  absl::StatusOr<std::unique_ptr<PyNode>> module = ParsePython(source);
  if (!module.ok()) {
    PyNode empty;
    empty.type = "Module";
    Auditor auditor(source, empty, options);
    auditor.AddUnparsable(std::string(module.status().message()));
    return auditor.TakeFindings();
  }
  return StaticAudit(source, **module, options);
}

void ApplyAuditPolicy(const v1::AuditPolicy& policy, std::vector<v1::AuditFinding>* findings) {
  const std::set<std::string> allow(policy.allow().begin(), policy.allow().end());
  const std::set<std::string> deny(policy.deny().begin(), policy.deny().end());
  for (v1::AuditFinding& finding : *findings) {
    if (finding.severity() == v1::SEVERITY_SKIPPED) continue;
    if (deny.count(finding.code())) {
      finding.set_severity(v1::SEVERITY_VIOLATION);
    } else if (allow.count(finding.code()) ||
               (policy.permissive() && finding.phase() == v1::PHASE_STATIC_AUDIT &&
                finding.severity() == v1::SEVERITY_VIOLATION)) {
      finding.set_severity(v1::SEVERITY_WARNING);
    }
  }
}

std::vector<std::pair<std::string, std::string>> StaticAuditCodes() {
  return audit_detail::CodeDescriptions();
}

}  // namespace mkb
