#include "libmkb/model/validation.h"

#include <cmath>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libmkb/model/names.h"

namespace mkb {
namespace {

absl::Status FieldError(const std::string& path, absl::string_view problem) {
  absl::Status status = absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
  status.SetPayload(kFieldPathPayload, absl::Cord(path));
  return status;
}

std::string Indexed(absl::string_view field, int index) {
  return absl::StrFormat("%s[%d]", field, index);
}

std::string Join(absl::string_view prefix, absl::string_view field) {
  return prefix.empty() ? std::string(field) : absl::StrCat(prefix, ".", field);
}

bool IsBlank(const std::string& text) { return absl::StripAsciiWhitespace(text).empty(); }

// A scalar input: a Python float, int or bool passed by value. Its dtype names the Python type,
// and the tensor-only fields must stay unset so that no reader mistakes it for a tensor.
absl::Status ValidateScalarSpec(const v1::TensorSpec& spec, const std::string& path) {
  if (PythonScalarTypeName(spec.dtype()).empty()) {
    return FieldError(
        Join(path, "dtype"),
        "a scalar input is FLOAT64 (a Python float), INT64 (an int) or BOOL (a bool)");
  }
  if (spec.shape_size() > 0) {
    return FieldError(Join(path, "shape"), "a scalar input has no shape");
  }
  if (spec.in_place()) {
    return FieldError(Join(path, "in_place"), "a scalar is passed by value: nothing to update");
  }
  if (spec.exact()) return FieldError(Join(path, "exact"), "applies to tensor outputs only");
  if (!spec.has_value()) return absl::OkStatus();
  const double value = spec.value();
  if (!std::isfinite(value)) return FieldError(Join(path, "value"), "must be a finite number");
  if (spec.dtype() == v1::INT64 && (value != std::floor(value) || std::fabs(value) > 0x1p53)) {
    return FieldError(Join(path, "value"), "an INT64 scalar's value is an integer below 2^53");
  }
  if (spec.dtype() == v1::BOOL && value != 0 && value != 1) {
    return FieldError(Join(path, "value"), "a BOOL scalar's value is 0 or 1");
  }
  return absl::OkStatus();
}

absl::Status ValidateTensorSpec(const v1::TensorSpec& spec, const std::string& path,
                                const v1::Problem& problem) {
  if (spec.name().empty()) return FieldError(Join(path, "name"), "required");
  if (spec.dtype() == v1::DTYPE_UNSPECIFIED) return FieldError(Join(path, "dtype"), "required");
  if (spec.scalar()) return ValidateScalarSpec(spec, path);
  if (spec.has_value()) return FieldError(Join(path, "value"), "applies to scalar inputs only");
  for (int i = 0; i < spec.shape_size(); ++i) {
    const std::string& dim = spec.shape(i);
    int64_t value = 0;
    if (absl::SimpleAtoi(dim, &value)) {
      if (value < 0) return FieldError(Indexed(Join(path, "shape"), i), "must be >= 0");
      continue;
    }
    for (const v1::Workload& workload : problem.workloads()) {
      if (!workload.params().contains(dim)) {
        return FieldError(
            Indexed(Join(path, "shape"), i),
            absl::StrCat("'", dim, "' is neither an integer nor a parameter of workload '",
                         workload.name(), "'"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateWorkload(const v1::Workload& workload, const std::string& path) {
  if (workload.name().empty()) return FieldError(Join(path, "name"), "required");
  if (IsBlank(workload.description())) return FieldError(Join(path, "description"), "required");
  for (const auto& [name, value] : workload.params()) {
    if (value < 0) return FieldError(absl::StrCat(path, ".params[\"", name, "\"]"), "must be >= 0");
  }
  for (const auto& [name, minimum] : workload.param_minimums()) {
    const std::string field = absl::StrCat(path, ".param_minimums[\"", name, "\"]");
    const auto largest = workload.params().find(name);
    if (largest == workload.params().end()) {
      return FieldError(
          field, "names no parameter of this workload's params (which holds the largest value)");
    }
    if (minimum < 0 || minimum > largest->second) {
      return FieldError(field, absl::StrCat("must be between 0 and the parameter's largest value ",
                                            largest->second));
    }
  }
  if (!workload.has_roofline()) return FieldError(Join(path, "roofline"), "required");
  const v1::RooflineFacts& roofline = workload.roofline();
  if (!std::isfinite(roofline.flops()) || roofline.flops() < 0) {
    return FieldError(Join(path, "roofline.flops"), "must be a finite number >= 0");
  }
  if (!std::isfinite(roofline.min_bytes()) || roofline.min_bytes() <= 0) {
    return FieldError(Join(path, "roofline.min_bytes"), "must be a finite number > 0");
  }
  if (IsBlank(roofline.derivation())) {
    return FieldError(Join(path, "roofline.derivation"),
                      "required: say how flops and bytes were counted");
  }
  if (workload.peak_memory_bytes() <= 0) {
    return FieldError(Join(path, "peak_memory_bytes"), "must be > 0");
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<std::string> FieldPathOf(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kFieldPathPayload);
  if (!payload.has_value()) return std::nullopt;
  return std::string(*payload);
}

bool IsValidSlug(const std::string& slug) {
  if (slug.empty() || !absl::ascii_islower(slug[0])) return false;
  for (char c : slug) {
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_')) return false;
  }
  return true;
}

absl::Status ValidateProblem(const v1::Problem& problem) {
  if (problem.slug().empty()) return FieldError("slug", "required");
  if (!IsValidSlug(problem.slug())) {
    return FieldError("slug", absl::StrCat("'", problem.slug(),
                                           "' must be lower-case letters, digits and '_', starting "
                                           "with a letter"));
  }
  if (problem.number() < 1) return FieldError("number", "must be >= 1");
  if (problem.family() == v1::FAMILY_UNSPECIFIED) return FieldError("family", "required");
  if (IsBlank(problem.title())) return FieldError("title", "required");
  if (IsBlank(problem.description())) return FieldError("description", "required");
  if (problem.provenance().source().empty()) return FieldError("provenance.source", "required");
  static const std::set<std::string> kSources = {"FI", "vL", "FLA", "S1", "S2", "SQ", "custom"};
  if (!kSources.count(problem.provenance().source())) {
    return FieldError("provenance.source",
                      absl::StrCat("'", problem.provenance().source(),
                                   "' is not one of FI, vL, FLA, S1, S2, SQ, custom"));
  }
  if (problem.provenance().model().empty()) return FieldError("provenance.model", "required");
  if (problem.provenance().license().empty()) return FieldError("provenance.license", "required");

  std::set<std::string> workload_names;
  for (int i = 0; i < problem.workloads_size(); ++i) {
    const std::string path = Indexed("workloads", i);
    if (auto status = ValidateWorkload(problem.workloads(i), path); !status.ok()) return status;
    if (!workload_names.insert(problem.workloads(i).name()).second) {
      return FieldError(Join(path, "name"),
                        absl::StrCat("duplicate workload '", problem.workloads(i).name(), "'"));
    }
  }
  for (const char* required : {"full", "small"}) {
    if (!workload_names.count(required)) {
      return FieldError("workloads", absl::StrCat("a '", required, "' workload is required"));
    }
  }

  if (problem.inputs_size() == 0) return FieldError("inputs", "at least one input is required");
  std::set<std::string> names;
  for (int i = 0; i < problem.inputs_size(); ++i) {
    const std::string path = Indexed("inputs", i);
    if (auto status = ValidateTensorSpec(problem.inputs(i), path, problem); !status.ok())
      return status;
    if (!names.insert(problem.inputs(i).name()).second) {
      return FieldError(Join(path, "name"),
                        absl::StrCat("duplicate name '", problem.inputs(i).name(), "'"));
    }
  }
  if (problem.outputs_size() == 0) return FieldError("outputs", "at least one output is required");
  names.clear();
  for (int i = 0; i < problem.outputs_size(); ++i) {
    const std::string path = Indexed("outputs", i);
    if (problem.outputs(i).in_place())
      return FieldError(Join(path, "in_place"), "applies to inputs only");
    if (problem.outputs(i).scalar()) {
      return FieldError(Join(path, "scalar"), "applies to inputs only: outputs are tensors");
    }
    if (auto status = ValidateTensorSpec(problem.outputs(i), path, problem); !status.ok())
      return status;
    if (!names.insert(problem.outputs(i).name()).second) {
      return FieldError(Join(path, "name"),
                        absl::StrCat("duplicate name '", problem.outputs(i).name(), "'"));
    }
  }
  if (problem.output_container() == v1::OUTPUT_CONTAINER_UNSPECIFIED) {
    return FieldError("output_container", "required: SINGLE_TENSOR, TUPLE or LIST");
  }
  if (problem.output_container() == v1::SINGLE_TENSOR && problem.outputs_size() != 1) {
    return FieldError(
        "output_container",
        absl::StrCat("SINGLE_TENSOR needs exactly one output, not ", problem.outputs_size()));
  }
  const v1::TolerancePolicy& tolerance = problem.tolerance();
  if (!std::isfinite(tolerance.allowance_factor()) || tolerance.allowance_factor() < 0) {
    return FieldError("tolerance.allowance_factor",
                      "must be a finite number >= 0 (0: the default 3)");
  }
  if (!std::isfinite(tolerance.eps_scale()) || tolerance.eps_scale() < 0) {
    return FieldError("tolerance.eps_scale", "must be a finite number >= 0 (0: the default 1)");
  }
  if (!problem.fingerprint().empty())
    return FieldError("fingerprint", "is set by the loader; remove it");
  if (!problem.directory().empty())
    return FieldError("directory", "is set by the loader; remove it");
  if (!problem.reference_source().empty()) {
    return FieldError("reference_source", "is set by the loader; remove it");
  }
  return absl::OkStatus();
}

absl::Status ValidateVariant(const v1::Variant& variant) {
  if (variant.problem_slug().empty()) return FieldError("problem_slug", "required");
  if (variant.dsl() == v1::DSL_UNSPECIFIED) return FieldError("dsl", "required: CUTEDSL or TIRX");
  for (int i = 0; i < variant.toolchain_size(); ++i) {
    if (variant.toolchain(i).name().empty())
      return FieldError(Indexed("toolchain", i) + ".name", "required");
  }
  const std::string& arch = variant.target_arch();
  if (!arch.empty() && !absl::StartsWith(arch, "sm_")) {
    return FieldError("target_arch", absl::StrCat("'", arch, "' must look like sm_90a"));
  }
  return absl::OkStatus();
}

absl::Status ValidateBudget(const v1::Budget& budget) {
  if (!std::isfinite(budget.agent_seconds()) || budget.agent_seconds() < 0) {
    return FieldError("agent_seconds", "must be a finite number >= 0");
  }
  if (budget.max_submissions() < 0) return FieldError("max_submissions", "must be >= 0");
  if (budget.max_kernel_bytes() < 0) return FieldError("max_kernel_bytes", "must be >= 0");
  if (budget.max_skill_bytes() < 0) return FieldError("max_skill_bytes", "must be >= 0");
  if (!std::isfinite(budget.command_timeout_s()) || budget.command_timeout_s() < 0) {
    return FieldError("command_timeout_s", "must be a finite number >= 0");
  }
  if (budget.sandbox_cpus() < 0) return FieldError("sandbox_cpus", "must be >= 0");
  if (budget.sandbox_memory_bytes() < 0) return FieldError("sandbox_memory_bytes", "must be >= 0");
  if (budget.max_turns() < 0) return FieldError("max_turns", "must be >= 0");
  return absl::OkStatus();
}

absl::Status ValidateSkill(const v1::Skill& skill) {
  if (skill.bytes() != static_cast<int64_t>(skill.text().size())) {
    return FieldError("bytes", absl::StrCat(skill.bytes(), " does not match the text's ",
                                            skill.text().size(), " bytes"));
  }
  if (!skill.sha256().empty() && skill.sha256().size() != 64) {
    return FieldError("sha256", "must be 64 hex digits");
  }
  return absl::OkStatus();
}

absl::Status ValidateArmSpec(const v1::ArmSpec& arm) {
  if (arm.name().empty()) return FieldError("name", "required");
  if (!IsValidSlug(arm.name())) {
    return FieldError(
        "name", absl::StrCat("'", arm.name(), "' must be lower-case letters, digits and '_'"));
  }
  if (arm.dsl() == v1::DSL_UNSPECIFIED) return FieldError("dsl", "required: CUTEDSL or TIRX");
  switch (arm.skill().kind()) {
    case v1::SkillSource::KIND_UNSPECIFIED:
      return FieldError("skill.kind", "required: NONE, ARM or FIXED_TEXT");
    case v1::SkillSource::NONE:
      break;
    case v1::SkillSource::ARM:
      if (arm.skill().arm().empty()) return FieldError("skill.arm", "required when kind is ARM");
      if (arm.skill().arm() == arm.name())
        return FieldError("skill.arm", "an arm cannot take its own skill");
      break;
    case v1::SkillSource::FIXED_TEXT:
      if (arm.skill().text().empty())
        return FieldError("skill.text", "required when kind is FIXED_TEXT");
      break;
    default:
      return FieldError("skill.kind", "unknown kind");
  }
  if (arm.skill().kind() != v1::SkillSource::NONE && arm.base_arm().empty()) {
    return FieldError("base_arm",
                      "required for a skill-conditioned arm: the solo it is compared with");
  }
  return absl::OkStatus();
}

absl::Status ValidateExperimentSpec(const v1::ExperimentSpec& spec) {
  if (spec.name().empty()) return FieldError("name", "required");
  if (spec.model().empty()) return FieldError("model", "required");
  if (spec.replicates() < 0) return FieldError("replicates", "must be >= 0 (0: the default 3)");
  if (spec.concurrency() < 0) return FieldError("concurrency", "must be >= 0");
  if (spec.max_tries() < 0) return FieldError("max_tries", "must be >= 0");
  if (!spec.workload().empty() && spec.workload() != "full" && spec.workload() != "small") {
    return FieldError("workload", absl::StrCat("'", spec.workload(), "' must be full or small"));
  }
  std::set<std::string> arm_names;
  for (int i = 0; i < spec.arms_size(); ++i) {
    if (auto status = ValidateArmSpec(spec.arms(i)); !status.ok()) {
      const std::string inner = FieldPathOf(status).value_or("");
      return FieldError(Join(Indexed("arms", i), inner), status.message().substr(inner.size() + 2));
    }
    if (!arm_names.insert(spec.arms(i).name()).second) {
      return FieldError(Indexed("arms", i) + ".name",
                        absl::StrCat("duplicate arm '", spec.arms(i).name(), "'"));
    }
  }
  for (int i = 0; i < spec.arms_size(); ++i) {
    const v1::ArmSpec& arm = spec.arms(i);
    if (arm.skill().kind() == v1::SkillSource::ARM && arm.skill().model().empty() &&
        !arm_names.count(arm.skill().arm())) {
      return FieldError(Indexed("arms", i) + ".skill.arm",
                        absl::StrCat("no arm named '", arm.skill().arm(), "' in this experiment"));
    }
    if (!arm.base_arm().empty() && !arm_names.count(arm.base_arm())) {
      return FieldError(Indexed("arms", i) + ".base_arm",
                        absl::StrCat("no arm named '", arm.base_arm(), "' in this experiment"));
    }
  }
  if (auto status = ValidateBudget(spec.budget()); !status.ok()) {
    const std::string inner = FieldPathOf(status).value_or("");
    return FieldError(Join("budget", inner), status.message().substr(inner.size() + 2));
  }
  return absl::OkStatus();
}

absl::Status ValidateStatsConfig(const v1::StatsConfig& config) {
  for (const auto& [name, value] : {std::pair<const char*, double>{"clip_low", config.clip_low()},
                                    {"clip_high", config.clip_high()},
                                    {"failure_floor", config.failure_floor()}}) {
    if (!std::isfinite(value) || value < 0) return FieldError(name, "must be a finite number >= 0");
  }
  if (config.clip_low() > 0 && config.clip_high() > 0 && config.clip_low() >= config.clip_high()) {
    return FieldError("clip_high", "must be greater than clip_low");
  }
  if (!std::isfinite(config.tau()) || config.tau() < 0) return FieldError("tau", "must be >= 0");
  if (config.bootstrap_resamples() < 0) return FieldError("bootstrap_resamples", "must be >= 0");
  if (config.timing_resamples() < 0) return FieldError("timing_resamples", "must be >= 0");
  for (int i = 0; i < config.thresholds_size(); ++i) {
    if (!std::isfinite(config.thresholds(i)) || config.thresholds(i) < 0) {
      return FieldError(Indexed("thresholds", i), "must be a finite number >= 0");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMessage(const google::protobuf::Message& message) {
  const google::protobuf::Descriptor* type = message.GetDescriptor();
  if (type == v1::Problem::descriptor())
    return ValidateProblem(static_cast<const v1::Problem&>(message));
  if (type == v1::Variant::descriptor())
    return ValidateVariant(static_cast<const v1::Variant&>(message));
  if (type == v1::Budget::descriptor())
    return ValidateBudget(static_cast<const v1::Budget&>(message));
  if (type == v1::Skill::descriptor()) return ValidateSkill(static_cast<const v1::Skill&>(message));
  if (type == v1::ArmSpec::descriptor())
    return ValidateArmSpec(static_cast<const v1::ArmSpec&>(message));
  if (type == v1::ExperimentSpec::descriptor()) {
    return ValidateExperimentSpec(static_cast<const v1::ExperimentSpec&>(message));
  }
  if (type == v1::StatsConfig::descriptor()) {
    return ValidateStatsConfig(static_cast<const v1::StatsConfig&>(message));
  }
  return absl::OkStatus();
}

}  // namespace mkb
