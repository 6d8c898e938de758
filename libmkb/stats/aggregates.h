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

// Over a set of resolved cell-replicates (comparisons) of n:
//   R@t(arm) = #{arm passed and speedup >= t} / n   for t in config.thresholds,
//   S(arm)   = 100 * mean over t of R@t(arm),
// for arm = base and skill (a skipped skill arm counts as its base), and lift = skill - base
// (R@t and S alike). Computed per model (sorted) and over all models (model "*"), each for the
// splits: all; with_skill (skill not skipped); by_source_verdict (source_passed, source_failed,
// source_unresolved); by_direction; by_family (family order of PROBLEMS.md). Groups without
// comparisons are left out, except "all" (NaN rates when n = 0).
std::vector<v1::AggregateRow> HarnessAggregates(absl::Span<const Comparison> comparisons,
                                                const v1::StatsConfig& config);

// Tokens, cost and agent time per (model, arm) and per ("*", arm), over the distinct attempts:
// every attempt that ran (not skipped), resolved or not, counted once.
std::vector<v1::UsageRow> UsageByArm(absl::Span<const AttemptRecord> attempts);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_AGGREGATES_H_
