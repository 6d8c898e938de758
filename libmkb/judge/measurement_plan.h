// The judge's measurement policy (SPEC §3, docs/judge.md "One evaluation"): every default of
// JudgeConfig, the seeds and order of one evaluation's calls, when the strict timing pass stops,
// which timing draws are re-checked, and which of the worker's reported times are accepted.
// The judge host carries the plan out and reports samples; it decides none of this.
#ifndef LIBMKB_JUDGE_MEASUREMENT_PLAN_H_
#define LIBMKB_JUDGE_MEASUREMENT_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mkb/v1/judge.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

// Every JudgeConfig default, in one place: 5 correctness draws, 10 warm-up calls, 50 timing
// draws, 3 re-checks at random and 2 of the fastest draws, 30 calibration calls, timeouts 300 / 300
// / 1800 s, 32 GiB, 300,000 bytes, an 8 KiB tail, 3600 CPU-seconds, a 1% CI target for the strict
// pass within 200 samples and 60 s, a 50% library share, and the worker's uid 65534 (nobody) when
// the judge is root. The clock bound's defaults depend on the device (ClockBoundOf).
v1::JudgeConfig WithDefaults(const v1::JudgeConfig& config);

// How much of a timed call's round trip may lie outside the worker's clock: the calibrated
// channel cost (its 90th percentile over the calibration calls) plus `fixed_ms` plus `fraction`
// of the host's median round trip. (Twice the channel cost until 2026-12-06: on an H100, 39
// honest evaluations of the shipped solutions then used at most 75% of this bound, and the
// doubled one let a clock rewritten through raw memory hide about 3 ms of work per call.)
struct ClockBound {
  double fixed_ms = 0.5;
  double fraction = 0.25;
  // The CPU checks: how much more CPU time a timed call may use than a calibration call, as
  // `fixed` plus `fraction` of the median report. The kernel's thread (outside its clock) and the
  // worker's other threads (all of it: none of them runs kernel.py's code) are held to 0.05 ms +
  // 5%: on an idle machine round 9's use-after-free clock hides 0.09-0.13 ms of work per call,
  // which 0.1 ms let pass 4 of 6 times, and honest kernels read at most 0.023 ms over under heavy
  // load. The main thread, which handles the call's inputs and outputs, varies with a kernel's
  // outputs, the garbage it leaves and the machine's load (honest kernels 0.04 ms over
  // calibration on an idle machine, up to 0.47-0.70 ms under heavy load), so it is held to 1 ms
  // + 25%. That bounds work a kernel moves onto the main thread without closing the class: red
  // team round 11's pending call, the main thread running the answer before the export, costs
  // 0.5-0.9 ms on problem 28's small workload and passes (6-20x); a bound of 0.4 ms + 10%
  // stopped it and failed three honest evaluations.
  double cpu_fixed_ms = 1.0;  // the main thread
  double cpu_fraction = 0.25;
  bool enforce_main_thread = true;
  double thread_fixed_ms = 0.05;  // the kernel's thread, the other threads
  double thread_fraction = 0.05;
};
// The config's bound, or the device's default: 0.5 ms + 25% on a GPU, 50 ms + 50% on the CPU.
ClockBound ClockBoundOf(const v1::JudgeConfig& config, bool gpu);

// The workload an evaluation judges when its request names none: "full" on a GPU, "small" on
// the CPU (whose timings serve tests).
std::string DefaultWorkload(bool gpu);

// The GPU worker's kernel thread: how long it polls for its next call before it sleeps, in us.
inline constexpr int kDefaultKernelThreadSpinUs = 0;

// Whether the DSL rule applies (SPEC §2): the policy's require_dsl where it sets one, else on a
// GPU only (the CPU judge has no launch monitor and times eager kernels for tests).
bool RequiresDsl(const v1::JudgeConfig& config, bool gpu);

// One strict-pass sample as the verdict takes it: a GPU span no longer than the host's round
// trip of the same call (a span cannot outlast it), and a kernel sum no longer than the span.
struct StrictSample {
  double span_ms = 0;
  double kernel_sum_ms = 0;
};
StrictSample AcceptStrictSample(double span_ms, double kernel_sum_ms, double round_trip_ms);

// The seeds and order of one evaluation. Seeds come from the OS entropy source and never leave
// the host.
class MeasurementPlan {
 public:
  // `gpu`: the judge runs on CUDA (strict passes exist only there, and the knockout draw only
  // when the DSL rule applies: RequiresDsl). `config` is taken through WithDefaults.
  static absl::StatusOr<MeasurementPlan> Create(const v1::JudgeConfig& config, bool gpu);

  const v1::JudgeConfig& config() const { return config_; }
  bool require_dsl() const { return require_dsl_; }

  // The correctness sequence: correctness_draws ordinary draws, and on a GPU one knockout draw
  // at a position drawn in secret (knockout_index, or -1). The worker cannot tell them apart:
  // same request, fresh inputs; only the launch monitor knows.
  struct Draw {
    uint64_t seed = 0;
    int index = 0;  // among the ordinary draws (the knockout has index -1)
    bool knockout = false;
  };
  const std::vector<Draw>& correctness_sequence() const { return correctness_; }
  int knockout_index() const { return knockout_index_; }

  // The parity passes (the published method): warm-up calls, then timed draws, with the same
  // seeds for the kernel and for the eager baseline.
  const std::vector<uint64_t>& warmup_seeds() const { return warmup_; }
  const std::vector<uint64_t>& timing_seeds() const { return timing_; }
  int calibration_calls() const { return config_.calibration_calls(); }
  int recheck_draws() const { return config_.recheck_draws(); }
  int fastest_recheck_draws() const { return config_.fastest_recheck_draws(); }
  // How long the worker's kernel thread polls for its next call before it sleeps (KernelThread's
  // spin_us): the config's kernel_thread_spin_us where it sets one, else
  // kDefaultKernelThreadSpinUs, on a GPU; on the CPU 0 whatever the config says (the CPU judge's
  // worker is on one CPU, which a polling thread would take from the thread reading the next call's
  // inputs).
  int kernel_thread_spin_us() const { return kernel_thread_spin_us_; }

  // The strict pass (CUPTI spans, L2 flush, NVML): whether there is one, and its two series,
  // the eager baseline's first (before kernel.py exists), then the kernel's. A series is done
  // after max_timing_draws samples, or after timing_draws once its median's 95% CI is within
  // target_relative_ci; the pass is done when both are, or after timing_budget_s of a series'
  // sampling (`elapsed_s`).
  bool strict_pass() const { return strict_; }
  bool StrictPassDone(const std::vector<double>& kernel_spans_ms,
                      const std::vector<double>& eager_spans_ms, double elapsed_s) const;
  // The eager series' next seed, or nullopt once it is done (`eager_spans_ms`: its samples so
  // far). Fresh seeds, remembered for the kernel's series.
  absl::StatusOr<std::optional<uint64_t>> NextEagerStrictSeed(
      const std::vector<double>& eager_spans_ms, double elapsed_s);
  // The kernel's series' next seed, or nullopt once it is done: the eager series' seeds in their
  // order (the kernel takes at least as many samples on the same inputs), then fresh ones while
  // its own series is not done (`kernel_spans_ms`: its samples so far; a call that gave no
  // sample still used its seed). The eager series is complete by then, however it ended.
  absl::StatusOr<std::optional<uint64_t>> NextKernelStrictSeed(
      const std::vector<double>& kernel_spans_ms, const std::vector<double>& eager_spans_ms,
      double elapsed_s);

 private:
  MeasurementPlan() = default;

  // One series: at max_timing_draws, or past timing_draws with its median's CI converged.
  bool SeriesDone(const std::vector<double>& spans_ms) const;

  absl::StatusOr<uint64_t> FreshStrictSeed();

  v1::JudgeConfig config_;
  bool strict_ = false;
  bool require_dsl_ = false;
  int kernel_thread_spin_us_ = 0;
  std::vector<Draw> correctness_;
  int knockout_index_ = -1;
  std::vector<uint64_t> warmup_;
  std::vector<uint64_t> timing_;
  std::vector<uint64_t> fresh_seeds_;  // drawn 64 at a time
  size_t next_fresh_ = 0;
  std::vector<uint64_t> eager_strict_seeds_;  // the eager series' seeds, in order
  size_t next_kernel_strict_ = 0;
};

// Which timing draws are re-checked: a uniform sample of k of all of them, chosen as each
// draw's outputs come in (reservoir sampling), so that the host does the same for every draw
// before and while it captures its outputs, and nobody (the host included) knows the chosen
// draws until the last one is in; and, of the draws not kept at random, the `fastest` whose
// parity times were the shortest (a draw offered with no time, ms < 0, is never one). A kernel
// that skips its work on some timed draws to lower the median makes those draws the fastest:
// the uniform sample alone let such a kernel pass with probability (1 - f)^k (seventh session's
// red team, 2026-12-06: 26 of 50 draws skipped, 1 pass in 18 at 3.98x); the fastest ones are
// skipped draws whenever the median moved. Offer() says where a draw's outputs go: a slot in
// [0, k) (kept at random), in [k, k + fastest) (among the fastest so far), or the discard slot
// k + fastest; the host copies them in whichever it is.
class RecheckReservoir {
 public:
  explicit RecheckReservoir(int k, int fastest = 0) : k_(k), fastest_(fastest) {}
  absl::StatusOr<int> Offer(int draw, double ms = -1);
  int discard_slot() const { return std::max(k_, 0) + std::max(fastest_, 0); }
  // (slot, draw) of the kept draws, by slot.
  std::vector<std::pair<int, int>> Kept() const;

 private:
  int k_;
  int fastest_;
  int seen_ = 0;
  std::vector<int> kept_;                      // draw per slot
  std::vector<std::pair<double, int>> quick_;  // (ms, draw) per fastest slot
};

// The worker's reported times checked against the host's round trips of the same calls.
//
// The worker's clock is the published method's on a GPU (PublishedClock: torch's synchronise and
// events, bound before kernel.py is imported) and the monotonic clock in C++ on the CPU, both read
// on the kernel's thread, so a report is taken as it is: this check is the backstop for what the
// clock cannot see. These fail the evaluation (timing.inconsistent,
// a violation): a report longer than its own round trip, which no honest clock gives; and a
// median time outside the clock (round trip - report) beyond the bound, which means the worker
// spent much more of each call outside its timed window than the channel costs -- work done
// outside the window. A report of no time at all (zero, negative, not a number) fails too: a
// clock around a call of solve always reads more. The bound is loose on purpose: an honest kernel's
// call costs more outside the window than the calibration's no-op (its outputs, the DSL's dispatch,
// the garbage it leaves), and reports are never raised, which would bias honest kernels slow.
struct AcceptedTimes {
  std::vector<double> accepted_ms;  // the reports, each at most its round trip
  int over_round_trip = 0;          // reports longer than their round trip
  int no_time = 0;                  // reports of zero or less (or NaN)
  double calibration_gap_ms = 0;    // median channel cost of the calibration calls
  double median_gap_ms = 0;         // median (round trip - report) of these calls
  double allowed_gap_ms = 0;        // the bound on median_gap_ms
  // The CPU checks, where the worker's CPU time was measured: for each of the kernel's thread
  // (its CPU time less the report), the main thread and the other threads, the median over the
  // timed calls, over the calibration calls, and the bound on their difference.
  struct CpuCheck {
    double timed_ms = 0;
    double calibrated_ms = 0;
    double allowed_excess_ms = 0;
  };
  CpuCheck kernel_thread, main_thread, other_threads;
  std::optional<v1::AuditFinding> finding;  // timing.inconsistent, when the reports do not hold
};

// The worker's CPU time over the round trip of each timed call and of each calibration call, in
// ms, from the kernel's accounting read by the host (ProcessSupervisor::SampleCpu), which nothing
// in the worker can change. Where the worker runs on one CPU (`one_cpu`: the CPU judge pins it,
// seals its affinity and refuses it new processes) its threads never run at once, so:
// - the kernel's thread, which runs the clock and the call and nothing else, cannot have used
//   more CPU inside the clock than the clock read: its CPU time less the report, beyond what a
//   calibration call shows, is a clock that lies, whatever in the worker's memory was rewritten
//   to make it lie (red team round 9: four raw-memory routes rewrote the KernelThread's clock and
//   passed at 12-24x on the CPU judge, inside the round-trip bound's 50 ms);
// - the worker's other threads (the process's CPU time less its main and kernel threads', so
//   threads that started and ended within the call count too) run none of kernel.py's code:
//   more CPU there than in a calibration call is work moved off the kernel's thread (red team
//   round 10: a raw clone() thread with no Python state passed 2 of 5 times under a bound of the
//   whole worker's time);
// - the main thread only handles the call's inputs and outputs, and varies with them and the
//   machine's load: held to a looser bound (ClockBound::cpu_fixed_ms).
// On several CPUs (a GPU's worker) they are measured, not held: the kernel thread's report is the
// device's time, not its CPU's, and an honest kernel's eager CPU ops may run on torch's intra-op
// threads (one on the CPU judge). 39 honest evaluations on an H100 (2026-12-06) read 0.000 ms on
// the other threads, but none of them ran CPU ops.
// The first of each pair is per timed call, the second per calibration call.
struct WorkerCpu {
  std::vector<double> kernel_thread_ms, kernel_thread_calibration_ms;  // CPU time - report
  std::vector<double> main_thread_ms, main_thread_calibration_ms;
  std::vector<double> other_threads_ms, other_threads_calibration_ms;
  bool one_cpu = false;
};
AcceptedTimes AcceptReportedTimes(const std::vector<double>& reported_ms,
                                  const std::vector<double>& round_trip_ms,
                                  const std::vector<double>& calibration_gap_ms,
                                  const ClockBound& bound, const WorkerCpu& cpu = {});

}  // namespace mkb

#endif  // LIBMKB_JUDGE_MEASUREMENT_PLAN_H_
