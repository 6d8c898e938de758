// The paired cluster bootstrap of the paper's measures (ΔGM, help rate T, harm rate H), with
// percentile and BCa intervals. Problems are the unit: a resample draws K problems with
// replacement from the K problems of a group and takes every comparison of each drawn problem
// (its replicates, and its models and directions when the group pools them).
#ifndef LIBMKB_STATS_BOOTSTRAP_H_
#define LIBMKB_STATS_BOOTSTRAP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace mkb::stats {

// The comparisons of one problem within a group, reduced to the sums the statistics need.
struct ClusterTotals {
  double sum_d = 0;    // sum of d = q(arm) - q(base), natural-log units
  int64_t n = 0;       // comparisons, >= 1
  int64_t n_help = 0;  // with d > tau
  int64_t n_harm = 0;  // with d < -tau
  // Per R@t threshold: sum over the comparisons of hit(arm) - hit(base), hit = passed and
  // speedup >= t. May be empty (no R@t lifts are estimated then); else the same length in every
  // cluster.
  std::vector<int64_t> hit_lift;
};

// One problem of a group: its totals, and the totals recomputed with measurement-noise
// replicates of its speedups (measurement_noise.h). A resample that draws the problem draws one
// of `noise` (uniformly), or takes `observed` when there are none.
struct ProblemCluster {
  ClusterTotals observed;
  std::vector<ClusterTotals> noise;
};

struct BootstrapOptions {
  int resamples = 10000;
  // The resampling stream: std::mt19937_64 seeded with `seed`; each resample draws K cluster
  // indices in order, each unbiased by rejection (x >= 2^64 mod K, then x mod K). The same
  // seed and clusters give the same intervals on every platform.
  uint64_t seed = 20260101;
  double confidence = 0.95;
  bool keep_distributions = false;  // return the bootstrap distributions (for validation, plots)
};

struct BootstrapEstimate {
  double value = 0;  // the statistic on the data
  double se = 0;     // sample standard deviation of the bootstrap distribution
  double percentile_low =
      0;  // quantiles alpha and 1 - alpha (type 7), alpha = (1 - confidence) / 2
  double percentile_high = 0;
  double bca_low = 0;  // bias-corrected and accelerated (Efron 1987), as scipy computes it
  double bca_high = 0;
  bool bca_fallback = false;         // BCa undefined: the percentile interval is reported instead
  std::vector<double> distribution;  // when keep_distributions, in resample order
};

struct PairedLiftEstimates {
  int clusters = 0;
  int64_t comparisons = 0;
  BootstrapEstimate delta_gm;   // exp(sum d / n) - 1
  BootstrapEstimate help_rate;  // n_help / n
  BootstrapEstimate harm_rate;  // n_harm / n
  // R@t(arm) - R@t(base) = hit_lift[t] / n per threshold, and S(arm) - S(base) = 100 * their
  // mean; empty / NaN when the clusters carry no hit_lift.
  std::vector<BootstrapEstimate> r_at_lift;
  BootstrapEstimate s_lift;
};

// Bootstraps every measure from the same resamples: each draws K problems with replacement,
// and for each drawn problem one of its noise replicates (or its observed totals), and
// recomputes the measures from the pooled totals (ratio of sums). The jackknife of BCa leaves
// out one problem's observed totals. Everything is NaN for no clusters. InvalidArgumentError
// for a cluster with n < 1, inconsistent counts, noise replicates of another n or hit_lift
// length, or resamples < 1.
absl::StatusOr<PairedLiftEstimates> BootstrapPairedLift(absl::Span<const ProblemCluster> clusters,
                                                        const BootstrapOptions& options);
// The same for clusters without measurement noise.
absl::StatusOr<PairedLiftEstimates> BootstrapPairedLift(absl::Span<const ClusterTotals> clusters,
                                                        const BootstrapOptions& options);

// The seed of one group's (or attempt's) random stream: splitmix64(seed XOR FNV-1a-64(label)).
// Independent of the other groups and of their order.
uint64_t GroupSeed(uint64_t seed, absl::string_view label);

// Percentile and BCa intervals from a bootstrap distribution, the statistic on the data and
// its leave-one-cluster-out (jackknife) values:
//   z0 = Phi^-1((#{b < value} + #{b <= value}) / 2B),
//   a  = sum (m - j_i)^3 / (6 (sum (m - j_i)^2)^1.5),  m = mean of the jackknife values j_i,
//   alpha_1,2 = Phi(z0 + (z0 + z) / (1 - a (z0 + z))) for z = Phi^-1(alpha), Phi^-1(1 - alpha),
// the interval being the type-7 quantiles at alpha_1 and alpha_2 (scipy.stats.bootstrap's
// method="BCa"). Falls back to the percentile interval, setting bca_fallback, when BCa is
// undefined: fewer than two clusters, a jackknife or bootstrap distribution constant to 1e-12
// of its magnitude (where z0 and a would be rounding noise), or z0, a or an alpha not finite.
BootstrapEstimate IntervalsFromDistribution(std::vector<double> distribution, double value,
                                            absl::Span<const double> jackknife, double confidence,
                                            bool keep_distribution);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_BOOTSTRAP_H_
