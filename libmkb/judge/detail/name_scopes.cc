#include "libmkb/judge/detail/name_scopes.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "libmkb/judge/detail/audit_tree.h"

namespace mkb::audit_detail {

class NameScopes::Analysis {
 public:
  explicit Analysis(const PyNode& module) {
    scopes_.push_back({Scope::kModule, -1});
    const std::vector<const PyNode*> body = NodeItems(module, "body");
    for (size_t i = 0; i < body.size(); ++i) {
      statement_ = static_cast<int>(i);
      if (body[i] == nullptr) continue;
      for (const std::string& name : TopLevelBindings(*body[i])) {
        first_binding_.emplace(name, statement_);
      }
      Visit(*body[i], 0);
    }
  }

  // Whether the Name node (a load) refers to the builtin of that name.
  bool IsBuiltin(const PyNode* name_node) const {
    auto it = loads_.find(name_node);
    if (it == loads_.end()) return true;
    const std::string id(name_node->Str("id"));
    int scope = it->second.first;
    const int statement = it->second.second;
    const Scope* s = &scopes_[scope];
    const auto is_function = [](const Scope& f) {
      return f.kind == Scope::kFunction || f.kind == Scope::kComprehension;
    };
    if (is_function(*s)) {
      if (s->globals.count(id)) return !ModuleShadows(id, statement);
      if (s->bound.count(id) || s->nonlocals.count(id)) return false;
    }
    for (scope = s->parent; scope >= 0; scope = scopes_[scope].parent) {
      const Scope& outer = scopes_[scope];
      if (is_function(outer) && outer.bound.count(id) && !outer.globals.count(id)) return false;
      if (outer.kind == Scope::kModule) break;
    }
    return !ModuleShadows(id, statement);
  }

  // Every name bound anywhere (any scope), for star-import resolution.
  bool BoundAnywhere(const std::string& name) const { return all_bound_.count(name) > 0; }

 private:
  struct Scope {
    enum Kind { kModule, kFunction, kClass, kComprehension } kind;
    int parent;
    std::set<std::string> bound, globals, nonlocals;
  };

  bool ModuleShadows(const std::string& id, int statement) const {
    if (deleted_.count(id)) return false;
    auto it = first_binding_.find(id);
    return it != first_binding_.end() && it->second < statement;
  }

  // Names a module-level statement binds whenever it runs to completion.
  static std::vector<std::string> TopLevelBindings(const PyNode& statement) {
    std::vector<std::string> names;
    if (statement.Is("FunctionDef") || statement.Is("AsyncFunctionDef") ||
        statement.Is("ClassDef")) {
      names.emplace_back(statement.Str("name"));
    } else if (statement.Is("Import") || statement.Is("ImportFrom")) {
      for (const PyNode* alias : NodeItems(statement, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        if (name == "*") continue;
        const absl::string_view asname = alias->Str("asname");
        names.emplace_back(!asname.empty()          ? std::string(asname)
                           : statement.Is("Import") ? name.substr(0, name.find('.'))
                                                    : name);
      }
    } else if (statement.Is("Assign") || statement.Is("AnnAssign")) {
      if (statement.Is("AnnAssign") && statement.Child("value") == nullptr) return names;
      std::vector<const PyNode*> targets =
          statement.Is("Assign") ? NodeItems(statement, "targets")
                                 : std::vector<const PyNode*>{statement.Child("target")};
      for (const PyNode* target : targets) {
        if (target != nullptr && target->Is("Name")) names.emplace_back(target->Str("id"));
      }
    }
    return names;
  }

  int NewScope(Scope::Kind kind, int parent) {
    scopes_.push_back({kind, parent});
    return static_cast<int>(scopes_.size()) - 1;
  }

  void Bind(int scope, const std::string& name) {
    scopes_[scope].bound.insert(name);
    all_bound_.insert(name);
  }

  void BindTargets(const PyNode& target, int scope) {
    if (target.Is("Name")) {
      Bind(scope, std::string(target.Str("id")));
      return;
    }
    if (target.Is("Starred") || target.Is("Tuple") || target.Is("List")) {
      ForEachChild(target, [&](const PyNode& child) { BindTargets(child, scope); });
    }
  }

  void VisitArguments(const PyNode* arguments, int outer, int inner) {
    if (arguments == nullptr) return;
    for (const char* field : {"posonlyargs", "args", "kwonlyargs"}) {
      for (const PyNode* arg : NodeItems(*arguments, field)) {
        if (arg == nullptr) continue;
        Bind(inner, std::string(arg->Str("arg")));
        if (const PyNode* annotation = arg->Child("annotation")) Visit(*annotation, outer);
      }
    }
    for (const char* field : {"vararg", "kwarg"}) {
      if (const PyNode* arg = arguments->Child(field)) {
        Bind(inner, std::string(arg->Str("arg")));
        if (const PyNode* annotation = arg->Child("annotation")) Visit(*annotation, outer);
      }
    }
    for (const char* field : {"defaults", "kw_defaults"}) {
      for (const PyNode* value : NodeItems(*arguments, field)) {
        if (value != nullptr) Visit(*value, outer);
      }
    }
  }

  // Where a walrus binds: the nearest enclosing function or the module (not a comprehension
  // or class).
  int FunctionScopeOf(int scope) const {
    while (scopes_[scope].kind == Scope::kClass || scopes_[scope].kind == Scope::kComprehension) {
      scope = scopes_[scope].parent;
    }
    return scope;
  }

  void Visit(const PyNode& node, int scope) {
    const std::string& type = node.type;
    if (type == "FunctionDef" || type == "AsyncFunctionDef" || type == "Lambda") {
      if (type != "Lambda") Bind(scope, std::string(node.Str("name")));
      for (const PyNode* decorator : NodeItems(node, "decorator_list")) {
        if (decorator != nullptr) Visit(*decorator, scope);
      }
      if (const PyNode* returns = node.Child("returns")) Visit(*returns, scope);
      const int inner = NewScope(Scope::kFunction, scope);
      VisitArguments(node.Child("args"), scope, inner);
      if (type == "Lambda") {
        if (const PyNode* body = node.Child("body")) Visit(*body, inner);
      } else {
        for (const PyNode* statement : NodeItems(node, "body")) {
          if (statement != nullptr) Visit(*statement, inner);
        }
      }
      return;
    }
    if (type == "ClassDef") {
      Bind(scope, std::string(node.Str("name")));
      for (const char* field : {"bases", "keywords", "decorator_list"}) {
        for (const PyNode* child : NodeItems(node, field)) {
          if (child != nullptr) Visit(*child, scope);
        }
      }
      const int inner = NewScope(Scope::kClass, scope);
      for (const PyNode* statement : NodeItems(node, "body")) {
        if (statement != nullptr) Visit(*statement, inner);
      }
      return;
    }
    if (type == "ListComp" || type == "SetComp" || type == "DictComp" || type == "GeneratorExp") {
      // The first iterable is evaluated in the enclosing scope, the rest in the comprehension's.
      const int inner = NewScope(Scope::kComprehension, scope);
      const std::vector<const PyNode*> generators = NodeItems(node, "generators");
      const PyNode* first_iterable = nullptr;
      for (size_t i = 0; i < generators.size(); ++i) {
        if (generators[i] == nullptr) continue;
        if (i == 0) first_iterable = generators[i]->Child("iter");
        if (const PyNode* target = generators[i]->Child("target")) BindTargets(*target, inner);
      }
      if (first_iterable != nullptr) Visit(*first_iterable, scope);
      for (const char* field : {"elt", "key", "value"}) {
        if (const PyNode* child = node.Child(field)) Visit(*child, inner);
      }
      for (const PyNode* generator : generators) {
        if (generator == nullptr) continue;
        ForEachChild(*generator, [&](const PyNode& child) {
          if (&child != first_iterable) Visit(child, inner);
        });
      }
      return;
    }
    if (type == "Name") {
      const absl::string_view ctx = ContextOf(node);
      const std::string id(node.Str("id"));
      if (ctx == "Load") {
        loads_[&node] = {scope, statement_};
      } else {
        Bind(scope, id);
        if (ctx == "Del" &&
            (scopes_[scope].kind == Scope::kModule || scopes_[scope].globals.count(id))) {
          deleted_.insert(id);
        }
      }
      return;
    }
    if (type == "NamedExpr") {
      if (const PyNode* target = node.Child("target")) {
        Bind(FunctionScopeOf(scope), std::string(target->Str("id")));
      }
      if (const PyNode* value = node.Child("value")) Visit(*value, scope);
      return;
    }
    if (type == "Global" || type == "Nonlocal") {
      for (const PyValue& name : node.Items("names")) {
        (type == "Global" ? scopes_[scope].globals : scopes_[scope].nonlocals).insert(name.text);
      }
      return;
    }
    if (type == "Import" || type == "ImportFrom") {
      for (const PyNode* alias : NodeItems(node, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        const absl::string_view asname = alias->Str("asname");
        if (name == "*") continue;
        Bind(scope, !asname.empty()    ? std::string(asname)
                    : type == "Import" ? name.substr(0, name.find('.'))
                                       : name);
      }
      return;
    }
    if (type == "ExceptHandler") {
      const absl::string_view name = node.Str("name");
      if (!name.empty()) Bind(scope, std::string(name));
    }
    if (type == "MatchAs" || type == "MatchStar") {
      const absl::string_view name = node.Str("name");
      if (!name.empty()) Bind(scope, std::string(name));
    }
    if (type == "MatchMapping") {
      const absl::string_view rest = node.Str("rest");
      if (!rest.empty()) Bind(scope, std::string(rest));
    }
    ForEachChild(node, [&](const PyNode& child) { Visit(child, scope); });
  }

  std::vector<Scope> scopes_;
  int statement_ = 0;
  std::map<std::string, int> first_binding_;  // name -> first unconditional top-level binder
  std::set<std::string> deleted_;
  absl::flat_hash_set<std::string> all_bound_;
  absl::flat_hash_map<const PyNode*, std::pair<int, int>> loads_;  // -> (scope, statement)
};

NameScopes::NameScopes(const PyNode& module) : analysis_(std::make_unique<Analysis>(module)) {}
NameScopes::~NameScopes() = default;
bool NameScopes::IsBuiltin(const PyNode* name_node) const {
  return analysis_->IsBuiltin(name_node);
}
bool NameScopes::BoundAnywhere(const std::string& name) const {
  return analysis_->BoundAnywhere(name);
}

}  // namespace mkb::audit_detail
