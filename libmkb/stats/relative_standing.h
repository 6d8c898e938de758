// Tiers and the relative-standing table (SPEC §6): does a skill help more when its source
// attempt stood above the target's solo attempt? And the regression-to-the-mean control: the
// same table with a second solo attempt in place of the skill-conditioned one.
#ifndef LIBMKB_STATS_RELATIVE_STANDING_H_
#define LIBMKB_STATS_RELATIVE_STANDING_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "libmkb/stats/comparisons.h"
#include "libmkb/stats/grouping.h"
#include "libmkb/stats/paired_lift.h"
#include "mkb/v1/stats.pb.h"

namespace mkb::stats {

// For every group of every level, for arm "skill" and (where the group has resolved controls)
// "control", and for standing above / level / below (the source's tier against the base's;
// comparisons whose source is unresolved are left out): n, the help count #{d > tau} and harm
// count #{d < -tau} with their rates and Wilson intervals at `confidence`, mean d and
// ΔGM = exp(mean d) - 1 with a bootstrap interval over the problems of the group and standing
// (ProblemClusters and BootstrapPairedLift: measurement noise included where there is some;
// seed label "<level>|<model>|<direction>|<family>|<arm>|<standing>"). d is q(skill) - q(base),
// or q(control) - q(base) for the control. The three standings are always listed (NaN when
// n = 0). tau, confidence, resamples, seed and config come from `options`.
absl::StatusOr<std::vector<v1::StandingRow>> RelativeStanding(
    absl::Span<const Comparison> comparisons, absl::Span<const Level> levels,
    const PairedLiftOptions& options);

// Tier distributions per model (sorted) and over all models ("*"), for the roles source
// (resolved ones), base, skill (a skipped one as its base) and control (resolved ones), over
// the comparisons. counts has thresholds + 1 entries.
std::vector<v1::TierRow> TierCounts(absl::Span<const Comparison> comparisons, int thresholds);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_RELATIVE_STANDING_H_
