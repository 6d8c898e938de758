#include "libmkb/stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/stats/detail/distributions.h"

namespace mkb::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Unbiased index in [0, k) from a 64-bit engine.
uint64_t DrawIndex(std::mt19937_64& engine, uint64_t k) {
  const uint64_t threshold = (0 - k) % k;  // 2^64 mod k
  while (true) {
    const uint64_t x = engine();
    if (x >= threshold) return x % k;
  }
}

struct Totals {
  double sum_d = 0;
  int64_t n = 0;
  int64_t n_help = 0;
  int64_t n_harm = 0;
  std::vector<int64_t> hit_lift;

  explicit Totals(size_t thresholds) : hit_lift(thresholds, 0) {}
  void Add(const ClusterTotals& c, int64_t sign = 1) {
    sum_d += static_cast<double>(sign) * c.sum_d;
    n += sign * c.n;
    n_help += sign * c.n_help;
    n_harm += sign * c.n_harm;
    for (size_t i = 0; i < hit_lift.size(); ++i) hit_lift[i] += sign * c.hit_lift[i];
  }
  double DeltaGm() const { return std::exp(sum_d / static_cast<double>(n)) - 1; }
  double HelpRate() const { return static_cast<double>(n_help) / static_cast<double>(n); }
  double HarmRate() const { return static_cast<double>(n_harm) / static_cast<double>(n); }
  double RAtLift(size_t i) const {
    return static_cast<double>(hit_lift[i]) / static_cast<double>(n);
  }
  double SLift() const {
    double sum = 0;
    for (size_t i = 0; i < hit_lift.size(); ++i) sum += RAtLift(i);
    return 100 * sum / static_cast<double>(hit_lift.size());
  }
};

absl::Status CheckCluster(const ClusterTotals& c, const std::string& path, int64_t n,
                          size_t thresholds) {
  if (c.n < 1 || c.n_help < 0 || c.n_harm < 0 || c.n_help + c.n_harm > c.n ||
      !std::isfinite(c.sum_d)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": needs n >= 1, 0 <= n_help + n_harm <= n and a finite sum_d"));
  }
  if (n > 0 && c.n != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": a noise replicate must hold the cluster's n = ", n, ", got ", c.n));
  }
  if (c.hit_lift.size() != thresholds) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": hit_lift has ", c.hit_lift.size(),
                                                   " thresholds, the first cluster ", thresholds));
  }
  for (int64_t h : c.hit_lift) {
    if (h < -c.n || h > c.n) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": hit_lift must be within [-n, n]"));
    }
  }
  return absl::OkStatus();
}

// Whether the values agree to 1e-12 of their magnitude (or of 1).
bool NearlyConstant(absl::Span<const double> values) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double scale = std::max({1.0, std::fabs(*lo), std::fabs(*hi)});
  return *hi - *lo <= 1e-12 * scale;
}

BootstrapEstimate AllNaN() {
  BootstrapEstimate e;
  e.value = e.se = e.percentile_low = e.percentile_high = e.bca_low = e.bca_high = kNaN;
  return e;
}

}  // namespace

BootstrapEstimate IntervalsFromDistribution(std::vector<double> distribution, double value,
                                            absl::Span<const double> jackknife, double confidence,
                                            bool keep_distribution) {
  BootstrapEstimate out;
  out.value = value;
  const double b = static_cast<double>(distribution.size());
  if (distribution.empty()) return AllNaN();

  double mean = 0;
  for (double x : distribution) mean += x;
  mean /= b;
  double ss = 0;
  for (double x : distribution) ss += (x - mean) * (x - mean);
  out.se = distribution.size() > 1 ? std::sqrt(ss / (b - 1)) : kNaN;

  int64_t below = 0;
  int64_t at_most = 0;
  for (double x : distribution) {
    below += x < value;
    at_most += x <= value;
  }
  if (keep_distribution) out.distribution = distribution;
  std::sort(distribution.begin(), distribution.end());

  const double alpha = (1 - confidence) / 2;
  out.percentile_low = detail::QuantileOfSorted(distribution, alpha);
  out.percentile_high = detail::QuantileOfSorted(distribution, 1 - alpha);

  // BCa, written as scipy's _bca_interval computes it. A jackknife or bootstrap distribution
  // that is constant up to rounding carries no skewness or bias to correct: its a and z0 would
  // be rounding noise, so BCa is left undefined there.
  double a = kNaN;
  if (jackknife.size() >= 2 && !NearlyConstant(jackknife) && !NearlyConstant(distribution)) {
    const double nj = static_cast<double>(jackknife.size());
    double jmean = 0;
    for (double j : jackknife) jmean += j;
    jmean /= nj;
    double num = 0;
    double den = 0;
    for (double j : jackknife) {
      const double u = (nj - 1) * (jmean - j);
      num += u * u * u;
      den += u * u;
    }
    num /= nj * nj * nj;
    den /= nj * nj;
    a = 1.0 / 6 * num / std::pow(den, 1.5);
  }
  const double z0 = detail::NormalQuantile(static_cast<double>(below + at_most) / (2 * b));
  const double z_alpha = detail::NormalQuantile(alpha);
  const double num1 = z0 + z_alpha;
  const double alpha_1 = detail::NormalCdf(z0 + num1 / (1 - a * num1));
  const double num2 = z0 - z_alpha;
  const double alpha_2 = detail::NormalCdf(z0 + num2 / (1 - a * num2));
  if (std::isfinite(z0) && std::isfinite(a) && std::isfinite(alpha_1) && std::isfinite(alpha_2)) {
    out.bca_low = detail::QuantileOfSorted(distribution, alpha_1);
    out.bca_high = detail::QuantileOfSorted(distribution, alpha_2);
  } else {
    out.bca_fallback = true;
    out.bca_low = out.percentile_low;
    out.bca_high = out.percentile_high;
  }
  return out;
}

absl::StatusOr<PairedLiftEstimates> BootstrapPairedLift(absl::Span<const ProblemCluster> clusters,
                                                        const BootstrapOptions& options) {
  if (options.resamples < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("resamples: must be >= 1, got ", options.resamples));
  }
  if (!(options.confidence > 0 && options.confidence < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence: must be in (0, 1), got ", options.confidence));
  }
  const size_t thresholds = clusters.empty() ? 0 : clusters[0].observed.hit_lift.size();
  Totals all(thresholds);
  for (size_t i = 0; i < clusters.size(); ++i) {
    const std::string path = absl::StrCat("clusters[", i, "]");
    const ClusterTotals& c = clusters[i].observed;
    MKB_RETURN_IF_ERROR(CheckCluster(c, path, 0, thresholds));
    for (size_t m = 0; m < clusters[i].noise.size(); ++m) {
      MKB_RETURN_IF_ERROR(CheckCluster(clusters[i].noise[m], absl::StrCat(path, ".noise[", m, "]"),
                                       c.n, thresholds));
    }
    all.Add(c);
  }
  PairedLiftEstimates out;
  out.clusters = static_cast<int>(clusters.size());
  out.comparisons = all.n;
  if (clusters.empty()) {
    out.delta_gm = out.help_rate = out.harm_rate = out.s_lift = AllNaN();
    return out;
  }

  const uint64_t k = clusters.size();
  std::vector<double> delta_gm(options.resamples);
  std::vector<double> help(options.resamples);
  std::vector<double> harm(options.resamples);
  std::vector<std::vector<double>> r_at(thresholds, std::vector<double>(options.resamples));
  std::vector<double> s_lift(options.resamples);
  std::mt19937_64 engine(options.seed);
  for (int r = 0; r < options.resamples; ++r) {
    Totals t(thresholds);
    for (uint64_t i = 0; i < k; ++i) {
      const ProblemCluster& drawn = clusters[DrawIndex(engine, k)];
      t.Add(drawn.noise.empty() ? drawn.observed
                                : drawn.noise[DrawIndex(engine, drawn.noise.size())]);
    }
    delta_gm[r] = t.DeltaGm();
    help[r] = t.HelpRate();
    harm[r] = t.HarmRate();
    for (size_t j = 0; j < thresholds; ++j) r_at[j][r] = t.RAtLift(j);
    s_lift[r] = thresholds > 0 ? t.SLift() : kNaN;
  }

  std::vector<double> jack_gm, jack_help, jack_harm, jack_s;
  std::vector<std::vector<double>> jack_r_at(thresholds);
  if (k >= 2) {
    for (const ProblemCluster& c : clusters) {
      Totals t = all;
      t.Add(c.observed, -1);
      jack_gm.push_back(t.DeltaGm());
      jack_help.push_back(t.HelpRate());
      jack_harm.push_back(t.HarmRate());
      for (size_t j = 0; j < thresholds; ++j) jack_r_at[j].push_back(t.RAtLift(j));
      if (thresholds > 0) jack_s.push_back(t.SLift());
    }
  }
  const bool keep = options.keep_distributions;
  out.delta_gm = IntervalsFromDistribution(std::move(delta_gm), all.DeltaGm(), jack_gm,
                                           options.confidence, keep);
  out.help_rate = IntervalsFromDistribution(std::move(help), all.HelpRate(), jack_help,
                                            options.confidence, keep);
  out.harm_rate = IntervalsFromDistribution(std::move(harm), all.HarmRate(), jack_harm,
                                            options.confidence, keep);
  for (size_t j = 0; j < thresholds; ++j) {
    out.r_at_lift.push_back(IntervalsFromDistribution(std::move(r_at[j]), all.RAtLift(j),
                                                      jack_r_at[j], options.confidence, keep));
  }
  out.s_lift = thresholds > 0 ? IntervalsFromDistribution(std::move(s_lift), all.SLift(), jack_s,
                                                          options.confidence, keep)
                              : AllNaN();
  return out;
}

absl::StatusOr<PairedLiftEstimates> BootstrapPairedLift(absl::Span<const ClusterTotals> clusters,
                                                        const BootstrapOptions& options) {
  std::vector<ProblemCluster> wrapped;
  wrapped.reserve(clusters.size());
  for (const ClusterTotals& c : clusters) wrapped.push_back(ProblemCluster{c, {}});
  return BootstrapPairedLift(absl::Span<const ProblemCluster>(wrapped), options);
}

uint64_t GroupSeed(uint64_t seed, absl::string_view label) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (unsigned char ch : label) {
    hash ^= ch;
    hash *= 0x100000001b3ULL;
  }
  uint64_t z = seed ^ hash;  // splitmix64 finaliser
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace mkb::stats
