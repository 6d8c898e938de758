// The paired comparisons behind every measure: one per resolved cell-replicate, with the
// outcomes of its arms, d = q(skill) - q(base), and the source's standing against the base.
#ifndef LIBMKB_STATS_COMPARISONS_H_
#define LIBMKB_STATS_COMPARISONS_H_

#include <vector>

#include "absl/types/span.h"
#include "libmkb/stats/outcome.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/stats.pb.h"

namespace mkb::stats {

// The source attempt's tier against the base's (SPEC §6 relative standing).
enum class Standing { kAbove, kLevel, kBelow, kSourceUnresolved };

// "above", "level", "below", "source_unresolved".
const char* StandingName(Standing standing);

// "help" when d > tau, "harm" when d < -tau, else "neutral".
const char* OutcomeName(double d, double tau);

struct Comparison {
  const v1::CellReplicate* cell = nullptr;
  bool source_resolved = false;
  ArmOutcome source;  // meaningful when source_resolved
  ArmOutcome base;
  ArmOutcome skill;  // a skipped skill arm: a copy of base
  bool skill_skipped = false;
  bool has_control = false;  // a control that is resolved
  ArmOutcome control;
  double d = 0;          // skill.q - base.q
  double d_control = 0;  // control.q - base.q, when has_control
  Standing standing = Standing::kSourceUnresolved;
  // Measurement-noise replicates of the speedups (measurement_noise.h), nullptr where there are
  // none (failed, or no timing samples): the point speedup stands. A skipped skill arm shares
  // its base's.
  const std::vector<double>* base_noise = nullptr;
  const std::vector<double>* skill_noise = nullptr;
  const std::vector<double>* control_noise = nullptr;
};

// The comparisons of the resolved cell-replicates — base resolved, skill resolved or skipped —
// in input order. `cells` must be valid (ValidateCellReplicates) and `config` have its defaults
// filled in. The comparisons point into `cells`.
std::vector<Comparison> BuildComparisons(absl::Span<const v1::CellReplicate> cells,
                                         const v1::StatsConfig& config);

// The report's row for a comparison.
v1::ComparisonRow ComparisonRowOf(const Comparison& comparison, double tau);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_COMPARISONS_H_
