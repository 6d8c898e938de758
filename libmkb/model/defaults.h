// The specification's defaults: budgets (SPEC §4), toolchain pins (§2), the four standard
// arms (§1) and the statistics' constants (§6). Zero-valued fields of a message mean "default";
// these functions fill them in.
#ifndef LIBMKB_MODEL_DEFAULTS_H_
#define LIBMKB_MODEL_DEFAULTS_H_

#include <vector>

#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/common.pb.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/problem.pb.h"

namespace mkb {

inline constexpr double kDefaultAgentSeconds = 2400.0;
inline constexpr int kDefaultMaxSubmissions = 10;
inline constexpr int64_t kDefaultMaxKernelBytes = 300000;
inline constexpr int64_t kDefaultMaxSkillBytes = 16384;
inline constexpr double kDefaultCommandTimeoutSeconds = 120.0;
inline constexpr int kDefaultSandboxCpus = 2;
inline constexpr int64_t kDefaultSandboxMemoryBytes = int64_t{8} << 30;
inline constexpr int kDefaultReplicates = 3;
inline constexpr int kDefaultConcurrency = 4;
inline constexpr int kDefaultMaxTries = 4;  // the first try and 3 retries (SPEC §5)

// `budget` with every zero field replaced by its default.
v1::Budget WithDefaults(const v1::Budget& budget);

// The pinned toolchain of the published runs for `dsl` (SPEC §2).
std::vector<v1::PackagePin> DefaultToolchain(v1::Dsl dsl);

// solo_cutedsl, solo_tirx, cutedsl2tirx_skill, tirx2cutedsl_skill.
std::vector<v1::ArmSpec> StandardArms();

// The regression-to-the-mean control (docs/statistics.md): second solos solo_tirx_control and
// solo_cutedsl_control, each compared with its DSL's solo.
std::vector<v1::ArmSpec> ControlArms();

// `spec` with arms, replicates, concurrency, tries, workload and budget defaults filled in.
v1::ExperimentSpec WithDefaults(const v1::ExperimentSpec& spec);

// `config` with the paper's constants where fields are zero: clip [2^-4, 2^4], failure floor
// 2^-5, 10,000 bootstrap resamples, thresholds {0, 0.5, 1, 2, 4}, seed 20260101.
v1::StatsConfig WithDefaults(const v1::StatsConfig& config);

}  // namespace mkb

#endif  // LIBMKB_MODEL_DEFAULTS_H_
