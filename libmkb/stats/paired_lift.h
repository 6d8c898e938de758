// The paper's paired measures with problems as the unit (SPEC §6): per group of each level and
// per arm (skill; control where controls exist), ΔGM, help rate T and harm rate H with
// cluster-bootstrap intervals, the Wilcoxon signed-rank and sign tests on per-problem mean d,
// the exact McNemar test on pass / fail, and p-values adjusted across the groups of a level.
#ifndef LIBMKB_STATS_PAIRED_LIFT_H_
#define LIBMKB_STATS_PAIRED_LIFT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "libmkb/model/defaults.h"
#include "libmkb/stats/bootstrap.h"
#include "libmkb/stats/comparisons.h"
#include "libmkb/stats/grouping.h"
#include "libmkb/stats/hypothesis_tests.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/stats.pb.h"

namespace mkb::stats {

struct PairedLiftOptions {
  double tau = 0;  // help / harm threshold on d (help_threshold.h)
  double confidence = 0.95;
  int resamples = 10000;
  uint64_t seed = 20260101;  // mixed with each group's label (GroupSeed)
  WilcoxonOptions wilcoxon;
  // q's constants, the R@t thresholds and timing_resamples, with their defaults filled in.
  v1::StatsConfig config = WithDefaults(v1::StatsConfig());
};

// The arm a paired table compares with the base: the skill-conditioned attempt (d) or the
// second solo (d_control).
enum class PairedArm { kSkill, kControl };

// The problems of a group's comparisons for `arm` (only those with a resolved control for
// kControl), sorted by slug, as bootstrap clusters: observed totals (sum d, n, help, harm,
// hit(arm) - hit(base) per threshold) and, where a comparison of the problem has measurement-
// noise replicates, config.timing_resamples replicate totals recomputed from them. `slugs`
// (optional) receives the problems' slugs, in cluster order.
std::vector<ProblemCluster> ProblemClusters(absl::Span<const Comparison* const> group,
                                            PairedArm arm, const PairedLiftOptions& options,
                                            std::vector<std::string>* slugs = nullptr);

struct PairedLiftTables {
  std::vector<v1::LiftRow> lift;
  std::vector<v1::ProblemLiftRow> problems;
};

// For the comparisons of one group and arm (d = q(arm) - q(base)):
//   mean d = sum d / n over the comparisons; ΔGM = exp(mean d) - 1; T = #{d > tau} / n;
//   H = #{d < -tau} / n; the R@t and S lifts; intervals from BootstrapPairedLift over the
//   group's problems (ProblemClusters);
//   per-problem mean d_p = mean of d over the problem's comparisons in the group, the sample of
//   the Wilcoxon (Pratt) and sign tests; McNemar on (base passed, arm passed) per comparison.
// Adjusted p-values (each test separately, each level and arm separately): Benjamini-Hochberg
// across the groups of a level that splits on family, Holm across the groups of any other
// level but "overall" (one group, not adjusted: adjustment "none").
absl::StatusOr<PairedLiftTables> PairedLift(absl::Span<const Comparison> comparisons,
                                            absl::Span<const Level> levels,
                                            const PairedLiftOptions& options);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_PAIRED_LIFT_H_
