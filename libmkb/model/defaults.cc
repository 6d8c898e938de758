#include "libmkb/model/defaults.h"

namespace mkb {

v1::Budget WithDefaults(const v1::Budget& budget) {
  v1::Budget out = budget;
  if (out.agent_seconds() == 0) out.set_agent_seconds(kDefaultAgentSeconds);
  if (out.max_submissions() == 0) out.set_max_submissions(kDefaultMaxSubmissions);
  if (out.max_kernel_bytes() == 0) out.set_max_kernel_bytes(kDefaultMaxKernelBytes);
  if (out.max_skill_bytes() == 0) out.set_max_skill_bytes(kDefaultMaxSkillBytes);
  if (out.command_timeout_s() == 0) out.set_command_timeout_s(kDefaultCommandTimeoutSeconds);
  if (out.sandbox_cpus() == 0) out.set_sandbox_cpus(kDefaultSandboxCpus);
  if (out.sandbox_memory_bytes() == 0) out.set_sandbox_memory_bytes(kDefaultSandboxMemoryBytes);
  return out;
}

std::vector<v1::PackagePin> DefaultToolchain(v1::Dsl dsl) {
  auto pin = [](const char* name, const char* version) {
    v1::PackagePin p;
    p.set_name(name);
    p.set_version(version);
    return p;
  };
  switch (dsl) {
    case v1::CUTEDSL:
      return {pin("nvidia-cutlass-dsl[cu13]", "4.7.0"), pin("apache-tvm-ffi", "0.1.12")};
    case v1::TIRX:
      return {pin("apache-tvm[cuda]", "0.25.0.post1"), pin("apache-tvm-ffi", "0.1.12")};
    default:
      return {};
  }
}

std::vector<v1::ArmSpec> StandardArms() {
  auto solo = [](const char* name, v1::Dsl dsl) {
    v1::ArmSpec arm;
    arm.set_name(name);
    arm.set_dsl(dsl);
    arm.mutable_skill()->set_kind(v1::SkillSource::NONE);
    return arm;
  };
  auto conditioned = [](const char* name, v1::Dsl dsl, const char* source, const char* base) {
    v1::ArmSpec arm;
    arm.set_name(name);
    arm.set_dsl(dsl);
    arm.mutable_skill()->set_kind(v1::SkillSource::ARM);
    arm.mutable_skill()->set_arm(source);
    arm.set_base_arm(base);
    return arm;
  };
  return {solo("solo_cutedsl", v1::CUTEDSL), solo("solo_tirx", v1::TIRX),
          conditioned("cutedsl2tirx_skill", v1::TIRX, "solo_cutedsl", "solo_tirx"),
          conditioned("tirx2cutedsl_skill", v1::CUTEDSL, "solo_tirx", "solo_cutedsl")};
}

v1::ExperimentSpec WithDefaults(const v1::ExperimentSpec& spec) {
  v1::ExperimentSpec out = spec;
  if (out.arms_size() == 0) {
    for (v1::ArmSpec& arm : StandardArms()) *out.add_arms() = std::move(arm);
  }
  if (out.replicates() == 0) out.set_replicates(kDefaultReplicates);
  if (out.concurrency() == 0) out.set_concurrency(kDefaultConcurrency);
  if (out.max_tries() == 0) out.set_max_tries(kDefaultMaxTries);
  if (out.workload().empty()) out.set_workload("full");
  *out.mutable_budget() = WithDefaults(out.budget());
  return out;
}

v1::StatsConfig WithDefaults(const v1::StatsConfig& config) {
  v1::StatsConfig out = config;
  if (out.clip_low() == 0) out.set_clip_low(1.0 / 16);
  if (out.clip_high() == 0) out.set_clip_high(16.0);
  if (out.failure_floor() == 0) out.set_failure_floor(1.0 / 32);
  if (out.bootstrap_resamples() == 0) out.set_bootstrap_resamples(10000);
  if (out.seed() == 0) out.set_seed(20260101);
  if (out.timing_resamples() == 0) out.set_timing_resamples(200);
  if (out.thresholds_size() == 0) {
    for (double t : {0.0, 0.5, 1.0, 2.0, 4.0}) out.add_thresholds(t);
  }
  return out;
}

}  // namespace mkb
