#include "libmkb/judge/static_audit.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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

class Auditor {
 public:
  Auditor(absl::string_view source, const PyNode& module, const StaticAuditOptions& options)
      : source_(source), module_(module), options_(options) {}

  std::vector<v1::AuditFinding> Run() {
    CheckEncoding();
    Scopes scopes(module_);
    scopes_ = &scopes;
    Values values(module_, scopes);
    values_ = &values;
    if (values.too_complex()) {
      Add(audit_detail::kTooComplex, v1::SEVERITY_VIOLATION, 0,
          "the audit cannot follow the module aliasing in this file (too many paths)", "");
    }
    relevant_escapes_ = values.RelevantEscapes();
    CheckEscapes();
    Check(module_);
    CheckDsl();
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
  void CheckPath(const std::string& path, int line, const std::string& what) {
    const Parts parts = SplitPath(path);
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

  // A module object where the audit cannot follow it (the escape rule, class Values).
  void CheckEscapes() {
    for (const audit_detail::EscapeSite& site : values_->escape_sites()) {
      for (const std::string& path : values_->Of(*site.expression)) {
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

  // __array_interface__ and its kin, wherever the name appears: an object carrying one hands
  // numpy, torch or a DSL a raw address to wrap, with no ctypes and no audit event on the way.
  void CheckRawMemoryName(absl::string_view name, int line, const std::string& what) {
    if (!audit_detail::IsRawMemoryProtocol(name)) return;
    Add(audit_detail::kCall, v1::SEVERITY_VIOLATION, line,
        absl::StrCat(name,
                     ": an array interface describes memory by a raw address (raw memory access "
                     "is forbidden)"),
        what.empty() ? std::string(name) : what);
  }

  void CheckModule(const std::string& module, int line, const std::string& snippet) {
    imported_.insert(module);
    const Parts parts = SplitPath(module);
    const audit_detail::Rule* rule = audit_detail::BestRule(parts, 0, parts.size(), false);
    if (rule != nullptr && rule->code != nullptr) {
      Add(rule->code, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("import of ", module, ": ", rule->reason), snippet);
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
    }
  }

  void CheckName(const PyNode& node, bool is_call_target) {
    const std::string id(node.Str("id"));
    const int line = node.line;
    CheckRawMemoryName(id, line, id);
    if (ContextOf(node) != "Load") return;
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
    if (type == "Import" || type == "ImportFrom") {
      CheckImport(node);
    } else if (type == "Attribute") {
      CheckAttribute(node);
    } else if (type == "Subscript") {
      CheckSubscript(node);
    } else if (type == "Call") {
      CheckCall(node);
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
    } else if (type == "keyword" || type == "arg") {
      CheckRawMemoryName(node.Str("arg"), node.line, absl::StrCat(node.Str("arg"), "=..."));
    } else if (type == "Constant") {
      if (const auto text = StringConstant(&node)) CheckRawMemoryName(*text, node.line, "");
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
  std::set<std::string> imported_;
  std::set<std::string> seen_;
  std::vector<v1::AuditFinding> findings_;
};

}  // namespace

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
