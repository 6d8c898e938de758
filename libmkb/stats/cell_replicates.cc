#include "libmkb/stats/cell_replicates.h"

#include <cmath>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "libmkb/model/names.h"
#include "libmkb/model/validation.h"

namespace mkb::stats {
namespace {

constexpr Role kRoles[] = {Role::kSource, Role::kBase, Role::kSkill, Role::kControl};

absl::Status FieldError(const std::string& path, absl::string_view problem) {
  absl::Status status = absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
  status.SetPayload(kFieldPathPayload, absl::Cord(path));
  return status;
}

std::string Join(absl::string_view prefix, absl::string_view field) {
  return prefix.empty() ? std::string(field) : absl::StrCat(prefix, ".", field);
}

// The field path attached to `status`, prefixed; the message keeps its text after the path.
absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  const std::string path = FieldPathOf(status).value_or("");
  std::string message(status.message());
  if (!path.empty() && message.rfind(path + ": ", 0) == 0)
    message = message.substr(path.size() + 2);
  return FieldError(Join(prefix, path), message);
}

absl::Status ValidateArm(const v1::ArmResult& arm, const v1::CellReplicate& cell, Role role,
                         const std::string& path) {
  if (arm.has_speedup() && arm.speedup() < 0) {
    return FieldError(
        Join(path, "speedup"),
        absl::StrCat("must be >= 0 (NaN or absent: no speedup), got ", arm.speedup()));
  }
  if (arm.skipped() && role != Role::kSkill) {
    return FieldError(Join(path, "skipped"),
                      "only the skill arm can be skipped (the others are solos)");
  }
  if (arm.arm().empty() && StandardArmName(cell.direction(), role).empty()) {
    return FieldError(Join(path, "arm"), absl::StrCat("required: direction '", cell.direction(),
                                                      "' has no standard arms"));
  }
  if (arm.arm() == kAllKey) return FieldError(Join(path, "arm"), "'*' is reserved");
  for (const auto& [field, usage] :
       {std::pair<const char*, const v1::Usage*>{"usage", &arm.usage()},
        {"interrupted_usage", &arm.interrupted_usage()}}) {
    for (const auto& [name, value] :
         {std::pair<const char*, int64_t>{"input_tokens", usage->input_tokens()},
          {"cached_input_tokens", usage->cached_input_tokens()},
          {"output_tokens", usage->output_tokens()}}) {
      if (value < 0) return FieldError(Join(path, absl::StrCat(field, ".", name)), "must be >= 0");
    }
    for (const auto& [name, value] : {std::pair<const char*, double>{"cost_usd", usage->cost_usd()},
                                      {"agent_seconds", usage->agent_seconds()}}) {
      if (!std::isfinite(value) || value < 0) {
        return FieldError(Join(path, absl::StrCat(field, ".", name)),
                          "must be a finite number >= 0");
      }
    }
  }
  if (arm.interrupted_tries() < 0)
    return FieldError(Join(path, "interrupted_tries"), "must be >= 0");
  for (const auto& [name, samples] :
       {std::pair<const char*, const google::protobuf::RepeatedField<double>*>{
            "kernel_samples_ms", &arm.kernel_samples_ms()},
        {"eager_samples_ms", &arm.eager_samples_ms()}}) {
    for (int i = 0; i < samples->size(); ++i) {
      if (samples->Get(i) < 0) {
        return FieldError(Join(path, absl::StrCat(name, "[", i, "]")),
                          absl::StrCat("must be >= 0 (NaN: a lost sample), got ", samples->Get(i)));
      }
    }
  }
  // The state, where given, must agree with resolved and skipped.
  if (arm.state() == v1::ATTEMPT_STATE_UNSPECIFIED) return absl::OkStatus();
  if (IsResolvedState(arm.state())) {
    if (!arm.resolved() && !arm.skipped()) {
      return FieldError(Join(path, "state"),
                        absl::StrCat("'", AttemptStateName(arm.state()),
                                     "' is a resolved state, but resolved is false"));
    }
    if ((arm.state() == v1::ATTEMPT_SKIPPED) != arm.skipped()) {
      return FieldError(Join(path, "state"), absl::StrCat("'", AttemptStateName(arm.state()),
                                                          "' disagrees with skipped ",
                                                          arm.skipped() ? "true" : "false"));
    }
  } else if (arm.resolved() || arm.skipped()) {
    return FieldError(Join(path, "state"),
                      absl::StrCat("'", AttemptStateName(arm.state()),
                                   "' is not a resolved state, but resolved or skipped is true"));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsResolvedState(v1::AttemptState state) {
  return state == v1::ATTEMPT_FINISHED || state == v1::ATTEMPT_SKIPPED;
}

namespace {

bool SameSpeedup(const v1::ArmResult& a, const v1::ArmResult& b) {
  if (a.has_speedup() != b.has_speedup()) return false;
  if (!a.has_speedup()) return true;
  return a.speedup() == b.speedup() || (std::isnan(a.speedup()) && std::isnan(b.speedup()));
}

}  // namespace

bool HasUsage(const v1::ArmResult& arm) {
  return (arm.has_usage() && arm.usage().ByteSizeLong() > 0) ||
         (arm.has_interrupted_usage() && arm.interrupted_usage().ByteSizeLong() > 0) ||
         arm.interrupted_tries() > 0;
}

bool HasTimingSamples(const v1::ArmResult& arm) {
  return arm.kernel_samples_ms_size() > 0 && arm.eager_samples_ms_size() > 0;
}

RunStatus RunStatusOf(const v1::ArmResult& result, const v1::ArmResult* usage) {
  if (result.skipped() || result.state() == v1::ATTEMPT_SKIPPED) return RunStatus::kSkipped;
  const bool finished = result.state() == v1::ATTEMPT_FINISHED ||
                        (result.state() == v1::ATTEMPT_STATE_UNSPECIFIED && result.resolved());
  if (finished) return RunStatus::kRan;
  return usage != nullptr && HasUsage(*usage) ? RunStatus::kRan : RunStatus::kNotRun;
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kSource:
      return "source";
    case Role::kBase:
      return "base";
    case Role::kSkill:
      return "skill";
    case Role::kControl:
      return "control";
  }
  return "";
}

std::string StandardArmName(absl::string_view direction, Role role) {
  std::string source;
  std::string target;
  if (direction == "cutedsl2tirx") {
    source = "cutedsl";
    target = "tirx";
  } else if (direction == "tirx2cutedsl") {
    source = "tirx";
    target = "cutedsl";
  } else {
    return "";
  }
  switch (role) {
    case Role::kSource:
      return absl::StrCat("solo_", source);
    case Role::kBase:
      return absl::StrCat("solo_", target);
    case Role::kSkill:
      return absl::StrCat(direction, "_skill");
    case Role::kControl:
      return absl::StrCat("solo_", target, "_control");
  }
  return "";
}

const v1::ArmResult* ArmOf(const v1::CellReplicate& cell, Role role) {
  switch (role) {
    case Role::kSource:
      return cell.has_source() ? &cell.source() : nullptr;
    case Role::kBase:
      return cell.has_base() ? &cell.base() : nullptr;
    case Role::kSkill:
      return cell.has_skill() ? &cell.skill() : nullptr;
    case Role::kControl:
      return cell.has_control() ? &cell.control() : nullptr;
  }
  return nullptr;
}

std::string ArmNameOf(const v1::CellReplicate& cell, Role role) {
  const v1::ArmResult* arm = ArmOf(cell, role);
  if (arm != nullptr && !arm->arm().empty()) return arm->arm();
  return StandardArmName(cell.direction(), role);
}

absl::Status ValidateCellReplicate(const v1::CellReplicate& cell) {
  if (cell.model().empty()) return FieldError("model", "required");
  if (cell.model() == kAllKey) return FieldError("model", "'*' is reserved");
  if (cell.direction().empty())
    return FieldError("direction", "required ('cutedsl2tirx' or 'tirx2cutedsl')");
  if (cell.direction() == kAllKey) return FieldError("direction", "'*' is reserved");
  if (!IsValidSlug(cell.problem_slug())) {
    return FieldError("problem_slug",
                      absl::StrCat("'", cell.problem_slug(),
                                   "' is not a slug (lower-case letters, digits and '_')"));
  }
  if (cell.family() == v1::FAMILY_UNSPECIFIED) {
    return FieldError("family",
                      absl::StrCat("required: one of ", EnumShortNames(v1::Family_descriptor())));
  }
  if (cell.replicate() < 0) return FieldError("replicate", "must be >= 0");
  if (!cell.has_base()) return FieldError("base", "required");
  if (!cell.has_skill()) return FieldError("skill", "required");
  for (Role role : kRoles) {
    const v1::ArmResult* arm = ArmOf(cell, role);
    if (arm == nullptr) continue;
    if (auto status = ValidateArm(*arm, cell, role, RoleName(role)); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AttemptRecord>> DistinctAttempts(
    absl::Span<const v1::CellReplicate> cells) {
  using CellKey = std::tuple<std::string, std::string, std::string, int>;
  using AttemptKey = std::tuple<std::string, std::string, std::string, int>;
  std::map<CellKey, size_t> cell_index;
  std::map<std::string, size_t> family_index;  // problem -> first cell
  std::map<AttemptKey, size_t> attempt_index;  // -> index into out
  std::map<AttemptKey, std::string> attempt_path;
  std::vector<AttemptRecord> out;
  for (size_t i = 0; i < cells.size(); ++i) {
    const v1::CellReplicate& cell = cells[i];
    const std::string path = absl::StrCat("cells[", i, "]");
    if (auto status = ValidateCellReplicate(cell); !status.ok()) return Prefixed(status, path);

    const CellKey key{cell.model(), cell.direction(), cell.problem_slug(), cell.replicate()};
    if (auto [it, inserted] = cell_index.emplace(key, i); !inserted) {
      return FieldError(path,
                        absl::StrCat("duplicates cells[", it->second, "] (model '", cell.model(),
                                     "', direction '", cell.direction(), "', problem '",
                                     cell.problem_slug(), "', replicate ", cell.replicate(), ")"));
    }
    if (auto [it, inserted] = family_index.emplace(cell.problem_slug(), i); !inserted) {
      const v1::CellReplicate& first = cells[it->second];
      if (first.family() != cell.family()) {
        return FieldError(Join(path, "family"),
                          absl::StrCat("'", FamilyName(cell.family()), "' differs from cells[",
                                       it->second, "].family '", FamilyName(first.family()),
                                       "' for problem '", cell.problem_slug(), "'"));
      }
    }
    for (Role role : kRoles) {
      const v1::ArmResult* arm = ArmOf(cell, role);
      if (arm == nullptr) continue;
      const std::string arm_path = Join(path, RoleName(role));
      const AttemptKey attempt{cell.model(), ArmNameOf(cell, role), cell.problem_slug(),
                               cell.replicate()};
      auto [it, inserted] = attempt_index.emplace(attempt, out.size());
      if (inserted) {
        AttemptRecord record;
        record.model = cell.model();
        record.arm = ArmNameOf(cell, role);
        record.problem_slug = cell.problem_slug();
        record.replicate = cell.replicate();
        record.role = role;
        record.result = arm;
        record.usage = HasUsage(*arm) ? arm : nullptr;
        record.timing = HasTimingSamples(*arm) ? arm : nullptr;
        out.push_back(record);
        attempt_path[attempt] = arm_path;
        continue;
      }
      AttemptRecord& record = out[it->second];
      const v1::ArmResult& first = *record.result;
      if (first.resolved() != arm->resolved() || first.passed() != arm->passed() ||
          first.skipped() != arm->skipped() || !SameSpeedup(first, *arm)) {
        return FieldError(
            arm_path,
            absl::StrCat("disagrees with ", attempt_path[attempt], ", the same attempt (model '",
                         record.model, "', arm '", record.arm, "', problem '", record.problem_slug,
                         "', replicate ", record.replicate, ")"));
      }
      if (record.usage == nullptr && HasUsage(*arm)) record.usage = arm;
      if (record.timing == nullptr && HasTimingSamples(*arm)) record.timing = arm;
    }
  }
  return out;
}

absl::Status ValidateCellReplicates(absl::Span<const v1::CellReplicate> cells) {
  return DistinctAttempts(cells).status();
}

}  // namespace mkb::stats
