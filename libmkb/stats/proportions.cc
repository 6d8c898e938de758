#include "libmkb/stats/proportions.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "libmkb/stats/detail/distributions.h"

namespace mkb::stats {

ProportionInterval WilsonInterval(int64_t k, int64_t n, double confidence) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (n <= 0) return {kNaN, kNaN, kNaN};
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(k) / nn;
  const double z = detail::NormalQuantile(1 - (1 - confidence) / 2);
  const double z2 = z * z;
  const double denominator = 1 + z2 / nn;
  const double centre = (p + z2 / (2 * nn)) / denominator;
  const double half = z / denominator * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  return {p, std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace mkb::stats
