// τ, the threshold on d = q(skill) - q(base) beyond which a comparison counts as helped (d > τ)
// or harmed (d < -τ).
#ifndef LIBMKB_STATS_HELP_THRESHOLD_H_
#define LIBMKB_STATS_HELP_THRESHOLD_H_

#include "absl/types/span.h"
#include "libmkb/stats/cell_replicates.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/stats.pb.h"

namespace mkb::stats {

// Pairs of solo replicates needed before their spread is trusted as τ.
inline constexpr int kMinTauPairs = 10;

// log(1.05): a 5% speedup difference.
double DefaultTau();

// τ for a report:
//  1. config.tau when > 0 (source "config");
//  2. else the median of |q_r - q_r'| over every pair r < r' of replicates of the same solo
//     attempt — same model, solo arm (a source, base or control arm) and problem — in which
//     both attempts are resolved and passed, when there are at least kMinTauPairs such pairs
//     (source "replicate_spread"). Pairs with a failure are left out: a pass/fail flip is an
//     outcome, not the noise of the speedup that τ is meant to sit above;
//  3. else log(1.05) (source "default").
// `config` must have its defaults filled in (WithDefaults).
v1::TauEstimate EstimateTau(absl::Span<const AttemptRecord> attempts,
                            const v1::StatsConfig& config);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_HELP_THRESHOLD_H_
