// Distribution functions the statistics need: the standard normal, the symmetric binomial and
// sample quantiles. Internal to mkb::stats; the public headers give the tests built on them.
#ifndef LIBMKB_STATS_DETAIL_DISTRIBUTIONS_H_
#define LIBMKB_STATS_DETAIL_DISTRIBUTIONS_H_

#include <cstdint>
#include <vector>

namespace mkb::stats::detail {

// P(Z <= x) for a standard normal Z.
double NormalCdf(double x);

// The x with NormalCdf(x) = p (Wichura's AS 241, about 1e-16 relative error); -inf at 0, +inf
// at 1, NaN outside [0, 1].
double NormalQuantile(double p);

// P(X <= k) for X ~ Binomial(n, 1/2); 0 for k < 0, 1 for k >= n.
double BinomialHalfCdf(int64_t k, int64_t n);

// The two-sided exact binomial test of k successes in n trials against p = 1/2:
// min(1, 2 P(X <= min(k, n - k))). 1 when n = 0 (no evidence either way).
double BinomialHalfTwoSidedP(int64_t k, int64_t n);

// The q-quantile of `sorted` (ascending, non-empty) by linear interpolation between order
// statistics (Hyndman-Fan type 7: numpy's and scipy.stats.quantile's default). NaN for a NaN q.
double QuantileOfSorted(const std::vector<double>& sorted, double q);

}  // namespace mkb::stats::detail

#endif  // LIBMKB_STATS_DETAIL_DISTRIBUTIONS_H_
