#include "libmkb/judge/measurement_plan.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <map>
#include <set>

TEST_CASE(
    "the plan's defaults are one set, and the knockout draw sits among the correctness draws") {
  const mkb::v1::JudgeConfig c = mkb::WithDefaults({});
  CHECK(c.correctness_draws() == 5);
  CHECK(c.warmup_calls() == 10);
  CHECK(c.timing_draws() == 50);
  CHECK(c.recheck_draws() == 3);
  CHECK(c.fastest_recheck_draws() == 2);
  mkb::v1::JudgeConfig none;
  none.set_fastest_recheck_draws(0);
  CHECK(mkb::WithDefaults(none).fastest_recheck_draws() == 0);  // set: kept, even 0
  CHECK(c.calibration_calls() == 30);
  CHECK(c.worker_uid() == 65534);
  CHECK(c.workspace_bytes() == int64_t{1} << 30);

  auto gpu = mkb::MeasurementPlan::Create({}, /*gpu=*/true);
  REQUIRE(gpu.ok());
  CHECK(gpu->correctness_sequence().size() == 6);
  int knockouts = 0;
  std::set<uint64_t> seeds;
  for (const auto& d : gpu->correctness_sequence()) {
    knockouts += d.knockout;
    seeds.insert(d.seed);
  }
  CHECK(knockouts == 1);
  CHECK(gpu->knockout_index() >= 0);
  CHECK(gpu->correctness_sequence()[gpu->knockout_index()].knockout);
  CHECK(gpu->warmup_seeds().size() == 10);
  CHECK(gpu->timing_seeds().size() == 50);
  for (uint64_t s : gpu->timing_seeds()) seeds.insert(s);
  CHECK(seeds.size() == 56);  // fresh seeds everywhere
  CHECK(gpu->strict_pass());
  CHECK(gpu->require_dsl());

  auto cpu = mkb::MeasurementPlan::Create({}, /*gpu=*/false);
  REQUIRE(cpu.ok());
  CHECK(cpu->correctness_sequence().size() == 5);
  CHECK(cpu->knockout_index() == -1);
  CHECK_FALSE(cpu->strict_pass());
  CHECK_FALSE(cpu->require_dsl());
}

TEST_CASE("the kernel thread polls for its next call only on a GPU, as configured there") {
  auto gpu = mkb::MeasurementPlan::Create({}, /*gpu=*/true);
  REQUIRE(gpu.ok());
  CHECK(gpu->kernel_thread_spin_us() == mkb::kDefaultKernelThreadSpinUs);
  mkb::v1::JudgeConfig spin;
  spin.set_kernel_thread_spin_us(1500);
  auto configured = mkb::MeasurementPlan::Create(spin, /*gpu=*/true);
  REQUIRE(configured.ok());
  CHECK(configured->kernel_thread_spin_us() == 1500);
  spin.set_kernel_thread_spin_us(-3);
  CHECK(mkb::MeasurementPlan::Create(spin, /*gpu=*/true)->kernel_thread_spin_us() == 0);
  spin.set_kernel_thread_spin_us(1500);
  // The CPU judge's worker is on one CPU: a polling thread would take it from the main thread.
  CHECK(mkb::MeasurementPlan::Create(spin, /*gpu=*/false)->kernel_thread_spin_us() == 0);
}

TEST_CASE("the DSL rule and the workload default by device; a policy's require_dsl decides") {
  CHECK(mkb::DefaultWorkload(/*gpu=*/true) == "full");
  CHECK(mkb::DefaultWorkload(/*gpu=*/false) == "small");
  mkb::v1::JudgeConfig waived;
  waived.mutable_policy()->set_require_dsl(false);
  CHECK_FALSE(mkb::RequiresDsl(waived, /*gpu=*/true));
  auto plan = mkb::MeasurementPlan::Create(waived, /*gpu=*/true);
  REQUIRE(plan.ok());
  CHECK_FALSE(plan->require_dsl());
  CHECK(plan->knockout_index() == -1);  // no DSL rule, no knockout draw
  CHECK(plan->correctness_sequence().size() == 5);
  mkb::v1::JudgeConfig required;
  required.mutable_policy()->set_require_dsl(true);
  CHECK(mkb::RequiresDsl(required, /*gpu=*/false));
}

TEST_CASE("a strict sample is no longer than its round trip, its kernel sum no longer than it") {
  mkb::StrictSample s = mkb::AcceptStrictSample(2.0, 1.5, 3.0);
  CHECK(s.span_ms == 2.0);
  CHECK(s.kernel_sum_ms == 1.5);
  s = mkb::AcceptStrictSample(5.0, 4.0, 3.0);  // a span that outlasts the host's round trip
  CHECK(s.span_ms == 3.0);
  CHECK(s.kernel_sum_ms == 3.0);
  s = mkb::AcceptStrictSample(1.0, 2.0, 3.0);  // kernels summed past the span (overlap)
  CHECK(s.kernel_sum_ms == 1.0);
}

namespace {

// Runs a plan's eager strict series with a steady 1 ms per sample; returns its seeds.
std::vector<uint64_t> SteadyEagerSeries(mkb::MeasurementPlan& plan, std::vector<double>* spans) {
  std::vector<uint64_t> seeds;
  for (;;) {
    auto seed = plan.NextEagerStrictSeed(*spans, 0.1);
    REQUIRE(seed.ok());
    if (!seed->has_value()) return seeds;
    seeds.push_back(**seed);
    spans->push_back(1.0);
  }
}

}  // namespace

TEST_CASE("the kernel's strict series replays the eager series' seeds, then draws while not done") {
  mkb::v1::JudgeConfig config;
  config.set_timing_draws(10);
  config.set_max_timing_draws(30);
  auto plan = mkb::MeasurementPlan::Create(config, true);
  REQUIRE(plan.ok());
  // The eager series: a seed per sample until it has converged (steady at timing_draws).
  std::vector<double> eager;
  const std::vector<uint64_t> eager_seeds = SteadyEagerSeries(*plan, &eager);
  CHECK(eager.size() == 10);
  CHECK(std::set<uint64_t>(eager_seeds.begin(), eager_seeds.end()).size() == 10);
  // The kernel's: the same seeds in order, even once its own series has converged...
  std::vector<double> kernel;
  std::vector<uint64_t> kernel_seeds;
  for (;;) {
    auto seed = plan->NextKernelStrictSeed(kernel, eager, 0.1);
    REQUIRE(seed.ok());
    if (!seed->has_value()) break;
    kernel_seeds.push_back(**seed);
    // ...a noisy kernel needs fresh seeds past them, up to the cap.
    kernel.push_back(kernel.size() % 2 ? 1.0 : 3.0);
  }
  REQUIRE(kernel_seeds.size() == 30);
  CHECK(std::vector<uint64_t>(kernel_seeds.begin(), kernel_seeds.begin() + 10) == eager_seeds);
  std::set<uint64_t> fresh(kernel_seeds.begin() + 10, kernel_seeds.end());
  CHECK(fresh.size() == 20);
  for (uint64_t s : eager_seeds) CHECK(fresh.count(s) == 0);
  // A steady kernel stops with the eager seeds: no fewer samples than the eager baseline's.
  auto again = mkb::MeasurementPlan::Create(config, true);
  REQUIRE(again.ok());
  std::vector<double> e2;
  SteadyEagerSeries(*again, &e2);
  std::vector<double> k2;
  int calls = 0;
  while (true) {
    auto seed = again->NextKernelStrictSeed(k2, e2, 0.1);
    REQUIRE(seed.ok());
    if (!seed->has_value()) break;
    ++calls;
    if (calls != 3) k2.push_back(1.0);  // one call gave no sample: its seed is still used
  }
  CHECK(k2.size() == 10);
  CHECK(calls == 11);  // the eager seeds (10), then one fresh seed for the missing sample
}

TEST_CASE("an eager series stopped by the budget does not keep the kernel's series drawing") {
  mkb::v1::JudgeConfig config;
  config.set_timing_draws(10);
  config.set_max_timing_draws(30);
  config.set_timing_budget_s(60);
  auto plan = mkb::MeasurementPlan::Create(config, true);
  REQUIRE(plan.ok());
  // The eager series ran out of budget after 16 noisy samples: neither converged nor capped.
  std::vector<double> eager;
  for (int i = 0; i < 16; ++i) {
    auto seed = plan->NextEagerStrictSeed(eager, 1.0);
    REQUIRE(seed.ok());
    REQUIRE(seed->has_value());
    eager.push_back(i % 2 ? 1.0 : 3.0);
  }
  auto after_budget = plan->NextEagerStrictSeed(eager, 61.0);
  REQUIRE(after_budget.ok());
  CHECK_FALSE(after_budget->has_value());
  // A steady kernel takes the eager seeds and stops there, well inside its own budget (it drew
  // fresh seeds until its own budget ran out: 9,279 samples of problem 72 on an H100).
  std::vector<double> kernel;
  for (;;) {
    auto seed = plan->NextKernelStrictSeed(kernel, eager, 0.5);
    REQUIRE(seed.ok());
    if (!seed->has_value()) break;
    kernel.push_back(1.0);
    REQUIRE(kernel.size() <= 30);
  }
  CHECK(kernel.size() == 16);
}

TEST_CASE("the knockout draw's position is uniform over the sequence") {
  std::map<int, int> positions;
  for (int i = 0; i < 600; ++i) {
    auto plan = mkb::MeasurementPlan::Create({}, true);
    REQUIRE(plan.ok());
    positions[plan->knockout_index()]++;
  }
  CHECK(positions.size() == 6);
  for (const auto& [position, count] : positions) CHECK(count > 50);  // ~100 each
}

TEST_CASE("the strict pass stops at convergence, the sample cap or the budget") {
  mkb::v1::JudgeConfig config;
  config.set_timing_draws(20);
  config.set_max_timing_draws(100);
  auto plan = mkb::MeasurementPlan::Create(config, true);
  REQUIRE(plan.ok());
  std::vector<double> steady(20, 1.0), noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 1.0 : 3.0);
  CHECK(plan->StrictPassDone(steady, steady, 0.1));
  CHECK_FALSE(plan->StrictPassDone(noisy, steady, 0.1));
  CHECK_FALSE(plan->StrictPassDone(std::vector<double>(10, 1.0), steady, 0.1));  // < timing_draws
  CHECK(plan->StrictPassDone(noisy, steady, 1e6));                               // budget
  std::vector<double> capped;
  for (int i = 0; i < 100; ++i) capped.push_back(i % 2 ? 1.0 : 3.0);
  CHECK(plan->StrictPassDone(capped, steady, 0.1));  // the cap ends a series that never settles
  CHECK_FALSE(plan->StrictPassDone(capped, noisy, 0.1));  // the other is still going
}

TEST_CASE("the re-check reservoir keeps a uniform sample of k draws, chosen as they come") {
  std::map<int, int> kept;
  for (int trial = 0; trial < 2000; ++trial) {
    mkb::RecheckReservoir reservoir(3);
    for (int draw = 0; draw < 20; ++draw) {
      auto slot = reservoir.Offer(draw);
      REQUIRE(slot.ok());
      CHECK(*slot >= 0);
      CHECK(*slot <= reservoir.discard_slot());
      if (draw < 3) CHECK(*slot == draw);  // the first k fill the slots
    }
    const auto chosen = reservoir.Kept();
    REQUIRE(chosen.size() == 3);
    std::set<int> distinct;
    for (const auto& [slot, draw] : chosen) distinct.insert(draw);
    CHECK(distinct.size() == 3);
    for (int d : distinct) kept[d]++;
  }
  // Each of the 20 draws is kept with probability 3/20: 300 of 2000 trials on average.
  CHECK(kept.size() == 20);
  for (const auto& [draw, count] : kept) {
    CHECK(count > 200);
    CHECK(count < 400);
  }
}

TEST_CASE("the fastest timing draws are re-checked besides the random ones") {
  // A kernel that skips its work on 26 of 50 draws: those are its fastest. The uniform sample
  // alone misses all of them with probability C(24,3)/C(50,3) = 10%; the fastest slots never do.
  for (int trial = 0; trial < 200; ++trial) {
    mkb::RecheckReservoir reservoir(3, 2);
    CHECK(reservoir.discard_slot() == 5);
    std::set<int> skipped;
    for (int draw = 0; draw < 50; ++draw) {
      const bool skip = (draw * 7 + trial) % 50 < 26;
      if (skip) skipped.insert(draw);
      const double ms = skip ? 0.03 + 0.0001 * draw : 0.12 + 0.0001 * draw;
      auto slot = reservoir.Offer(draw, ms);
      REQUIRE(slot.ok());
      CHECK(*slot >= 0);
      CHECK(*slot <= reservoir.discard_slot());
    }
    const auto chosen = reservoir.Kept();
    REQUIRE(chosen.size() == 5);
    int fastest_skipped = 0;
    for (const auto& [slot, draw] : chosen) {
      if (slot >= 3) {
        CHECK(skipped.count(draw) == 1);
        ++fastest_skipped;
      }
    }
    CHECK(fastest_skipped == 2);
  }
  // Draws offered with no time (the strict pass's) are never among the fastest; with no
  // fastest slots the reservoir is the uniform one.
  mkb::RecheckReservoir untimed(1, 2);
  for (int draw = 0; draw < 10; ++draw) REQUIRE(untimed.Offer(draw).ok());
  CHECK(untimed.Kept().size() == 1);
  mkb::RecheckReservoir plain(2);
  CHECK(plain.discard_slot() == 2);
  for (int draw = 0; draw < 10; ++draw) REQUIRE(plain.Offer(draw, 0.001 * draw).ok());
  CHECK(plain.Kept().size() == 2);
  // The fastest are kept by their time, the slowest of them replaced first.
  mkb::RecheckReservoir only_fastest(0, 2);
  const double times[] = {5, 4, 6, 1, 3, 2};
  for (int draw = 0; draw < 6; ++draw) REQUIRE(only_fastest.Offer(draw, times[draw]).ok());
  std::set<int> kept;
  for (const auto& [slot, draw] : only_fastest.Kept()) kept.insert(draw);
  CHECK(kept == std::set<int>{3, 5});
}

TEST_CASE("reported times stand as reported; gross time outside the clock fails the evaluation") {
  const mkb::ClockBound bound{0.5, 0.25};
  // The H200's channel, measured: a calibrated no-op call costs 1.1-1.7 ms.
  std::vector<double> calibration;
  for (int i = 0; i < 30; ++i) calibration.push_back(i < 20 ? 1.2 : 1.7);  // p90 1.7 ms
  std::vector<double> rtt, honest, outside, over;
  for (int i = 0; i < 50; ++i) {
    // An honest 3 ms kernel whose call costs more outside the clock than the no-op (up to 1.8x
    // there).
    rtt.push_back(5.0 + 0.01 * (i % 5));
    honest.push_back(rtt.back() - 2.0);
    // Work done after the clock stopped: 6 ms of a call's 8 ms outside the window.
    outside.push_back(2.0);
  }
  const mkb::AcceptedTimes ok = mkb::AcceptReportedTimes(honest, rtt, calibration, bound);
  CHECK_FALSE(ok.finding.has_value());
  CHECK(ok.accepted_ms == honest);  // never raised: that would bias honest kernels slow
  CHECK(ok.over_round_trip == 0);

  std::vector<double> rtt_outside(50, 8.0);
  const mkb::AcceptedTimes caught =
      mkb::AcceptReportedTimes(outside, rtt_outside, calibration, bound);
  REQUIRE(caught.finding.has_value());
  CHECK(caught.finding->code() == "timing.inconsistent");
  CHECK(caught.finding->severity() == mkb::v1::SEVERITY_VIOLATION);
  CHECK_THAT(caught.allowed_gap_ms, Catch::Matchers::WithinRel(1.7 + 0.5 + 0.25 * 8.0, 1e-9));

  // A clock rewritten to report 0.15 ms of a call with 2 ms of device work (a round trip of 3.5
  // ms: the channel's 1.5 ms and the work): inside twice the channel cost (the bound until
  // 2026-12-06: 2 x 1.7 + 0.5 + 25%), outside once it.
  std::vector<double> hidden(50, 0.15), rtt_hidden(50, 3.5);
  const mkb::AcceptedTimes hid = mkb::AcceptReportedTimes(hidden, rtt_hidden, calibration, bound);
  REQUIRE(hid.finding.has_value());
  CHECK(hid.median_gap_ms > hid.allowed_gap_ms);
  CHECK(hid.median_gap_ms < 2 * 1.7 + 0.5 + 0.25 * 3.5);

  // A report longer than its own round trip: no honest clock gives one.
  const mkb::AcceptedTimes longer =
      mkb::AcceptReportedTimes({1.0, 0.4}, {0.5, 0.5}, calibration, bound);
  REQUIRE(longer.finding.has_value());
  CHECK(longer.over_round_trip == 1);
  CHECK(longer.accepted_ms[0] == 0.5);

  // A report of no time: the worker's clock replaced by one that stands still.
  std::vector<double> zeros(50, 0.0);
  const mkb::AcceptedTimes still = mkb::AcceptReportedTimes(zeros, rtt, calibration, bound);
  REQUIRE(still.finding.has_value());
  CHECK(still.no_time == 50);
  CHECK_THAT(still.finding->message(), Catch::Matchers::ContainsSubstring("taking no time"));
  honest[7] = -0.001;
  CHECK(mkb::AcceptReportedTimes(honest, rtt, calibration, bound).no_time == 1);
}

TEST_CASE("the clock bound's defaults depend on the device, and the config overrides them") {
  const mkb::ClockBound gpu = mkb::ClockBoundOf({}, true);
  CHECK(gpu.fixed_ms == 0.5);
  CHECK(gpu.fraction == 0.25);
  const mkb::ClockBound cpu = mkb::ClockBoundOf({}, false);
  CHECK(cpu.fixed_ms == 50.0);
  // Below 1, or it could never trip: work after the clock on the CPU judge (red team round 6:
  // 0.7 ms reported of 100-200 ms round trips) fails, an honest call costing the channel passes.
  CHECK(cpu.fraction < 1.0);
  const std::vector<double> calibration(30, 1.0);
  std::vector<double> rtt, after_clock, honest;
  for (int i = 0; i < 50; ++i) {
    rtt.push_back(100.0 + 2.0 * i);
    after_clock.push_back(0.7);
    honest.push_back(rtt.back() - 1.5);
  }
  const mkb::AcceptedTimes caught = mkb::AcceptReportedTimes(after_clock, rtt, calibration, cpu);
  REQUIRE(caught.finding.has_value());
  CHECK(caught.finding->code() == "timing.inconsistent");
  CHECK_FALSE(mkb::AcceptReportedTimes(honest, rtt, calibration, cpu).finding.has_value());
  mkb::v1::JudgeConfig config;
  config.set_clock_bound_fixed_ms(0.2);
  CHECK(mkb::ClockBoundOf(config, true).fixed_ms == 0.2);
}

TEST_CASE("on one CPU, a report below the CPU time its call used fails the evaluation") {
  const mkb::ClockBound bound = mkb::ClockBoundOf({}, false);  // the CPU judge's
  // The CPU judge's worker, measured on the project's CPU machine, per calibration call: the
  // kernel's thread 0.03-0.05 ms of CPU outside the clock, the main thread 2.3-3.5 ms (opening
  // the inputs, exporting the outputs), no other thread any.
  mkb::WorkerCpu honest;
  honest.one_cpu = true;
  for (int i = 0; i < 30; ++i) {
    honest.kernel_thread_calibration_ms.push_back(0.03 + 0.001 * (i % 20));
    honest.main_thread_calibration_ms.push_back(2.6 + 0.03 * i);
    honest.other_threads_calibration_ms.push_back(0.0);
  }
  std::vector<double> rtt, reports, forged;
  for (int i = 0; i < 50; ++i) {
    // An honest 0.8 ms call: the kernel's thread as calibrated, the main thread 0.2 ms more
    // than calibration's (measured: 0.34 ms below to 0.16 ms above).
    rtt.push_back(5.0 + 0.1 * (i % 7));
    reports.push_back(0.8 + 0.01 * (i % 3));
    honest.kernel_thread_ms.push_back(0.03 + 0.001 * (i % 20) + 0.02);
    honest.main_thread_ms.push_back(2.6 + 0.03 * (i % 30) + 0.2);
    honest.other_threads_ms.push_back(0.0);
    // The same call with the worker's clock rewritten to read 50 us (red team round 9): inside
    // the round-trip bound (50 ms + 50%).
    forged.push_back(0.05);
  }
  const std::vector<double> calibration_gap(30, 3.0);
  const mkb::AcceptedTimes ok =
      mkb::AcceptReportedTimes(reports, rtt, calibration_gap, bound, honest);
  CHECK_FALSE(ok.finding.has_value());
  CHECK_THAT(ok.kernel_thread.timed_ms - ok.kernel_thread.calibrated_ms,
             Catch::Matchers::WithinAbs(0.02, 0.01));

  // The forged clock, the work on the kernel's thread: 0.75 ms more of it outside the clock.
  mkb::WorkerCpu on_thread = honest;
  for (double& ms : on_thread.kernel_thread_ms) ms += 0.75;
  const mkb::AcceptedTimes caught =
      mkb::AcceptReportedTimes(forged, rtt, calibration_gap, bound, on_thread);
  REQUIRE(caught.finding.has_value());
  CHECK(caught.finding->code() == "timing.inconsistent");
  CHECK_THAT(caught.finding->message(), Catch::Matchers::ContainsSubstring("kernel's thread"));
  CHECK(caught.accepted_ms == forged);  // reports are never raised

  // Round 9's use-after-free clock on an idle machine, where problem 28's small kernel is fast:
  // 0.09 ms over calibration per call, inside the bound of 0.1 ms + 5% it passed under (4 of 6
  // runs), outside 0.05 ms + 5%.
  mkb::WorkerCpu small = honest;
  for (double& ms : small.kernel_thread_ms) ms += 0.07;
  CHECK(mkb::AcceptReportedTimes(forged, rtt, calibration_gap, bound, small).finding.has_value());
  mkb::ClockBound until_2026_12_06 = bound;
  until_2026_12_06.thread_fixed_ms = 0.1;
  CHECK_FALSE(mkb::AcceptReportedTimes(forged, rtt, calibration_gap, until_2026_12_06, small)
                  .finding.has_value());

  // The work moved to a thread of its own (red team round 10: a raw clone() thread).
  mkb::WorkerCpu moved = honest;
  for (double& ms : moved.other_threads_ms) ms = 0.7;
  const mkb::AcceptedTimes other =
      mkb::AcceptReportedTimes(forged, rtt, calibration_gap, bound, moved);
  REQUIRE(other.finding.has_value());
  CHECK_THAT(other.finding->message(), Catch::Matchers::ContainsSubstring("other threads"));

  // The work run by the main thread, as a pending call it takes before the export (red team
  // round 11: 0.48-0.87 ms a call, passed at 12.9-20.1x). Within the main thread's bound (1 ms +
  // 25%, its honest noise up to 0.67 ms), it passes: the residual the bound leaves. 1.5 ms of
  // work there fails; without the check (enforce_main_thread off), it passes too.
  mkb::WorkerCpu on_main = honest;
  for (double& ms : on_main.main_thread_ms) ms += 0.5;
  CHECK_FALSE(
      mkb::AcceptReportedTimes(forged, rtt, calibration_gap, bound, on_main).finding.has_value());
  for (double& ms : on_main.main_thread_ms) ms += 1.0;
  const mkb::AcceptedTimes main =
      mkb::AcceptReportedTimes(forged, rtt, calibration_gap, bound, on_main);
  REQUIRE(main.finding.has_value());
  CHECK_THAT(main.finding->message(), Catch::Matchers::ContainsSubstring("main thread"));
  mkb::ClockBound unchecked = bound;
  unchecked.enforce_main_thread = false;
  CHECK_FALSE(mkb::AcceptReportedTimes(forged, rtt, calibration_gap, unchecked, on_main)
                  .finding.has_value());

  // Without the CPU checks (no measurement, or a worker on several CPUs, whose threads' CPU
  // time may exceed the wall clock), the same forgeries are inside the round-trip bound: the
  // checks are what stop them.
  CHECK_FALSE(mkb::AcceptReportedTimes(forged, rtt, calibration_gap, bound).finding.has_value());
  on_thread.one_cpu = false;
  CHECK_FALSE(
      mkb::AcceptReportedTimes(forged, rtt, calibration_gap, bound, on_thread).finding.has_value());
  // Nor the other threads on several CPUs: a GPU's worker runs an honest kernel's eager CPU ops
  // on torch's intra-op threads, which are other threads (the round trip bounds the wall time).
  moved.one_cpu = false;
  CHECK_FALSE(
      mkb::AcceptReportedTimes(forged, rtt, calibration_gap, bound, moved).finding.has_value());
}
