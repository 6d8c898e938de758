// The published harness's aggregates (SPEC §6 parity): R@t and S per arm with splits, and
// usage per arm.
#ifndef LIBMKB_STATS_AGGREGATES_H_
#define LIBMKB_STATS_AGGREGATES_H_

#include <vector>

#include "absl/types/span.h"
#include "libmkb/stats/cell_replicates.h"
#include "libmkb/stats/comparisons.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/stats.pb.h"

namespace mkb::stats {

// Over the resolved cell-replicates (comparisons) of a group, n of them:
//   R@t(arm) = #{arm passed and speedup >= t} / n   for t in config.thresholds,
//   S(arm)   = 100 * mean over t of R@t(arm),
// for arm = base and skill (a skipped skill arm counts as its base), and lift = skill - base
// (R@t and S alike); with the group's cell-replicates resolved or not (n_cell_replicates), the
// share of comparisons whose source passed (source_coverage) and whose skill arm ran
// (skill_coverage), as the published harness reports them. Computed per model (sorted) and over
// all models (model "*"), each for the splits: all; with_skill (skill not skipped);
// by_source_verdict (source_passed, source_failed, source_unresolved); by_direction; by_family
// (family order of PROBLEMS.md); by_cell ("<problem_slug>/<direction>", sorted). Groups of
// directions, families and cells are listed when they have cell-replicates (NaN rates when none
// is resolved), those of with_skill and by_source_verdict when they have comparisons; "all" is
// always listed. `comparisons` must point into `cells`.
std::vector<v1::AggregateRow> HarnessAggregates(absl::Span<const v1::CellReplicate> cells,
                                                absl::Span<const Comparison> comparisons,
                                                const v1::StatsConfig& config);

// Tokens, cost and agent time per (model, arm) and per ("*", arm), over the distinct attempts,
// each counted once: attempts that ran (RunStatusOf) in the totals and the means, with the usage
// of their interrupted tries (counted, and reported apart as interrupted_*); skipped ones and
// those that never ran (blocked among them) only counted.
std::vector<v1::UsageRow> UsageByArm(absl::Span<const AttemptRecord> attempts);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_AGGREGATES_H_
