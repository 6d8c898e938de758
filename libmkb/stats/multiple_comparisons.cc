#include "libmkb/stats/multiple_comparisons.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace mkb::stats {
namespace {

// Indices of the non-NaN p-values, sorted by p (ties in input order).
std::vector<size_t> SortedDefined(absl::Span<const double> p) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p.size(); ++i) {
    if (!std::isnan(p[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  return order;
}

}  // namespace

std::vector<double> HolmAdjust(absl::Span<const double> p) {
  std::vector<double> out(p.size(), std::numeric_limits<double>::quiet_NaN());
  const std::vector<size_t> order = SortedDefined(p);
  const double m = static_cast<double>(order.size());
  double running = 0;
  for (size_t j = 0; j < order.size(); ++j) {
    running = std::max(running, (m - static_cast<double>(j)) * p[order[j]]);
    out[order[j]] = std::min(1.0, running);
  }
  return out;
}

std::vector<double> BenjaminiHochbergAdjust(absl::Span<const double> p) {
  std::vector<double> out(p.size(), std::numeric_limits<double>::quiet_NaN());
  const std::vector<size_t> order = SortedDefined(p);
  const double m = static_cast<double>(order.size());
  double running = std::numeric_limits<double>::infinity();
  for (size_t j = order.size(); j-- > 0;) {
    running = std::min(running, m / static_cast<double>(j + 1) * p[order[j]]);
    out[order[j]] = std::min(1.0, running);
  }
  return out;
}

}  // namespace mkb::stats
