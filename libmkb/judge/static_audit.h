// The static audit of a kernel.py (SPEC §2): forbidden imports, calls and introspection, found
// in the source before anything runs. It reads tokens and resolves import aliases
// ("import torch as t; t.compile(...)"); it is the first line of defence, the runtime audit in
// the worker the second.
#ifndef LIBMKB_JUDGE_STATIC_AUDIT_H_
#define LIBMKB_JUDGE_STATIC_AUDIT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "mkb/v1/common.pb.h"
#include "mkb/v1/judge.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

struct StaticAuditOptions {
  v1::Dsl dsl = v1::DSL_UNSPECIFIED;
  bool require_dsl = true;  // the source must import the variant's DSL
  std::string filename = "kernel.py";
};

// Findings with their default severities: VIOLATION for what SPEC §2 forbids, WARNING for what
// only the runtime audit can judge (library compute ops, side streams), SKIPPED for checks
// turned off. At most 64 findings; one per code and line.
std::vector<v1::AuditFinding> StaticAudit(absl::string_view source,
                                          const StaticAuditOptions& options);

// The rule that forbids importing `module` ("ctypes", "torch.utils.cpp_extension"), as
// (finding code, reason), or nullopt when the import is allowed. Used by the runtime audit too.
std::optional<std::pair<std::string, std::string>> AuditModule(absl::string_view module);

// Applies a policy to findings (permissive, allow / deny lists) in place.
void ApplyAuditPolicy(const v1::AuditPolicy& policy, std::vector<v1::AuditFinding>* findings);

// The finding codes StaticAudit can emit, with a one-line description each (for docs and --help).
std::vector<std::pair<std::string, std::string>> StaticAuditCodes();

}  // namespace mkb

#endif  // LIBMKB_JUDGE_STATIC_AUDIT_H_
