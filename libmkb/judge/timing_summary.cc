#include "libmkb/judge/timing_summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mkb {

double SortedQuantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] * (1 - fraction) + sorted[above] * fraction;
}

v1::TimingSummary SummarizeSamples(const std::vector<double>& samples_ms, const std::string& method,
                                   const std::vector<bool>& throttled, bool keep_samples) {
  v1::TimingSummary summary;
  summary.set_method(method);
  std::vector<double> values;
  for (double v : samples_ms) {
    if (std::isfinite(v)) values.push_back(v);
  }
  summary.set_samples(static_cast<int32_t>(values.size()));
  int throttled_count = 0;
  for (bool t : throttled) throttled_count += t;
  summary.set_throttled_samples(throttled_count);
  if (keep_samples) {
    for (double v : samples_ms) summary.add_samples_ms(v);
  }
  if (values.empty()) return summary;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());
  const double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  double squares = 0;
  for (double v : sorted) squares += (v - mean) * (v - mean);
  const double stdev = sorted.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  summary.set_median_ms(SortedQuantile(sorted, 0.5));
  summary.set_mean_ms(mean);
  summary.set_stdev_ms(stdev);
  summary.set_cv(mean > 0 ? stdev / mean : 0.0);
  summary.set_min_ms(sorted.front());
  summary.set_max_ms(sorted.back());
  summary.set_p10_ms(SortedQuantile(sorted, 0.1));
  summary.set_p90_ms(SortedQuantile(sorted, 0.9));
  // Ranks (1-based) bracketing the median with ~95% coverage: n/2 -/+ 1.96 sqrt(n)/2.
  const double half_width = 1.96 * std::sqrt(n) / 2;
  const long low_rank = std::max(1L, static_cast<long>(std::floor(n / 2 - half_width)));
  const long high_rank =
      std::min(static_cast<long>(n), static_cast<long>(std::ceil(n / 2 + half_width + 1)));
  summary.set_ci95_low_ms(sorted[static_cast<size_t>(low_rank - 1)]);
  summary.set_ci95_high_ms(sorted[static_cast<size_t>(high_rank - 1)]);
  return summary;
}

}  // namespace mkb
