#include "libmkb/stats/outcome.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mkb::stats {

double Quality(bool passed, double speedup, const v1::StatsConfig& config) {
  if (!passed) return std::log(config.failure_floor());
  return std::log(std::clamp(speedup, config.clip_low(), config.clip_high()));
}

int Tier(bool passed, double speedup, const v1::StatsConfig& config) {
  if (!passed) return 0;
  int tier = 0;
  for (double t : config.thresholds()) tier += speedup >= t;
  return tier;
}

ArmOutcome OutcomeOf(const v1::ArmResult& arm, const v1::StatsConfig& config) {
  ArmOutcome out;
  out.passed = arm.passed() && arm.has_speedup() && std::isfinite(arm.speedup());
  out.speedup = out.passed ? arm.speedup() : std::numeric_limits<double>::quiet_NaN();
  out.q = Quality(out.passed, out.speedup, config);
  out.tier = Tier(out.passed, out.speedup, config);
  return out;
}

}  // namespace mkb::stats
