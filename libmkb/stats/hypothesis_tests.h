// Paired hypothesis tests: Wilcoxon signed-rank (Pratt zeros), the sign test and the exact
// McNemar test. All two-sided. Each returns its counts beside the p-value so that a report can
// show what the test saw.
#ifndef LIBMKB_STATS_HYPOTHESIS_TESTS_H_
#define LIBMKB_STATS_HYPOTHESIS_TESTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace mkb::stats {

enum class WilcoxonMethod {
  // scipy.stats.wilcoxon's "auto" (scipy 1.17): "exact" when there are at most 50 differences,
  // no ties among |d| and no zeros; else "permutation" when there are at most 13; else
  // "asymptotic".
  kAuto,
  // The exact null distribution of W+ given the observed ranks: every sign assignment of the
  // non-zero differences equally likely. Without ties or zeros this is the classical exact
  // distribution; with them it is what scipy's PermutationMethod enumerates. At most
  // kMaxExactWilcoxonN differences.
  kExact,
  // Normal approximation with Pratt's zero adjustment and the tie correction.
  kAsymptotic,
};

inline constexpr int kMaxExactWilcoxonN = 400;

struct WilcoxonOptions {
  WilcoxonMethod method = WilcoxonMethod::kAuto;
  // Continuity correction of the asymptotic z (scipy's `correction`, default off there too).
  bool continuity_correction = false;
};

struct WilcoxonTest {
  int n = 0;  // differences, zeros included
  int n_zero = 0;
  double w_plus = 0;  // sum of the (average) ranks of |d| over d > 0; zeros are ranked (Pratt)
  double w_minus = 0;
  double statistic = 0;  // min(w_plus, w_minus)
  double z = 0;  // (w_plus - mean) / sd (after the continuity correction); NaN unless asymptotic
  double p_value = 0;
  std::string method;  // "exact", "permutation" or "asymptotic"
};

// Wilcoxon signed-rank test of `d` against a symmetric distribution about 0, zero differences
// handled by Pratt's method (ranked with the others, then left out of W+ and W-; the normal
// approximation's mean and variance adjusted as in Cureton 1967). Matches
// scipy.stats.wilcoxon(d, zero_method="pratt", correction=..., method=...) in every method.
// Exact / permutation p = min(1, 2 min(P(W+ >= w), P(W+ <= w))). Asymptotic:
//   mean = (n(n+1) - z0(z0+1)) / 4,
//   var  = (n(n+1)(2n+1) - z0(z0+1)(2z0+1) - sum over tie groups of (t^3 - t) / 2) / 24,
// z0 = zeros, p = 2 Phi(-|z|); NaN when var = 0 (every difference zero). n = 0: NaN p.
// InvalidArgumentError for NaN or infinite differences, or kExact with too many of them.
absl::StatusOr<WilcoxonTest> WilcoxonSignedRank(absl::Span<const double> d,
                                                const WilcoxonOptions& options = {});

struct SignTest {
  int n_positive = 0;
  int n_negative = 0;
  int n_zero = 0;  // left out
  double p_value = 1;
};

// Two-sided exact binomial test of n_positive among n_positive + n_negative against 1/2 (equal
// to scipy.stats.binomtest(n_positive, n_positive + n_negative).pvalue); 1 when every
// difference is zero. NaN differences are an InvalidArgumentError.
absl::StatusOr<SignTest> SignTestOf(absl::Span<const double> d);

struct McNemarTest {
  int64_t n = 0;
  int64_t both_passed = 0;
  int64_t base_only = 0;   // b: first passed, second failed
  int64_t skill_only = 0;  // c: first failed, second passed
  int64_t both_failed = 0;
  double p_value = 1;
};

// Exact McNemar test on the discordant pairs: p = min(1, 2 P(X <= min(b, c))), X ~ Bin(b + c, 1/2);
// 1 when b + c = 0. Equals statsmodels' mcnemar([[both, b], [c, neither]], exact=True).
McNemarTest McNemarExact(int64_t both_passed, int64_t base_only, int64_t skill_only,
                         int64_t both_failed);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_HYPOTHESIS_TESTS_H_
