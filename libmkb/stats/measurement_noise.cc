#include "libmkb/stats/measurement_noise.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "libmkb/stats/bootstrap.h"
#include "libmkb/stats/detail/distributions.h"
#include "libmkb/stats/outcome.h"

namespace mkb::stats {
namespace {

std::vector<double> Finite(absl::Span<const double> samples) {
  std::vector<double> out;
  for (double x : samples) {
    if (std::isfinite(x)) out.push_back(x);
  }
  return out;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return detail::QuantileOfSorted(values, 0.5);
}

// Unbiased index in [0, k), as the bootstrap draws them.
size_t DrawIndex(std::mt19937_64& engine, uint64_t k) {
  const uint64_t threshold = (0 - k) % k;
  while (true) {
    const uint64_t x = engine();
    if (x >= threshold) return static_cast<size_t>(x % k);
  }
}

double ResampledMedian(const std::vector<double>& samples, std::mt19937_64& engine,
                       std::vector<double>& scratch) {
  scratch.resize(samples.size());
  for (double& x : scratch) x = samples[DrawIndex(engine, samples.size())];
  std::sort(scratch.begin(), scratch.end());
  return detail::QuantileOfSorted(scratch, 0.5);
}

}  // namespace

std::vector<double> SpeedupReplicates(double speedup, absl::Span<const double> kernel_ms,
                                      absl::Span<const double> eager_ms, int count, uint64_t seed) {
  const std::vector<double> kernel = Finite(kernel_ms);
  const std::vector<double> eager = Finite(eager_ms);
  if (!std::isfinite(speedup) || count < 1 || kernel.size() < 2 || eager.size() < 2) return {};
  const double kernel_median = Median(kernel);
  const double eager_median = Median(eager);
  if (!(kernel_median > 0) || !(eager_median > 0)) return {};
  std::mt19937_64 engine(seed);
  std::vector<double> scratch;
  std::vector<double> out;
  out.reserve(count);
  for (int m = 0; m < count; ++m) {
    const double k = ResampledMedian(kernel, engine, scratch);
    const double e = ResampledMedian(eager, engine, scratch);
    // A resampled median of positive samples is positive unless samples are 0: keep the point.
    out.push_back(k > 0 ? speedup * (e / eager_median) / (k / kernel_median) : speedup);
  }
  return out;
}

MeasurementNoise::MeasurementNoise(absl::Span<const AttemptRecord> attempts,
                                   const v1::StatsConfig& config) {
  int passed = 0;
  for (const AttemptRecord& attempt : attempts) {
    const v1::ArmResult& result = *attempt.result;
    if (!result.resolved() || result.skipped()) continue;
    const ArmOutcome outcome = OutcomeOf(result, config);
    if (!outcome.passed) continue;
    ++passed;
    if (config.point_speedups_only() || attempt.timing == nullptr) continue;
    const std::string label = absl::StrCat("timing|", attempt.model, "|", attempt.arm, "|",
                                           attempt.problem_slug, "|", attempt.replicate);
    std::vector<double> replicates = SpeedupReplicates(
        outcome.speedup, attempt.timing->kernel_samples_ms(), attempt.timing->eager_samples_ms(),
        config.timing_resamples(), GroupSeed(config.seed(), label));
    if (replicates.empty()) continue;
    replicates_[{attempt.model, attempt.arm, attempt.problem_slug, attempt.replicate}] =
        std::move(replicates);
  }
  const int with_samples = static_cast<int>(replicates_.size());
  summary_.set_included(with_samples > 0);
  summary_.set_passed_attempts(passed);
  summary_.set_with_samples(with_samples);
  summary_.set_timing_resamples(with_samples > 0 ? config.timing_resamples() : 0);
  const std::string tests =
      "The tests (Wilcoxon, sign, McNemar), the Wilson intervals of the standing table and every "
      "point estimate use the measured speedups as they are.";
  if (config.point_speedups_only()) {
    summary_.set_note(absl::StrCat(
        "Measurement noise is not included (point_speedups_only): every interval reflects the "
        "sampling of problems only. ",
        tests));
  } else if (passed == 0) {
    summary_.set_note("No attempt passed: there are no speedups whose measurement noise to carry.");
  } else if (with_samples == 0) {
    summary_.set_note(absl::StrCat(
        "Measurement noise is not included: none of the ", passed,
        " passed attempts has timing samples stored (e.g. imported from the published harness), "
        "so every interval reflects the sampling of problems only, not the judge's timing noise. ",
        tests));
  } else {
    summary_.set_note(absl::StrCat(
        "Bootstrap intervals include measurement noise: the timing samples of ", with_samples,
        " of ", passed, " passed attempts are resampled inside the problem bootstrap (",
        config.timing_resamples(), " speedup replicates each)",
        with_samples < passed ? "; the others enter with their point speedups. " : ". ",
        "This is the spread of the samples within each evaluation, not drift between evaluations "
        "(load, clocks), which on a shared machine can be larger. ",
        tests));
  }
}

const std::vector<double>* MeasurementNoise::Find(const v1::CellReplicate& cell, Role role) const {
  auto it = replicates_.find(
      {cell.model(), ArmNameOf(cell, role), cell.problem_slug(), cell.replicate()});
  return it == replicates_.end() ? nullptr : &it->second;
}

void MeasurementNoise::Attach(std::vector<Comparison>& comparisons) const {
  for (Comparison& c : comparisons) {
    c.base_noise = Find(*c.cell, Role::kBase);
    c.skill_noise = c.skill_skipped ? c.base_noise : Find(*c.cell, Role::kSkill);
    c.control_noise = c.has_control ? Find(*c.cell, Role::kControl) : nullptr;
  }
}

}  // namespace mkb::stats
