// How one attempt's final score enters the statistics: its effective pass, its quality q on the
// log-speedup scale and its tier (SPEC §6).
#ifndef LIBMKB_STATS_OUTCOME_H_
#define LIBMKB_STATS_OUTCOME_H_

#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/stats.pb.h"

namespace mkb::stats {

struct ArmOutcome {
  // Passed with a finite speedup. A passed attempt whose speedup is missing, NaN or infinite
  // counts as failed everywhere.
  bool passed = false;
  double speedup = 0;  // speedup_vs_eager when passed, else NaN
  double q = 0;        // log(clip(speedup, clip_low, clip_high)) if passed, else log(failure_floor)
  int tier = 0;        // thresholds t with passed and speedup >= t
};

// The outcome of `arm` under `config`, whose defaults must be filled in (WithDefaults). The
// skipped flag is not looked at: the caller substitutes the base for a skipped arm.
ArmOutcome OutcomeOf(const v1::ArmResult& arm, const v1::StatsConfig& config);

// q for an (effective) pass and its speedup.
double Quality(bool passed, double speedup, const v1::StatsConfig& config);

// How many of config.thresholds an attempt clears: passed and speedup >= t.
int Tier(bool passed, double speedup, const v1::StatsConfig& config);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_OUTCOME_H_
