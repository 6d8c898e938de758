#include "libmkb/judge/measurement_plan.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libmkb/judge/seeds.h"
#include "libmkb/judge/timing_summary.h"
#include "libmkb/model/defaults.h"

namespace mkb {
namespace {

// A uniform integer in [0, n) from the OS entropy source (63-bit draws: the modulo bias is
// below 2^-40 for any n the judge uses).
absl::StatusOr<int> UniformBelow(int n) {
  absl::StatusOr<std::vector<uint64_t>> draw = DrawSeeds(1);
  if (!draw.ok()) return draw.status();
  return static_cast<int>((*draw)[0] % static_cast<uint64_t>(n));
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return SortedQuantile(v, q);
}

bool Converged(const std::vector<double>& samples, double target) {
  if (samples.size() < 10) return false;
  const v1::TimingSummary s = SummarizeSamples(samples, "", {}, false);
  return s.median_ms() > 0 && (s.ci95_high_ms() - s.ci95_low_ms()) / 2 <= target * s.median_ms();
}

}  // namespace

v1::JudgeConfig WithDefaults(const v1::JudgeConfig& config) {
  v1::JudgeConfig out = config;
  if (out.correctness_draws() <= 0) out.set_correctness_draws(5);
  if (out.warmup_calls() <= 0) out.set_warmup_calls(10);
  if (out.timing_draws() <= 0) out.set_timing_draws(50);
  if (out.recheck_draws() <= 0) out.set_recheck_draws(3);
  out.set_recheck_draws(std::min(out.recheck_draws(), out.timing_draws()));
  if (!out.has_fastest_recheck_draws()) out.set_fastest_recheck_draws(2);
  out.set_fastest_recheck_draws(std::clamp(out.fastest_recheck_draws(), 0, out.timing_draws()));
  if (out.calibration_calls() <= 0) out.set_calibration_calls(30);
  if (out.import_timeout_s() <= 0) out.set_import_timeout_s(300);
  if (out.call_timeout_s() <= 0) out.set_call_timeout_s(300);
  if (out.total_timeout_s() <= 0) out.set_total_timeout_s(1800);
  if (out.memory_limit_bytes() <= 0) out.set_memory_limit_bytes(int64_t{32} << 30);
  if (out.max_kernel_bytes() <= 0) out.set_max_kernel_bytes(kDefaultMaxKernelBytes);
  if (out.tail_bytes() <= 0) out.set_tail_bytes(8192);
  if (out.cpu_seconds_limit() <= 0) out.set_cpu_seconds_limit(3600);
  if (out.target_relative_ci() <= 0) out.set_target_relative_ci(0.01);
  if (out.max_timing_draws() <= 0) out.set_max_timing_draws(200);
  out.set_max_timing_draws(std::max(out.max_timing_draws(), out.timing_draws()));
  if (out.timing_budget_s() <= 0) out.set_timing_budget_s(60);
  if (out.library_share_limit() <= 0) out.set_library_share_limit(0.5);
  if (out.worker_uid() <= 0) out.set_worker_uid(65534);
  if (out.workspace_bytes() <= 0) out.set_workspace_bytes(int64_t{1} << 30);
  return out;
}

ClockBound ClockBoundOf(const v1::JudgeConfig& config, bool gpu) {
  // On a GPU: 0.5 ms + 25% over the channel's p90. Measured on the H200 (2026-12-01), honest
  // solutions spent up to 1.8x the calibrated channel cost (1.1-1.7 ms) outside the clock; on
  // an H100 (2026-12-06) 39 honest evaluations used at most 75% of this bound. On the CPU, where
  // timings only serve tests and a loaded machine preempts either process for milliseconds: 50 ms +
  // 50%. (A fraction of 1 could never trip: a call's gap is its round trip less a report of
  // no less than zero. Red team round 6: a thread of C callables finishing the output after
  // solve returned spent 100-200 ms of each 0.7 ms call outside the clock and passed.)
  ClockBound bound = gpu ? ClockBound{0.5, 0.25} : ClockBound{50.0, 0.5};
  if (config.clock_bound_fixed_ms() > 0) bound.fixed_ms = config.clock_bound_fixed_ms();
  if (config.clock_bound_fraction() > 0) bound.fraction = config.clock_bound_fraction();
  return bound;
}

std::string DefaultWorkload(bool gpu) { return gpu ? "full" : "small"; }

bool RequiresDsl(const v1::JudgeConfig& config, bool gpu) {
  return config.policy().has_require_dsl() ? config.policy().require_dsl() : gpu;
}

StrictSample AcceptStrictSample(double span_ms, double kernel_sum_ms, double round_trip_ms) {
  StrictSample s;
  s.span_ms = std::min(span_ms, round_trip_ms);
  s.kernel_sum_ms = std::min(kernel_sum_ms, s.span_ms);
  return s;
}

absl::StatusOr<MeasurementPlan> MeasurementPlan::Create(const v1::JudgeConfig& config, bool gpu) {
  MeasurementPlan plan;
  plan.config_ = WithDefaults(config);
  const v1::JudgeConfig& c = plan.config_;
  plan.strict_ = gpu && !c.disable_tracing();
  plan.require_dsl_ = RequiresDsl(c, gpu);
  if (gpu) {
    plan.kernel_thread_spin_us_ = std::max(
        0, c.has_kernel_thread_spin_us() ? c.kernel_thread_spin_us() : kDefaultKernelThreadSpinUs);
  }
  const bool knockout = gpu && plan.require_dsl_ && !c.disable_knockout();
  const int sequence = c.correctness_draws() + (knockout ? 1 : 0);
  absl::StatusOr<std::vector<uint64_t>> seeds =
      DrawSeeds(sequence + c.warmup_calls() + c.timing_draws());
  if (!seeds.ok()) return seeds.status();
  if (knockout) {
    absl::StatusOr<int> at = UniformBelow(sequence);
    if (!at.ok()) return at.status();
    plan.knockout_index_ = *at;
  }
  size_t next = 0;
  int ordinary = 0;
  for (int i = 0; i < sequence; ++i) {
    Draw d;
    d.seed = (*seeds)[next++];
    d.knockout = i == plan.knockout_index_;
    d.index = d.knockout ? -1 : ordinary++;
    plan.correctness_.push_back(d);
  }
  plan.warmup_.assign(seeds->begin() + next, seeds->begin() + next + c.warmup_calls());
  next += c.warmup_calls();
  plan.timing_.assign(seeds->begin() + next, seeds->end());
  return plan;
}

absl::StatusOr<uint64_t> MeasurementPlan::FreshStrictSeed() {
  if (next_fresh_ >= fresh_seeds_.size()) {
    absl::StatusOr<std::vector<uint64_t>> more = DrawSeeds(64);
    if (!more.ok()) return more.status();
    fresh_seeds_.insert(fresh_seeds_.end(), more->begin(), more->end());
  }
  return fresh_seeds_[next_fresh_++];
}

absl::StatusOr<std::optional<uint64_t>> MeasurementPlan::NextEagerStrictSeed(
    const std::vector<double>& eager_spans_ms, double elapsed_s) {
  if (!eager_strict_seeds_.empty() && StrictPassDone(eager_spans_ms, eager_spans_ms, elapsed_s))
    return std::nullopt;
  absl::StatusOr<uint64_t> seed = FreshStrictSeed();
  if (!seed.ok()) return seed.status();
  eager_strict_seeds_.push_back(*seed);
  return std::optional<uint64_t>(*seed);
}

absl::StatusOr<std::optional<uint64_t>> MeasurementPlan::NextKernelStrictSeed(
    const std::vector<double>& kernel_spans_ms, const std::vector<double>& eager_spans_ms,
    double elapsed_s) {
  // The eager series is complete by now (it is taken first): whether it converged, hit the cap
  // or ran out of budget, more of the kernel's samples change nothing about it. So the kernel's
  // series ends on its own terms. (Asking StrictPassDone here kept a kernel drawing until its own
  // budget ran out whenever the eager series had stopped at the budget unconverged: 9,279 draws
  // and 60 s of problem 72's evaluation on an H100, 2026-12-06, where 200 would do.)
  const bool done = elapsed_s > config_.timing_budget_s() || SeriesDone(kernel_spans_ms);
  if (kernel_spans_ms.size() >= eager_spans_ms.size() && done) return std::nullopt;
  if (next_kernel_strict_ < eager_strict_seeds_.size())
    return std::optional<uint64_t>(eager_strict_seeds_[next_kernel_strict_++]);
  if (done) return std::nullopt;
  absl::StatusOr<uint64_t> seed = FreshStrictSeed();
  if (!seed.ok()) return seed.status();
  return std::optional<uint64_t>(*seed);
}

bool MeasurementPlan::StrictPassDone(const std::vector<double>& kernel_spans_ms,
                                     const std::vector<double>& eager_spans_ms,
                                     double elapsed_s) const {
  // Each series on its own: the eager baseline's is taken first (before kernel.py exists), the
  // kernel's after; the pass ends when both are done, or at the budget.
  if (elapsed_s > config_.timing_budget_s()) return true;
  return SeriesDone(kernel_spans_ms) && SeriesDone(eager_spans_ms);
}

bool MeasurementPlan::SeriesDone(const std::vector<double>& spans_ms) const {
  const int n = static_cast<int>(spans_ms.size());
  if (n >= config_.max_timing_draws()) return true;
  return n >= config_.timing_draws() && Converged(spans_ms, config_.target_relative_ci());
}

absl::StatusOr<int> RecheckReservoir::Offer(int draw, double ms) {
  ++seen_;
  if (k_ > 0) {
    if (static_cast<int>(kept_.size()) < k_) {
      kept_.push_back(draw);
      return static_cast<int>(kept_.size()) - 1;
    }
    // Keep draw number `seen_` with probability k / seen_, in a uniformly chosen slot.
    absl::StatusOr<int> pick = UniformBelow(seen_);
    if (!pick.ok()) return pick.status();
    if (*pick < k_) {
      kept_[*pick] = draw;
      return *pick;
    }
  }
  // Not kept at random: one of the fastest so far, if it is (a time of its own, not a NaN).
  if (fastest_ <= 0 || !(ms >= 0)) return discard_slot();
  if (static_cast<int>(quick_.size()) < fastest_) {
    quick_.emplace_back(ms, draw);
    return k_ + static_cast<int>(quick_.size()) - 1;
  }
  size_t slowest = 0;
  for (size_t j = 1; j < quick_.size(); ++j) {
    if (quick_[j].first > quick_[slowest].first) slowest = j;
  }
  if (ms >= quick_[slowest].first) return discard_slot();
  quick_[slowest] = {ms, draw};
  return k_ + static_cast<int>(slowest);
}

std::vector<std::pair<int, int>> RecheckReservoir::Kept() const {
  std::vector<std::pair<int, int>> out;
  for (size_t slot = 0; slot < kept_.size(); ++slot)
    out.emplace_back(static_cast<int>(slot), kept_[slot]);
  for (size_t j = 0; j < quick_.size(); ++j)
    out.emplace_back(k_ + static_cast<int>(j), quick_[j].second);
  return out;
}

AcceptedTimes AcceptReportedTimes(const std::vector<double>& reported_ms,
                                  const std::vector<double>& round_trip_ms,
                                  const std::vector<double>& calibration_gap_ms,
                                  const ClockBound& bound, const WorkerCpu& cpu) {
  AcceptedTimes out;
  const size_t n = std::min(reported_ms.size(), round_trip_ms.size());
  out.calibration_gap_ms = Quantile(calibration_gap_ms, 0.5);
  const double calibration_high = Quantile(calibration_gap_ms, 0.9);
  std::vector<double> gaps;
  for (size_t i = 0; i < n; ++i) {
    const double rtt = round_trip_ms[i];
    if (!(reported_ms[i] > 0)) ++out.no_time;  // zero, negative or NaN
    double report = std::max(0.0, reported_ms[i]);
    if (report > rtt) {
      ++out.over_round_trip;
      report = rtt;
    }
    gaps.push_back(rtt - report);
    out.accepted_ms.push_back(report);
  }
  if (n == 0) return out;
  out.median_gap_ms = Quantile(gaps, 0.5);
  const double median_rtt =
      Quantile(std::vector<double>(round_trip_ms.begin(), round_trip_ms.begin() + n), 0.5);
  out.allowed_gap_ms = calibration_high + bound.fixed_ms + bound.fraction * median_rtt;
  const double median_report = Quantile(out.accepted_ms, 0.5);
  // Each CPU check: the medians over the timed and the calibration calls, and the bound.
  auto check = [&](const std::vector<double>& timed, const std::vector<double>& calibration,
                   double fixed_ms, double fraction, AcceptedTimes::CpuCheck* c) {
    if (timed.size() < n || calibration.empty()) return false;
    c->timed_ms = Quantile(std::vector<double>(timed.begin(), timed.begin() + n), 0.5);
    c->calibrated_ms = Quantile(calibration, 0.5);
    c->allowed_excess_ms = fixed_ms + fraction * median_report;
    return cpu.one_cpu && c->timed_ms - c->calibrated_ms > c->allowed_excess_ms;
  };
  // Held only on one CPU (the CPU judge). Elsewhere (a GPU's worker) the kernel thread's report
  // is the device's time, which its CPU time (a synchronisation that spins or sleeps) does not
  // bound, and an honest kernel's eager CPU ops may run on torch's intra-op threads, the other
  // threads (one on the CPU judge); the round trip bounds the wall time there.
  const bool kernel_over = check(cpu.kernel_thread_ms, cpu.kernel_thread_calibration_ms,
                                 bound.thread_fixed_ms, bound.thread_fraction, &out.kernel_thread);
  const bool other_over = check(cpu.other_threads_ms, cpu.other_threads_calibration_ms,
                                bound.thread_fixed_ms, bound.thread_fraction, &out.other_threads);
  const bool main_over = check(cpu.main_thread_ms, cpu.main_thread_calibration_ms,
                               bound.cpu_fixed_ms, bound.cpu_fraction, &out.main_thread) &&
                         bound.enforce_main_thread;
  const AcceptedTimes::CpuCheck* over = kernel_over  ? &out.kernel_thread
                                        : other_over ? &out.other_threads
                                        : main_over  ? &out.main_thread
                                                     : nullptr;
  const char* who = kernel_over  ? "the kernel's thread"
                    : other_over ? "the worker's other threads"
                                 : "the worker's main thread";
  std::string message;
  if (out.no_time > 0) {
    message = absl::StrFormat(
        "the worker reported %d of %d timed calls as taking no time, which no clock around a "
        "call of solve gives",
        out.no_time, static_cast<int>(n));
  } else if (out.over_round_trip > 0) {
    message = absl::StrFormat(
        "the worker reported %d of %d timed calls as longer than the host's round trip of the "
        "same call, which no honest clock does",
        out.over_round_trip, static_cast<int>(n));
  } else if (out.median_gap_ms > out.allowed_gap_ms) {
    message = absl::StrFormat(
        "the worker spent a median %.3f ms of each timed call outside its clock where the "
        "channel costs %.3f ms (bound %.3f ms): work done outside the timed window",
        out.median_gap_ms, out.calibration_gap_ms, out.allowed_gap_ms);
  } else if (over != nullptr) {
    message = absl::StrFormat(
        "%s used a median %.3f ms of CPU per timed call%s where a calibration call uses %.3f ms "
        "(bound: %.3f ms more): the clock reported less than the call used",
        who, over->timed_ms, kernel_over ? " outside its clock" : "", over->calibrated_ms,
        over->allowed_excess_ms);
  }
  if (!message.empty()) {
    v1::AuditFinding f;
    f.set_code("timing.inconsistent");
    f.set_severity(v1::SEVERITY_VIOLATION);
    f.set_phase(v1::PHASE_TIMING);
    f.set_message(message);
    f.set_evidence(
        over != nullptr
            ? absl::StrFormat("median report %.3f ms; CPU per call outside the clock, timed / "
                              "calibrated (ms): kernel thread %.3f / %.3f, main thread %.3f / "
                              "%.3f, other threads %.3f / %.3f",
                              median_report, out.kernel_thread.timed_ms,
                              out.kernel_thread.calibrated_ms, out.main_thread.timed_ms,
                              out.main_thread.calibrated_ms, out.other_threads.timed_ms,
                              out.other_threads.calibrated_ms)
            : absl::StrFormat(
                  "median round trip %.3f ms; bound = p90 channel cost %.3f ms + %.3f ms + "
                  "%.0f%%",
                  median_rtt, calibration_high, bound.fixed_ms, 100 * bound.fraction));
    out.finding = std::move(f);
  }
  return out;
}

}  // namespace mkb
