// The judge's measurement noise in the statistics (docs/statistics.md, "Measurement noise"): a
// passed attempt's speedup is a ratio of two medians of timing samples, and a rerun of the same
// kernel would give another one. Where the final regrade's parity samples are stored, each such
// attempt gets speedup replicates drawn from them, and the problem bootstrap draws one replicate
// per attempt and resample, so that its intervals carry the timing noise besides the sampling of
// problems.
#ifndef LIBMKB_STATS_MEASUREMENT_NOISE_H_
#define LIBMKB_STATS_MEASUREMENT_NOISE_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/types/span.h"
#include "libmkb/stats/cell_replicates.h"
#include "libmkb/stats/comparisons.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/stats.pb.h"

namespace mkb::stats {

// `count` replicates of a speedup measured as median(eager_ms) / median(kernel_ms): replicate m
// resamples each set of samples with replacement (as many as it has finite ones) and scales the
// speedup by the ratio of the resampled medians to the observed ones,
//   s*_m = speedup * (median(eager*) / median(eager)) / (median(kernel*) / median(kernel)),
// medians of type 7. The stream is std::mt19937_64 seeded with `seed`. Empty when either set has
// fewer than two finite samples or a median that is not positive, or the speedup is not finite.
std::vector<double> SpeedupReplicates(double speedup, absl::Span<const double> kernel_ms,
                                      absl::Span<const double> eager_ms, int count, uint64_t seed);

// The replicates of every effectively passed attempt with timing samples, keyed by attempt.
class MeasurementNoise {
 public:
  // Draws the replicates (config.timing_resamples each, seed GroupSeed(config.seed,
  // "timing|<model>|<arm>|<problem>|<replicate>")), unless config.point_speedups_only.
  // `config` has its defaults filled in.
  MeasurementNoise(absl::Span<const AttemptRecord> attempts, const v1::StatsConfig& config);

  // Points each comparison's base, skill and control at their replicates (a skipped skill arm
  // at its base's); the comparisons must not outlive this object.
  void Attach(std::vector<Comparison>& comparisons) const;

  // What the report says about it (StatsReport.measurement_noise).
  v1::MeasurementNoise Summary() const { return summary_; }

 private:
  using Key = std::tuple<std::string, std::string, std::string, int>;  // model, arm, problem, rep
  const std::vector<double>* Find(const v1::CellReplicate& cell, Role role) const;

  std::map<Key, std::vector<double>> replicates_;
  v1::MeasurementNoise summary_;
};

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_MEASUREMENT_NOISE_H_
