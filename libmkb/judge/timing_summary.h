// Summaries of timing samples: median with a distribution-free 95% interval, spread, and the
// ratio of two medians.
#ifndef LIBMKB_JUDGE_TIMING_SUMMARY_H_
#define LIBMKB_JUDGE_TIMING_SUMMARY_H_

#include <string>
#include <vector>

#include "mkb/v1/verdict.pb.h"

namespace mkb {

// Median, mean, stdev, CV, min, max, 10th / 90th percentiles, and the 95% confidence interval
// of the median from order statistics (binomial ranks n/2 -/+ 1.96 sqrt(n)/2). Samples in ms.
// `throttled` (optional, same length) marks samples taken while the GPU reported throttling.
v1::TimingSummary SummarizeSamples(const std::vector<double>& samples_ms, const std::string& method,
                                   const std::vector<bool>& throttled = {},
                                   bool keep_samples = true);

// Linear-interpolated quantile of sorted values, q in [0, 1].
double SortedQuantile(const std::vector<double>& sorted, double q);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_TIMING_SUMMARY_H_
