#include "libmkb/stats/hypothesis_tests.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libmkb/stats/detail/distributions.h"

namespace mkb::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

absl::Status CheckFinite(absl::Span<const double> d) {
  for (size_t i = 0; i < d.size(); ++i) {
    if (!std::isfinite(d[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("d[", i, "]: must be a finite number, got ", d[i]));
    }
  }
  return absl::OkStatus();
}

// Average ranks (1-based) of `values`, and the sizes of the groups of tied values in ascending
// order of value.
void AverageRanks(const std::vector<double>& values, std::vector<double>* ranks,
                  std::vector<int>* tie_groups) {
  const size_t n = values.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  ranks->assign(n, 0);
  tie_groups->clear();
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && values[order[j + 1]] == values[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) (*ranks)[order[k]] = rank;
    tie_groups->push_back(static_cast<int>(j - i + 1));
    i = j + 1;
  }
}

// Two-sided p of the sign-flip distribution of W+: each non-zero difference's rank counts
// toward W+ with probability 1/2. Ranks are multiples of 1/2, so doubled they are integers.
double ExactSignFlipP(const std::vector<double>& nonzero_ranks, double w_plus) {
  std::vector<double> probability(1, 1.0);  // probability[s]: P(2 W+ = s)
  for (double rank : nonzero_ranks) {
    const size_t r2 = static_cast<size_t>(std::llround(2 * rank));
    std::vector<double> next(probability.size() + r2, 0.0);
    for (size_t s = 0; s < probability.size(); ++s) {
      next[s] += 0.5 * probability[s];
      next[s + r2] += 0.5 * probability[s];
    }
    probability.swap(next);
  }
  const size_t observed = static_cast<size_t>(std::llround(2 * w_plus));
  double at_most = 0;
  double at_least = 0;
  for (size_t s = 0; s < probability.size(); ++s) {
    if (s <= observed) at_most += probability[s];
    if (s >= observed) at_least += probability[s];
  }
  return std::clamp(2 * std::min(at_most, at_least), 0.0, 1.0);
}

}  // namespace

absl::StatusOr<WilcoxonTest> WilcoxonSignedRank(absl::Span<const double> d,
                                                const WilcoxonOptions& options) {
  if (auto status = CheckFinite(d); !status.ok()) return status;
  WilcoxonTest out;
  out.n = static_cast<int>(d.size());
  out.z = kNaN;
  if (d.empty()) {
    out.statistic = kNaN;
    out.p_value = kNaN;
    return out;
  }
  std::vector<double> magnitude(d.size());
  for (size_t i = 0; i < d.size(); ++i) magnitude[i] = std::fabs(d[i]);
  std::vector<double> ranks;
  std::vector<int> tie_groups;
  AverageRanks(magnitude, &ranks, &tie_groups);

  std::vector<double> nonzero_ranks;
  bool has_ties = false;
  for (int t : tie_groups) has_ties |= t > 1;
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] > 0) out.w_plus += ranks[i];
    if (d[i] < 0) out.w_minus += ranks[i];
    if (d[i] == 0) {
      ++out.n_zero;
    } else {
      nonzero_ranks.push_back(ranks[i]);
    }
  }
  out.statistic = std::min(out.w_plus, out.w_minus);

  WilcoxonMethod method = options.method;
  if (method == WilcoxonMethod::kAuto) {
    if (out.n > 50) {
      method = WilcoxonMethod::kAsymptotic;
    } else if (!has_ties && out.n_zero == 0) {
      method = WilcoxonMethod::kExact;
    } else {
      method = out.n <= 13 ? WilcoxonMethod::kExact : WilcoxonMethod::kAsymptotic;
    }
  }

  if (method == WilcoxonMethod::kExact) {
    if (static_cast<int>(nonzero_ranks.size()) > kMaxExactWilcoxonN) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the exact Wilcoxon test takes at most ", kMaxExactWilcoxonN,
          " non-zero differences, got ", nonzero_ranks.size(), "; use the asymptotic method"));
    }
    out.method = has_ties || out.n_zero > 0 ? "permutation" : "exact";
    out.p_value = ExactSignFlipP(nonzero_ranks, out.w_plus);
    return out;
  }

  out.method = "asymptotic";
  const double n = out.n;
  const double z0 = out.n_zero;
  const double mean = n * (n + 1) * 0.25 - z0 * (z0 + 1) * 0.25;
  double variance = n * (n + 1) * (2 * n + 1) - z0 * (z0 + 1) * (2 * z0 + 1);
  // The zeros, when present, are the first (smallest) tie group; Pratt leaves them out of the
  // tie correction.
  double tie_correction = 0;
  for (size_t g = out.n_zero > 0 ? 1 : 0; g < tie_groups.size(); ++g) {
    const double t = tie_groups[g];
    tie_correction += t * t * t - t;
  }
  const double sd = std::sqrt((variance - tie_correction / 2) / 24);
  if (!(sd > 0)) {
    out.p_value = kNaN;
    return out;
  }
  double z = (out.w_plus - mean) / sd;
  if (options.continuity_correction && z != 0) z -= (z > 0 ? 0.5 : -0.5) / sd;
  out.z = z;
  out.p_value = 2 * detail::NormalCdf(-std::fabs(z));
  return out;
}

absl::StatusOr<SignTest> SignTestOf(absl::Span<const double> d) {
  SignTest out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (std::isnan(d[i]))
      return absl::InvalidArgumentError(absl::StrCat("d[", i, "]: must not be NaN"));
    if (d[i] > 0) {
      ++out.n_positive;
    } else if (d[i] < 0) {
      ++out.n_negative;
    } else {
      ++out.n_zero;
    }
  }
  out.p_value = detail::BinomialHalfTwoSidedP(out.n_positive, out.n_positive + out.n_negative);
  return out;
}

McNemarTest McNemarExact(int64_t both_passed, int64_t base_only, int64_t skill_only,
                         int64_t both_failed) {
  McNemarTest out;
  out.both_passed = both_passed;
  out.base_only = base_only;
  out.skill_only = skill_only;
  out.both_failed = both_failed;
  out.n = both_passed + base_only + skill_only + both_failed;
  out.p_value =
      detail::BinomialHalfTwoSidedP(std::min(base_only, skill_only), base_only + skill_only);
  return out;
}

}  // namespace mkb::stats
