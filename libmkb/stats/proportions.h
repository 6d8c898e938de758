// Confidence intervals of a binomial proportion.
#ifndef LIBMKB_STATS_PROPORTIONS_H_
#define LIBMKB_STATS_PROPORTIONS_H_

#include <cstdint>

namespace mkb::stats {

struct ProportionInterval {
  double rate = 0;  // k / n; NaN when n = 0
  double low = 0;
  double high = 0;
};

// The Wilson score interval of k successes in n trials at two-sided `confidence` (in (0, 1)):
// with p = k/n and z the (1 + confidence)/2 normal quantile,
//   centre = (p + z^2 / 2n) / (1 + z^2 / n),
//   half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / 4n^2).
// Equals statsmodels' proportion_confint(k, n, 1 - confidence, method="wilson"). All NaN when
// n = 0.
ProportionInterval WilsonInterval(int64_t k, int64_t n, double confidence);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_PROPORTIONS_H_
