// Adjusted p-values for families of tests. NaN p-values (tests that could not be run) are left
// out of the family and stay NaN; m counts only the others.
#ifndef LIBMKB_STATS_MULTIPLE_COMPARISONS_H_
#define LIBMKB_STATS_MULTIPLE_COMPARISONS_H_

#include <vector>

#include "absl/types/span.h"

namespace mkb::stats {

// Holm's step-down adjustment (family-wise error): with p sorted ascending,
//   adj_(i) = min(1, max over j <= i of (m - j + 1) p_(j)),  i = 1..m.
// Equals statsmodels' multipletests(p, method="holm")[1]. Returned in the input's order.
std::vector<double> HolmAdjust(absl::Span<const double> p);

// Benjamini-Hochberg step-up adjustment (false discovery rate): with p sorted ascending,
//   adj_(i) = min(1, min over j >= i of m p_(j) / j).
// Equals statsmodels' multipletests(p, method="fdr_bh")[1].
std::vector<double> BenjaminiHochbergAdjust(absl::Span<const double> p);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_MULTIPLE_COMPARISONS_H_
