#include "libmkb/judge/detail/module_values.h"

#include <algorithm>
#include <deque>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libmkb/judge/detail/audit_rules.h"
#include "libmkb/judge/detail/audit_tree.h"

namespace mkb::audit_detail {
namespace {

bool IsDunder(absl::string_view name) {
  return name.size() > 4 && absl::StartsWith(name, "__") && absl::EndsWith(name, "__");
}

}  // namespace

class ModuleValues::Analysis {
 public:
  Analysis(const PyNode& module, const NameScopes& scopes) : scopes_(scopes) {
    Survey(module, false);
    Collect(module, Context{});
    Solve();
  }

  // The module paths an expression may evaluate to (kUnknown: an object the audit cannot
  // follow).
  const Paths& Of(const PyNode& node) const {
    auto it = memo_.find(&node);
    if (it != memo_.end()) return it->second;
    Paths value = Eval(node, nullptr);
    return memo_.emplace(&node, std::move(value)).first->second;
  }

  const Paths& escaped() const { return escaped_; }
  const std::set<std::string>& module_objects() const { return module_objects_; }
  const std::vector<EscapeSite>& escape_sites() const { return escape_sites_; }
  const std::vector<std::string>& star_modules() const { return star_modules_; }
  bool too_complex() const { return too_complex_; }

  // The escaped paths that may still reach a rule when more attributes follow them.
  std::vector<std::string> RelevantEscapes() const {
    std::vector<std::string> out;
    for (const std::string& path : escaped_) {
      const Parts parts = SplitPath(path);
      // Only the run after the last gap continues into appended attributes.
      size_t begin = 0;
      for (size_t k = 0; k < parts.size(); ++k) {
        if (parts[k] == kGap) begin = k + 1;
      }
      for (; begin < parts.size(); ++begin) {
        if (IsRuleStem(parts, begin, parts.size())) {
          out.push_back(path);
          break;
        }
      }
    }
    return out;
  }

  bool IsBuiltinCall(const PyNode& call, absl::string_view builtin) const {
    const PyNode* func = call.Child("func");
    return func != nullptr && func->Is("Name") && func->Str("id") == builtin &&
           scopes_.IsBuiltin(func);
  }

 private:
  enum class SinkKind { kName, kAttribute, kReturn, kEscape };
  struct Constraint {
    SinkKind sink;
    std::string key;
    const PyNode* expression;  // nullptr: `fixed` only
    Paths fixed;
  };
  using Dependencies = std::vector<std::string>;  // "n:name", "a:attribute", "r:function"

  struct Context {
    bool in_class = false;  // directly in a class body: names bound are attributes too
    std::string function;   // the enclosing function of the kernel's own ("" at top level)
    bool returns_tracked = false;
  };

  // The kernel's own functions: defs and lambdas bound to a name.
  struct Function {
    const PyNode* node;
    bool method;  // defined in a class body (not a staticmethod): self comes first
    bool decorated;
  };

  // --- what the kernel's functions are and how they are used

  void Survey(const PyNode& node, bool class_body) {
    const std::string& type = node.type;
    if (type == "FunctionDef" || type == "AsyncFunctionDef") {
      bool static_method = false;
      const auto decorators = NodeItems(node, "decorator_list");
      for (const PyNode* decorator : decorators) {
        static_method |=
            decorator != nullptr && decorator->Is("Name") && decorator->Str("id") == "staticmethod";
      }
      (class_body ? methods_ : functions_)[std::string(node.Str("name"))].push_back(
          {&node, class_body && !static_method, !decorators.empty()});
    } else if (type == "ClassDef") {
      other_bindings_.insert(std::string(node.Str("name")));
    } else if (type == "Assign") {
      const PyNode* value = node.Child("value");
      if (value != nullptr && value->Is("Lambda")) {
        for (const PyNode* target : NodeItems(node, "targets")) {
          if (target == nullptr || !target->Is("Name")) continue;
          const std::string name(target->Str("id"));
          functions_[name].push_back({value, false, false});
          lambda_names_[value] = name;
          function_targets_.insert(target);
        }
      }
    } else if (type == "Import" || type == "ImportFrom") {
      for (const PyNode* alias : NodeItems(node, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        const std::string asname(alias->Str("asname"));
        other_bindings_.insert(!asname.empty()    ? asname
                               : type == "Import" ? name.substr(0, name.find('.'))
                                                  : name);
      }
    } else if (type == "arg") {
      other_bindings_.insert(std::string(node.Str("arg")));
    } else if (type == "ExceptHandler" || type == "MatchAs" || type == "MatchStar") {
      if (!node.Str("name").empty()) other_bindings_.insert(std::string(node.Str("name")));
    } else if (type == "MatchMapping") {
      if (!node.Str("rest").empty()) other_bindings_.insert(std::string(node.Str("rest")));
    } else if (type == "Name") {
      const std::string id(node.Str("id"));
      if (ContextOf(node) == "Load") {
        value_references_.insert(id);
      } else if (!function_targets_.count(&node)) {
        other_bindings_.insert(id);
      }
    } else if (type == "Call") {
      const PyNode* func = node.Child("func");
      ForEachChild(node, [&](const PyNode& child) {
        if (&child != func || !func->Is("Name")) Survey(child, false);
      });
      return;
    }
    const bool body_of_class = type == "ClassDef";
    ForEachChild(node, [&](const PyNode& child) {
      Survey(child, body_of_class || (class_body && IsStatement(child) && type != "FunctionDef" &&
                                      type != "AsyncFunctionDef"));
    });
  }

  // A name bound only to the kernel's own undecorated plain functions: a call of it runs
  // their code, nothing else.
  bool IsLocalFunction(const std::string& name) const {
    auto it = functions_.find(name);
    if (it == functions_.end() || other_bindings_.count(name)) return false;
    return std::none_of(it->second.begin(), it->second.end(),
                        [](const Function& f) { return f.decorated; });
  }

  // ... whose return values reach only its direct callers.
  bool ReturnsTracked(const std::string& name) const {
    return IsLocalFunction(name) && !value_references_.count(name) && !IsDunder(name);
  }

  // --- constraints

  void Add(SinkKind sink, std::string key, const PyNode* expression, Paths fixed = {}) {
    constraints_.push_back({sink, std::move(key), expression, std::move(fixed)});
  }

  void EscapeAt(const PyNode* expression, std::string how) {
    if (expression == nullptr) return;
    if (expression->Is("Starred")) expression = expression->Child("value");
    if (expression == nullptr) return;
    Add(SinkKind::kEscape, "", expression);
    escape_sites_.push_back({expression, std::move(how)});
  }

  // `target = <expression>` (or a fixed value when expression is nullptr).
  void Bind(const PyNode& target, const PyNode* expression, Paths fixed, const Context& context) {
    if (target.Is("Name")) {
      const std::string id(target.Str("id"));
      Add(SinkKind::kName, id, expression, fixed);
      if (context.in_class) Add(SinkKind::kAttribute, id, expression, fixed);
    } else if (target.Is("Attribute")) {
      Add(SinkKind::kAttribute, std::string(target.Str("attr")), expression, fixed);
    } else if (target.Is("Subscript")) {
      EscapeAt(expression, "stored with a subscript");
    } else if (target.Is("Starred")) {
      if (const PyNode* value = target.Child("value")) Bind(*value, nullptr, {kUnknown}, context);
    } else if (target.Is("Tuple") || target.Is("List")) {
      // Unpacking what the audit cannot split: each target may be anything escaped.
      for (const PyNode* elt : NodeItems(target, "elts")) {
        if (elt != nullptr) Bind(*elt, nullptr, {kUnknown}, context);
      }
      EscapeAt(expression, "unpacked");
    }
  }

  // `target = value`, splitting `a, b = x, y` pairwise.
  void Assign(const PyNode& target, const PyNode& value, const Context& context) {
    if ((target.Is("Tuple") || target.Is("List")) && (value.Is("Tuple") || value.Is("List"))) {
      const auto targets = NodeItems(target, "elts");
      const auto values = NodeItems(value, "elts");
      auto starred = [](const std::vector<const PyNode*>& nodes) {
        return std::any_of(nodes.begin(), nodes.end(),
                           [](const PyNode* n) { return n == nullptr || n->Is("Starred"); });
      };
      if (targets.size() == values.size() && !starred(targets) && !starred(values)) {
        consumed_.insert(&value);
        for (size_t i = 0; i < targets.size(); ++i) Assign(*targets[i], *values[i], context);
        return;
      }
    }
    Bind(target, &value, {}, context);
  }

  // `for target in iterable`: the elements of a literal display, else anything escaped.
  void Iterate(const PyNode& target, const PyNode& iterable, const Context& context) {
    if (IsDisplay(iterable) && std::none_of(iterable.Items("elts").begin(),
                                            iterable.Items("elts").end(), [](const PyValue& elt) {
                                              return elt.node == nullptr || elt.node->Is("Starred");
                                            })) {
      consumed_.insert(&iterable);
      for (const PyNode* elt : NodeItems(iterable, "elts")) Assign(target, *elt, context);
      return;
    }
    Bind(target, nullptr, {kUnknown}, context);
  }

  void Parameters(const PyNode* arguments) {
    if (arguments == nullptr) return;
    std::vector<const PyNode*> positional;
    for (const char* field : {"posonlyargs", "args"}) {
      for (const PyNode* arg : NodeItems(*arguments, field)) positional.push_back(arg);
    }
    const auto defaults = NodeItems(*arguments, "defaults");
    const size_t first_default = positional.size() - std::min(positional.size(), defaults.size());
    for (size_t i = 0; i < positional.size(); ++i) {
      if (positional[i] == nullptr) continue;
      const std::string name(positional[i]->Str("arg"));
      Add(SinkKind::kName, name, nullptr, {kUnknown});
      if (i >= first_default && defaults[i - first_default] != nullptr) {
        Add(SinkKind::kName, name, defaults[i - first_default]);
      }
    }
    const auto kwonly = NodeItems(*arguments, "kwonlyargs");
    const auto kw_defaults = NodeItems(*arguments, "kw_defaults");
    for (size_t i = 0; i < kwonly.size(); ++i) {
      if (kwonly[i] == nullptr) continue;
      const std::string name(kwonly[i]->Str("arg"));
      Add(SinkKind::kName, name, nullptr, {kUnknown});
      if (i < kw_defaults.size() && kw_defaults[i] != nullptr) {
        Add(SinkKind::kName, name, kw_defaults[i]);
      }
    }
    for (const char* field : {"vararg", "kwarg"}) {
      if (const PyNode* arg = arguments->Child(field)) {
        Add(SinkKind::kName, std::string(arg->Str("arg")), nullptr, {kUnknown});
      }
    }
  }

  // Binds the arguments of `call` to the parameters of `function`. Returns false for an
  // argument that lands in *args / **kwargs (a container the audit does not follow).
  bool BindArguments(const PyNode& call, const Function& function, bool through_attribute) {
    const PyNode* arguments = function.node->Child("args");
    if (arguments == nullptr) return false;
    std::vector<std::string> positional;
    for (const char* field : {"posonlyargs", "args"}) {
      for (const PyNode* arg : NodeItems(*arguments, field)) {
        if (arg != nullptr) positional.emplace_back(arg->Str("arg"));
      }
    }
    if (function.method && through_attribute && !positional.empty()) {
      positional.erase(positional.begin());
    }
    std::vector<std::string> named = positional;
    for (const PyNode* arg : NodeItems(*arguments, "kwonlyargs")) {
      if (arg != nullptr) named.emplace_back(arg->Str("arg"));
    }
    bool exact = true;
    const auto args = NodeItems(call, "args");
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == nullptr) continue;
      if (args[i]->Is("Starred")) {  // f(*xs): xs was built (and escaped) elsewhere
        for (const std::string& parameter : positional) {
          Add(SinkKind::kName, parameter, nullptr, {kUnknown});
        }
        break;
      }
      if (i < positional.size()) {
        Add(SinkKind::kName, positional[i], args[i]);
      } else {
        exact = false;
      }
    }
    for (const PyNode* keyword : NodeItems(call, "keywords")) {
      if (keyword == nullptr) continue;
      const std::string parameter(keyword->Str("arg"));
      if (std::find(named.begin(), named.end(), parameter) != named.end()) {
        Add(SinkKind::kName, parameter, keyword->Child("value"));
      } else if (!parameter.empty()) {
        exact = false;
      }
    }
    return exact;
  }

  void CollectCall(const PyNode& node) {
    const PyNode* func = node.Child("func");
    if (func == nullptr) return;
    const auto args = NodeItems(node, "args");
    const auto keywords = NodeItems(node, "keywords");
    // getattr(x, "name") / hasattr: resolved like x.name; setattr(x, "name", v): x.name = v.
    if ((IsBuiltinCall(node, "getattr") || IsBuiltinCall(node, "hasattr")) && args.size() >= 2 &&
        StringConstant(args[1])) {
      return;
    }
    if (IsBuiltinCall(node, "setattr") && args.size() >= 3 && StringConstant(args[1])) {
      Add(SinkKind::kAttribute, *StringConstant(args[1]), args[2]);
      return;
    }
    if (func->Is("Name") && IsAttributeBuiltin(func->Str("id")) && scopes_.IsBuiltin(func)) {
      return;  // with a computed name: dynamic_attribute
    }
    if (func->Is("Name") && scopes_.IsBuiltin(func) && IsInertBuiltin(func->Str("id"))) {
      return;
    }
    const std::string callee = ChainText(*func);
    bool followed = false;
    if (func->Is("Name") || func->Is("Attribute")) {
      const std::string name(func->Is("Name") ? func->Str("id") : func->Str("attr"));
      const auto& table = func->Is("Name") ? functions_ : methods_;
      if (auto it = table.find(name); it != table.end()) {
        bool exact = true;
        for (const Function& function : it->second) {
          exact &= BindArguments(node, function, func->Is("Attribute"));
        }
        followed = exact && func->Is("Name") && IsLocalFunction(name);
      }
    }
    if (followed) return;
    const std::string how = absl::StrCat("passed to ", callee.empty() ? "a call" : callee + "(...)",
                                         ", which the audit does not follow");
    for (const PyNode* arg : args) EscapeAt(arg, how);
    for (const PyNode* keyword : keywords) {
      if (keyword != nullptr) EscapeAt(keyword->Child("value"), how);
    }
  }

  void Collect(const PyNode& node, const Context& context) {
    const std::string& type = node.type;
    Context inner = context;
    inner.in_class = false;
    if (type == "Import" || type == "ImportFrom") {
      std::string module(node.Str("module"));
      for (const PyNode* alias : NodeItems(node, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        const std::string asname(alias->Str("asname"));
        std::string bound, path;
        if (type == "Import") {
          bound = asname.empty() ? name.substr(0, name.find('.')) : asname;
          path = asname.empty() ? bound : name;
          module_objects_.insert(path);
        } else if (name == "*") {
          star_modules_.push_back(module);
          continue;
        } else {
          bound = asname.empty() ? name : asname;
          path = absl::StrCat(module, ".", name);
        }
        Add(SinkKind::kName, bound, nullptr, {path});
        if (context.in_class) Add(SinkKind::kAttribute, bound, nullptr, {path});
      }
      return;
    }
    if (type == "Assign") {
      if (const PyNode* value = node.Child("value")) {
        for (const PyNode* target : NodeItems(node, "targets")) {
          if (target != nullptr) Assign(*target, *value, context);
        }
      }
    } else if (type == "AnnAssign") {
      const PyNode* target = node.Child("target");
      const PyNode* value = node.Child("value");
      if (target != nullptr && value != nullptr) Assign(*target, *value, context);
    } else if (type == "AugAssign") {
      if (const PyNode* target = node.Child("target")) Bind(*target, nullptr, {kUnknown}, context);
      EscapeAt(node.Child("value"), "used as an operand");
    } else if (type == "NamedExpr") {
      const PyNode* target = node.Child("target");
      const PyNode* value = node.Child("value");
      if (target != nullptr && value != nullptr) Assign(*target, *value, inner);
    } else if (type == "For" || type == "AsyncFor" || type == "comprehension") {
      const PyNode* target = node.Child("target");
      const PyNode* iterable = node.Child("iter");
      if (target != nullptr && iterable != nullptr) {
        Iterate(*target, *iterable, type == "comprehension" ? inner : context);
      }
    } else if (type == "withitem") {
      if (const PyNode* vars = node.Child("optional_vars")) {
        Bind(*vars, nullptr, {kUnknown}, context);
      }
    } else if (type == "ExceptHandler" || type == "MatchAs" || type == "MatchStar") {
      const absl::string_view name = node.Str("name");
      if (!name.empty()) Add(SinkKind::kName, std::string(name), nullptr, {kUnknown});
    } else if (type == "MatchMapping") {
      const absl::string_view rest = node.Str("rest");
      if (!rest.empty()) Add(SinkKind::kName, std::string(rest), nullptr, {kUnknown});
    } else if (type == "Match") {
      EscapeAt(node.Child("subject"), "matched against patterns");
    } else if (type == "Return") {
      if (context.returns_tracked) {
        if (const PyNode* value = node.Child("value")) {
          Add(SinkKind::kReturn, context.function, value);
        }
      } else {
        EscapeAt(node.Child("value"),
                 context.function.empty()
                     ? "returned"
                     : absl::StrCat("returned from ", context.function,
                                    "(), which is called where the audit does not follow"));
      }
    } else if (type == "Yield" || type == "YieldFrom") {
      EscapeAt(node.Child("value"), "yielded");
    } else if (type == "Await") {
      EscapeAt(node.Child("value"), "awaited");
    } else if (type == "Raise") {
      EscapeAt(node.Child("exc"), "raised");
      EscapeAt(node.Child("cause"), "raised");
    } else if (type == "FunctionDef" || type == "AsyncFunctionDef" || type == "Lambda") {
      Context body;
      if (type == "Lambda") {
        auto it = lambda_names_.find(&node);
        body.function = it != lambda_names_.end() ? it->second : "lambda";
        body.returns_tracked = it != lambda_names_.end() && ReturnsTracked(it->second);
      } else {
        const std::string name(node.Str("name"));
        Add(SinkKind::kName, name, nullptr, {kUnknown});
        if (context.in_class) Add(SinkKind::kAttribute, name, nullptr, {kUnknown});
        body.function = name;
        body.returns_tracked = !context.in_class && ReturnsTracked(name);
      }
      Parameters(node.Child("args"));
      for (const PyNode* decorator : NodeItems(node, "decorator_list")) {
        if (decorator != nullptr) Collect(*decorator, inner);
      }
      if (const PyNode* arguments = node.Child("args")) Collect(*arguments, inner);
      if (const PyNode* returns = node.Child("returns")) Collect(*returns, inner);
      if (type == "Lambda") {
        if (const PyNode* value = node.Child("body")) {
          if (body.returns_tracked) {
            Add(SinkKind::kReturn, body.function, value);
          } else {
            EscapeAt(value, "returned from a lambda the audit does not see called");
          }
          Collect(*value, body);
        }
      } else {
        for (const PyNode* statement : NodeItems(node, "body")) {
          if (statement != nullptr) Collect(*statement, body);
        }
      }
      return;
    } else if (type == "ClassDef") {
      const std::string name(node.Str("name"));
      Add(SinkKind::kName, name, nullptr, {kUnknown});
      if (context.in_class) Add(SinkKind::kAttribute, name, nullptr, {kUnknown});
      for (const PyNode* base : NodeItems(node, "bases")) EscapeAt(base, "used as a class base");
      for (const PyNode* keyword : NodeItems(node, "keywords")) {
        if (keyword != nullptr) EscapeAt(keyword->Child("value"), "passed to a metaclass");
      }
      for (const char* field : {"bases", "keywords", "decorator_list"}) {
        for (const PyNode* child : NodeItems(node, field)) {
          if (child != nullptr) Collect(*child, inner);
        }
      }
      Context body = inner;
      body.in_class = true;
      for (const PyNode* statement : NodeItems(node, "body")) {
        if (statement != nullptr) Collect(*statement, body);
      }
      return;
    } else if (type == "Call") {
      CollectCall(node);
    } else if ((IsDisplay(node) && ContextOf(node) == "Load" && !consumed_.count(&node)) ||
               type == "Dict") {
      for (const char* field : {"elts", "keys", "values"}) {
        for (const PyNode* elt : NodeItems(node, field)) EscapeAt(elt, "stored in a container");
      }
    } else if (type == "ListComp" || type == "SetComp" || type == "GeneratorExp") {
      EscapeAt(node.Child("elt"), "stored in a container");
    } else if (type == "DictComp") {
      EscapeAt(node.Child("key"), "stored in a container");
      EscapeAt(node.Child("value"), "stored in a container");
    }
    // Class attributes are the class body's own statements (also inside if / for / with).
    ForEachChild(node, [&](const PyNode& child) {
      Context next = context;
      next.in_class = context.in_class && IsStatement(child);
      Collect(child, next);
    });
  }

  static bool IsStatement(const PyNode& node) {
    static const std::set<std::string, std::less<>> kStatements = {"If",
                                                                   "For",
                                                                   "AsyncFor",
                                                                   "While",
                                                                   "With",
                                                                   "AsyncWith",
                                                                   "Try",
                                                                   "TryStar",
                                                                   "Match",
                                                                   "match_case",
                                                                   "ExceptHandler",
                                                                   "withitem",
                                                                   "Assign",
                                                                   "AnnAssign",
                                                                   "AugAssign",
                                                                   "Import",
                                                                   "ImportFrom",
                                                                   "FunctionDef",
                                                                   "AsyncFunctionDef",
                                                                   "ClassDef"};
    return kStatements.count(node.type) > 0;
  }

  // `getattr(x, "name"[, default])` / `hasattr(x, "name")` with the builtin: the node x.
  const PyNode* GetattrTarget(const PyNode& call) const {
    if (!IsBuiltinCall(call, "getattr") && !IsBuiltinCall(call, "hasattr")) return nullptr;
    const auto args = NodeItems(call, "args");
    if (args.size() < 2 || args[0] == nullptr || !StringConstant(args[1])) return nullptr;
    return args[0];
  }

  // --- evaluation

  const Paths* Sink(SinkKind kind, const std::string& key) const {
    const auto& map = kind == SinkKind::kName        ? names_
                      : kind == SinkKind::kAttribute ? attributes_
                                                     : returns_;
    auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
  }

  void AddAttribute(const Paths& base, const std::string& attribute, Dependencies* deps,
                    Paths* out) const {
    work_ += base.size();
    if (work_ > kMaxWork) {  // more than the audit follows, whatever the file's shape
      too_complex_ = true;
      out->insert(kUnknown);
      return;
    }
    for (const std::string& path : base) out->insert(AppendToValue(path, attribute));
    if (deps != nullptr) deps->push_back("a:" + attribute);
    if (const Paths* held = Sink(SinkKind::kAttribute, attribute)) {
      out->insert(held->begin(), held->end());
    }
  }

  Paths Eval(const PyNode& node, Dependencies* deps) const {
    Paths out;
    const std::string& type = node.type;
    if (type == "Name") {
      const std::string id(node.Str("id"));
      if (deps != nullptr) deps->push_back("n:" + id);
      if (const Paths* held = Sink(SinkKind::kName, id)) out = *held;
      if (!scopes_.BoundAnywhere(id)) {
        // A name nothing in the file binds: a builtin, one a star import brought, or a module
        // something the audit did not see imported (ctypes.CDLL(None) after a hidden import).
        out.insert(id);
        for (const std::string& module : star_modules_) out.insert(absl::StrCat(module, ".", id));
      }
      return out;
    }
    if (type == "Attribute") {
      if (const PyNode* value = node.Child("value")) {
        // After the fixed point, through the memo: the audit asks for every link of a chain,
        // and evaluating each afresh cost a chain of n links n^2 steps (red team round 7: a
        // chain of 2,400 on a name of 4,000 paths ran the host hours past its deadline).
        AddAttribute(deps == nullptr ? Of(*value) : Eval(*value, deps),
                     std::string(node.Str("attr")), deps, &out);
      }
      return out;
    }
    if (type == "Subscript") {
      out.insert(kUnknown);
      const PyNode* value = node.Child("value");
      const auto key = StringConstant(node.Child("slice"));
      if (value != nullptr && key && IsDottedIdentifier(*key)) {
        for (const std::string& path : Eval(*value, deps)) {
          if (IsUnknownRooted(path)) continue;
          // A module's mapping indexed by name (sys.modules["os"], m.__dict__["x"]).
          out.insert(AppendToValue(path, *key));
          out.insert(*key);
        }
      }
      return out;
    }
    if (type == "Call") {
      if (const PyNode* target = GetattrTarget(node)) {
        const auto args = NodeItems(node, "args");
        const std::string attribute = *StringConstant(args[1]);
        if (IsIdentifier(attribute)) {
          AddAttribute(Eval(*target, deps), attribute, deps, &out);
        } else {
          out.insert(kUnknown);
        }
        if (args.size() > 2 && args[2] != nullptr) {
          for (const std::string& path : Eval(*args[2], deps)) out.insert(path);
        }
        return out;
      }
      out.insert(kUnknown);
      const PyNode* func = node.Child("func");
      if (func != nullptr && func->Is("Name") && ReturnsTracked(std::string(func->Str("id")))) {
        const std::string name(func->Str("id"));
        if (deps != nullptr) deps->push_back("r:" + name);
        if (const Paths* held = Sink(SinkKind::kReturn, name)) {
          out.insert(held->begin(), held->end());
        }
      }
      return out;
    }
    if (type == "NamedExpr" || type == "Starred") {
      const PyNode* value = node.Child("value");
      return value != nullptr ? Eval(*value, deps) : out;
    }
    if (type == "IfExp" || type == "BoolOp") {
      const PyNode* test = node.Child("test");
      ForEachChild(node, [&](const PyNode& child) {
        if (&child == test) return;
        for (const std::string& path : Eval(child, deps)) out.insert(path);
      });
      return out;
    }
    // Values that are never modules: literals, strings, comparisons, functions, containers
    // (whose elements were escape sites when they were built), operators.
    static const std::set<std::string, std::less<>> kNotModules = {
        "Constant", "JoinedStr", "FormattedValue", "Compare", "Lambda",   "Tuple",        "List",
        "Set",      "Dict",      "ListComp",       "SetComp", "DictComp", "GeneratorExp", "Slice"};
    if (kNotModules.count(type)) return out;
    out.insert(kUnknown);  // BinOp, UnaryOp, Await, Yield, ...: the audit cannot follow it
    return out;
  }

  void Solve() {
    absl::flat_hash_map<std::string, std::vector<size_t>> readers;
    std::deque<size_t> work;
    std::vector<bool> queued(constraints_.size(), true);
    std::vector<bool> indexed(constraints_.size(), false);
    for (size_t i = 0; i < constraints_.size(); ++i) work.push_back(i);
    size_t steps = 0;
    while (!work.empty()) {
      if (++steps > kMaxSteps) {
        too_complex_ = true;
        return;
      }
      const size_t index = work.front();
      work.pop_front();
      queued[index] = false;
      const Constraint& constraint = constraints_[index];
      Paths value = constraint.fixed;
      if (constraint.expression != nullptr) {
        Dependencies deps;
        for (const std::string& path : Eval(*constraint.expression, &deps)) value.insert(path);
        if (!indexed[index]) {
          indexed[index] = true;
          for (const std::string& dep : deps) readers[dep].push_back(index);
        }
      }
      Paths* sink = nullptr;
      std::string changed;
      switch (constraint.sink) {
        case SinkKind::kName:
          sink = &names_[constraint.key];
          changed = "n:" + constraint.key;
          break;
        case SinkKind::kAttribute:
          sink = &attributes_[constraint.key];
          changed = "a:" + constraint.key;
          break;
        case SinkKind::kReturn:
          sink = &returns_[constraint.key];
          changed = "r:" + constraint.key;
          break;
        case SinkKind::kEscape:
          sink = &escaped_;
          break;
      }
      bool grew = false;
      for (const std::string& path : value) {
        // The escaped set holds what unknown values may be: module objects are escape sites
        // instead (reported), unknown objects add nothing.
        if (constraint.sink == SinkKind::kEscape &&
            (IsUnknownRooted(path) || module_objects_.count(path))) {
          continue;
        }
        grew |= sink->insert(path).second;
      }
      if (sink->size() > kMaxPathsPerSet) {
        too_complex_ = true;
        return;
      }
      if (!grew || changed.empty()) continue;
      auto it = readers.find(changed);
      if (it == readers.end()) continue;
      for (size_t reader : it->second) {
        if (!queued[reader]) {
          queued[reader] = true;
          work.push_back(reader);
        }
      }
    }
  }

  const NameScopes& scopes_;
  std::map<std::string, std::vector<Function>> functions_, methods_;
  std::map<const PyNode*, std::string> lambda_names_;
  std::set<const PyNode*> function_targets_;
  std::set<std::string> other_bindings_, value_references_;
  std::vector<Constraint> constraints_;
  std::set<const PyNode*> consumed_;  // displays split by an assignment or a for loop
  absl::flat_hash_map<std::string, Paths> names_, attributes_, returns_;
  Paths escaped_;
  std::set<std::string> module_objects_;
  std::vector<EscapeSite> escape_sites_;
  std::vector<std::string> star_modules_;
  mutable bool too_complex_ = false;
  mutable size_t work_ = 0;  // paths extended by an attribute, in all (kMaxWork)
  // Node-based: Of hands out references that later insertions must not move.
  mutable absl::node_hash_map<const PyNode*, Paths> memo_;
};

ModuleValues::ModuleValues(const PyNode& module, const NameScopes& scopes)
    : analysis_(std::make_unique<Analysis>(module, scopes)) {}
ModuleValues::~ModuleValues() = default;
const Paths& ModuleValues::Of(const PyNode& node) { return analysis_->Of(node); }
const Paths& ModuleValues::escaped() const { return analysis_->escaped(); }
std::vector<std::string> ModuleValues::RelevantEscapes() const {
  return analysis_->RelevantEscapes();
}
const std::set<std::string>& ModuleValues::module_objects() const {
  return analysis_->module_objects();
}
const std::vector<EscapeSite>& ModuleValues::escape_sites() const {
  return analysis_->escape_sites();
}
const std::vector<std::string>& ModuleValues::star_modules() const {
  return analysis_->star_modules();
}
bool ModuleValues::too_complex() const { return analysis_->too_complex(); }

}  // namespace mkb::audit_detail
