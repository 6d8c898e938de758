// mkb::stats on small cases whose every number is worked out by hand in the comments.
// tests/python/test_stats.py cross-checks the same code against scipy and statsmodels.
#include <algorithm>
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "libmkb/model/defaults.h"
#include "libmkb/model/validation.h"
#include "libmkb/stats/bootstrap.h"
#include "libmkb/stats/cell_replicates.h"
#include "libmkb/stats/detail/distributions.h"
#include "libmkb/stats/grouping.h"
#include "libmkb/stats/hypothesis_tests.h"
#include "libmkb/stats/measurement_noise.h"
#include "libmkb/stats/multiple_comparisons.h"
#include "libmkb/stats/outcome.h"
#include "libmkb/stats/proportions.h"
#include "libmkb/stats/report.h"

namespace {

using Catch::Approx;
namespace v1 = mkb::v1;
namespace stats = mkb::stats;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

v1::ArmResult Passed(double speedup) {
  v1::ArmResult arm;
  arm.set_resolved(true);
  arm.set_passed(true);
  arm.set_speedup(speedup);
  return arm;
}

v1::ArmResult Failed() {
  v1::ArmResult arm;
  arm.set_resolved(true);
  return arm;
}

v1::ArmResult Unresolved() { return v1::ArmResult(); }

v1::ArmResult Skipped() {
  v1::ArmResult arm;
  arm.set_skipped(true);
  return arm;
}

v1::CellReplicate Cell(const std::string& model, const std::string& direction,
                       const std::string& slug, v1::Family family, int replicate,
                       std::optional<v1::ArmResult> source, v1::ArmResult base, v1::ArmResult skill,
                       std::optional<v1::ArmResult> control = std::nullopt) {
  v1::CellReplicate cell;
  cell.set_model(model);
  cell.set_direction(direction);
  cell.set_problem_slug(slug);
  cell.set_family(family);
  cell.set_replicate(replicate);
  if (source) *cell.mutable_source() = *source;
  *cell.mutable_base() = base;
  *cell.mutable_skill() = skill;
  if (control) *cell.mutable_control() = *control;
  return cell;
}

std::string FieldPath(const absl::Status& status) {
  return mkb::FieldPathOf(status).value_or("<none>");
}

v1::StatsConfig FastConfig() {
  v1::StatsConfig config;
  config.set_bootstrap_resamples(2000);
  return config;
}

const v1::AggregateRow& FindAggregate(const v1::StatsReport& report, const std::string& model,
                                      const std::string& split, const std::string& group,
                                      const std::string& arm) {
  for (const v1::AggregateRow& row : report.aggregates()) {
    if (row.model() == model && row.split() == split && row.group() == group && row.arm() == arm)
      return row;
  }
  FAIL("no aggregate row " << model << "/" << split << "/" << group << "/" << arm);
  return report.aggregates(0);
}

const v1::LiftRow& FindLift(const v1::StatsReport& report, const std::string& level,
                            const std::string& model, const std::string& direction,
                            const std::string& arm = "skill") {
  for (const v1::LiftRow& row : report.lift()) {
    if (row.level() == level && row.model() == model && row.direction() == direction &&
        row.arm() == arm)
      return row;
  }
  FAIL("no lift row " << level << "/" << model << "/" << direction << "/" << arm);
  return report.lift(0);
}

const v1::StandingRow& FindStanding(const v1::StatsReport& report, const std::string& arm,
                                    const std::string& standing) {
  for (const v1::StandingRow& row : report.standing()) {
    if (row.level() == "overall" && row.arm() == arm && row.standing() == standing) return row;
  }
  FAIL("no standing row " << arm << "/" << standing);
  return report.standing(0);
}

}  // namespace

TEST_CASE("quality and tier of an attempt") {
  const v1::StatsConfig config = mkb::WithDefaults(v1::StatsConfig());
  SECTION("a pass counts its log speedup, clipped to [1/16, 16]") {
    CHECK(stats::OutcomeOf(Passed(2.0), config).q == Approx(std::log(2.0)));
    CHECK(stats::OutcomeOf(Passed(100.0), config).q == Approx(std::log(16.0)));
    CHECK(stats::OutcomeOf(Passed(0.001), config).q == Approx(std::log(1.0 / 16)));
  }
  SECTION("a failure counts as the floor 1/32") {
    CHECK(stats::OutcomeOf(Failed(), config).q == Approx(std::log(1.0 / 32)));
    CHECK_FALSE(stats::OutcomeOf(Failed(), config).passed);
  }
  SECTION("a pass without a finite speedup counts as a failure") {
    v1::ArmResult missing = Passed(1.0);
    missing.clear_speedup();
    for (const v1::ArmResult& arm :
         {Passed(kNaN), Passed(std::numeric_limits<double>::infinity()), missing}) {
      const stats::ArmOutcome outcome = stats::OutcomeOf(arm, config);
      CHECK_FALSE(outcome.passed);
      CHECK(outcome.tier == 0);
      CHECK(outcome.q == Approx(std::log(1.0 / 32)));
    }
  }
  SECTION("tiers count the thresholds cleared, inclusive") {
    CHECK(stats::OutcomeOf(Passed(0.3), config).tier == 1);   // >= 0
    CHECK(stats::OutcomeOf(Passed(0.5), config).tier == 2);   // >= 0, 0.5
    CHECK(stats::OutcomeOf(Passed(1.5), config).tier == 3);   // >= 0, 0.5, 1
    CHECK(stats::OutcomeOf(Passed(2.0), config).tier == 4);   // >= 0, 0.5, 1, 2
    CHECK(stats::OutcomeOf(Passed(40.0), config).tier == 5);  // all five
    CHECK(stats::OutcomeOf(Failed(), config).tier == 0);
  }
  SECTION("configured constants are used") {
    v1::StatsConfig custom = config;
    custom.set_clip_high(4);
    custom.set_failure_floor(0.25);
    CHECK(stats::OutcomeOf(Passed(10.0), custom).q == Approx(std::log(4.0)));
    CHECK(stats::OutcomeOf(Failed(), custom).q == Approx(std::log(0.25)));
  }
}

TEST_CASE("normal and binomial distribution functions") {
  CHECK(stats::detail::NormalQuantile(0.975) == Approx(1.959963984540054).epsilon(1e-14));
  CHECK(stats::detail::NormalQuantile(0.5) == 0.0);
  CHECK(stats::detail::NormalQuantile(1e-10) == Approx(-6.361340902404056).epsilon(1e-13));
  for (double p : {1e-300, 1e-12, 0.001, 0.2, 0.7, 0.999999}) {
    CHECK(stats::detail::NormalCdf(stats::detail::NormalQuantile(p)) == Approx(p).epsilon(1e-12));
  }
  CHECK(std::isinf(stats::detail::NormalQuantile(0)));
  // P(X <= 1) for X ~ Bin(4, 1/2) = (1 + 4) / 16.
  CHECK(stats::detail::BinomialHalfCdf(1, 4) == Approx(5.0 / 16));
  CHECK(stats::detail::BinomialHalfTwoSidedP(3, 4) == Approx(10.0 / 16));
  CHECK(stats::detail::BinomialHalfTwoSidedP(2, 4) == 1.0);
  CHECK(stats::detail::BinomialHalfTwoSidedP(0, 0) == 1.0);
  // Type-7 quantiles of {1, 2, 3, 4}: position 1 + 3q.
  const std::vector<double> sorted = {1, 2, 3, 4};
  CHECK(stats::detail::QuantileOfSorted(sorted, 0.5) == Approx(2.5));
  CHECK(stats::detail::QuantileOfSorted(sorted, 0.25) == Approx(1.75));
  CHECK(stats::detail::QuantileOfSorted(sorted, 0.0) == 1.0);
  CHECK(stats::detail::QuantileOfSorted(sorted, 1.0) == 4.0);
}

TEST_CASE("Wilcoxon signed-rank with Pratt zeros") {
  SECTION("exact, no ties: d = 1, -2, 3, 4") {
    // W+ = 1 + 3 + 4 = 8 of 10. Subsets of {1,2,3,4} with sum >= 8: {1,3,4}, {2,3,4}, {1,2,3,4}:
    // P(W+ >= 8) = 3/16, and P(W+ <= 8) = 14/16, so p = 2 * 3/16.
    auto t = stats::WilcoxonSignedRank(std::vector<double>{1, -2, 3, 4});
    REQUIRE(t.ok());
    CHECK(t->method == "exact");
    CHECK(t->w_plus == 8);
    CHECK(t->w_minus == 2);
    CHECK(t->statistic == 2);
    CHECK(t->p_value == Approx(0.375));
  }
  SECTION("a zero makes the small-sample test the sign-flip enumeration") {
    // |d| ranks: 0 -> 1, 1 -> 2, 2 -> 3, 3 -> 4; W+ = 2 + 4 = 6. Non-zero ranks {2, 3, 4}: subset
    // sums 0, 2, 3, 4, 5, 6, 7, 9; P(W+ >= 6) = 3/8, P(W+ <= 6) = 6/8; p = 2 * 3/8.
    auto t = stats::WilcoxonSignedRank(std::vector<double>{0, 1, -2, 3});
    REQUIRE(t.ok());
    CHECK(t->method == "permutation");
    CHECK(t->n_zero == 1);
    CHECK(t->w_plus == 6);
    CHECK(t->p_value == Approx(0.75));
  }
  SECTION("asymptotic, with Pratt's mean and variance") {
    // mean = 4*5/4 - 1*2/4 = 4.5; var = (4*5*9 - 1*2*3) / 24 = 7.25; z = 1.5 / sqrt(7.25).
    stats::WilcoxonOptions options;
    options.method = stats::WilcoxonMethod::kAsymptotic;
    auto t = stats::WilcoxonSignedRank(std::vector<double>{0, 1, -2, 3}, options);
    REQUIRE(t.ok());
    const double z = 1.5 / std::sqrt(7.25);
    CHECK(t->z == Approx(z));
    CHECK(t->p_value == Approx(std::erfc(z / std::sqrt(2.0))));
    options.continuity_correction = true;
    auto corrected = stats::WilcoxonSignedRank(std::vector<double>{0, 1, -2, 3}, options);
    REQUIRE(corrected.ok());
    CHECK(corrected->z == Approx((1.5 - 0.5) / std::sqrt(7.25)));
  }
  SECTION("ties: average ranks and the tie correction") {
    // d = 1, 1, -1, 2: |d| ranks 2, 2, 2, 4; W+ = 8, W- = 2; mean 5; var = (4*5*9 - (27 - 3)/2)/24
    // = 7.
    stats::WilcoxonOptions options;
    options.method = stats::WilcoxonMethod::kAsymptotic;
    auto t = stats::WilcoxonSignedRank(std::vector<double>{1, 1, -1, 2}, options);
    REQUIRE(t.ok());
    CHECK(t->w_plus == 8);
    CHECK(t->z == Approx(3 / std::sqrt(7.0)));
  }
  SECTION("all differences zero") {
    auto small = stats::WilcoxonSignedRank(std::vector<double>{0, 0, 0});
    REQUIRE(small.ok());
    CHECK(small->p_value == 1.0);  // every sign assignment gives W+ = 0
    stats::WilcoxonOptions options;
    options.method = stats::WilcoxonMethod::kAsymptotic;
    auto asymptotic = stats::WilcoxonSignedRank(std::vector<double>{0, 0, 0}, options);
    REQUIRE(asymptotic.ok());
    CHECK(std::isnan(asymptotic->p_value));  // zero variance
  }
  SECTION("one difference, and none") {
    auto one = stats::WilcoxonSignedRank(std::vector<double>{0.3});
    REQUIRE(one.ok());
    CHECK(one->p_value == 1.0);
    auto none = stats::WilcoxonSignedRank(std::vector<double>{});
    REQUIRE(none.ok());
    CHECK(std::isnan(none->p_value));
  }
  SECTION("more than 50 differences use the normal approximation") {
    std::vector<double> d;
    for (int i = 1; i <= 60; ++i) d.push_back(i % 3 == 0 ? -i : i);
    auto t = stats::WilcoxonSignedRank(d);
    REQUIRE(t.ok());
    CHECK(t->method == "asymptotic");
  }
  SECTION("non-finite differences are an error") {
    CHECK(stats::WilcoxonSignedRank(std::vector<double>{1, kNaN}).status().code() ==
          absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("sign test and exact McNemar") {
  // 3 positive, 1 negative, 1 zero: p = 2 P(X <= 1), X ~ Bin(4, 1/2) = 2 * 5/16.
  auto sign = stats::SignTestOf(std::vector<double>{1, 2, -1, 0, 3});
  REQUIRE(sign.ok());
  CHECK(sign->n_positive == 3);
  CHECK(sign->n_negative == 1);
  CHECK(sign->n_zero == 1);
  CHECK(sign->p_value == Approx(0.625));
  CHECK(stats::SignTestOf(std::vector<double>{0, 0}).value().p_value == 1.0);

  // b = 1, c = 5: p = 2 P(X <= 1), X ~ Bin(6, 1/2) = 2 * 7/64.
  const stats::McNemarTest m = stats::McNemarExact(10, 1, 5, 4);
  CHECK(m.n == 20);
  CHECK(m.p_value == Approx(14.0 / 64));
  CHECK(stats::McNemarExact(3, 0, 0, 2).p_value == 1.0);
}

TEST_CASE("Holm and Benjamini-Hochberg adjustments") {
  // Holm: sorted 0.01, 0.03, 0.04 -> 3*0.01, max(.03, 2*0.03), max(.06, 1*0.04).
  const std::vector<double> holm = stats::HolmAdjust(std::vector<double>{0.01, 0.04, 0.03});
  CHECK(holm[0] == Approx(0.03));
  CHECK(holm[1] == Approx(0.06));
  CHECK(holm[2] == Approx(0.06));
  // BH: 3*0.01/1 = 0.03, 3*0.03/2 = 0.045, 3*0.04/3 = 0.04; cumulative minimum from the top.
  const std::vector<double> bh =
      stats::BenjaminiHochbergAdjust(std::vector<double>{0.01, 0.04, 0.03});
  CHECK(bh[0] == Approx(0.03));
  CHECK(bh[1] == Approx(0.04));
  CHECK(bh[2] == Approx(0.04));
  // NaN stays NaN and is not counted in m.
  const std::vector<double> with_nan = stats::HolmAdjust(std::vector<double>{0.02, kNaN, 0.04});
  CHECK(with_nan[0] == Approx(0.04));
  CHECK(std::isnan(with_nan[1]));
  CHECK(with_nan[2] == Approx(0.04));
  CHECK(stats::HolmAdjust(std::vector<double>{0.6, 0.7})[0] == 1.0);  // capped at 1
}

TEST_CASE("Wilson interval") {
  // 5 of 10 at 95%: centre 0.5, half-width z / (1 + z^2/10) * sqrt(0.025 + z^2/400).
  const stats::ProportionInterval ci = stats::WilsonInterval(5, 10, 0.95);
  const double z = 1.959963984540054;
  const double half = z / (1 + z * z / 10) * std::sqrt(0.025 + z * z / 400);
  CHECK(ci.rate == 0.5);
  CHECK(ci.low == Approx(0.5 - half));
  CHECK(ci.high == Approx(0.5 + half));
  CHECK(ci.low == Approx(0.2365931).epsilon(1e-6));
  const stats::ProportionInterval none = stats::WilsonInterval(0, 0, 0.95);
  CHECK(std::isnan(none.rate));
  CHECK(std::isnan(none.low));
  CHECK(stats::WilsonInterval(0, 4, 0.95).low == Approx(0.0).margin(1e-15));
}

TEST_CASE("cluster bootstrap of the paired measures") {
  stats::BootstrapOptions options;
  options.resamples = 4000;
  SECTION("two problems: the resampled ΔGM takes three values") {
    // A: d = log 2 (a help), B: d = 0. Resamples: AA -> 1, AB -> sqrt(2) - 1, BB -> 0, each
    // extreme with probability 1/4, so the 95% percentile interval is exactly [0, 1].
    const std::vector<stats::ClusterTotals> clusters = {{std::log(2.0), 1, 1, 0}, {0.0, 1, 0, 0}};
    auto e = stats::BootstrapPairedLift(clusters, options);
    REQUIRE(e.ok());
    CHECK(e->clusters == 2);
    CHECK(e->delta_gm.value == Approx(std::sqrt(2.0) - 1));
    CHECK(e->delta_gm.percentile_low == Approx(0.0).margin(1e-15));
    CHECK(e->delta_gm.percentile_high == Approx(1.0));
    CHECK(e->help_rate.value == 0.5);
    CHECK(e->help_rate.percentile_low == 0.0);
    CHECK(e->help_rate.percentile_high == 1.0);
    CHECK(e->harm_rate.value == 0.0);
    CHECK(e->harm_rate.percentile_high == 0.0);
    CHECK(e->harm_rate.bca_fallback);  // constant zero: nothing to correct
  }
  SECTION("the same seed gives the same intervals; another seed others") {
    std::vector<stats::ClusterTotals> clusters;
    for (int i = 0; i < 12; ++i)
      clusters.push_back({0.1 * (i % 5) - 0.15, 2, i % 3 == 0, i % 4 == 0});
    auto a = stats::BootstrapPairedLift(clusters, options);
    auto b = stats::BootstrapPairedLift(clusters, options);
    options.seed = 7;
    auto c = stats::BootstrapPairedLift(clusters, options);
    REQUIRE((a.ok() && b.ok() && c.ok()));
    CHECK(a->delta_gm.bca_low == b->delta_gm.bca_low);
    CHECK(a->delta_gm.percentile_high == b->delta_gm.percentile_high);
    CHECK(a->help_rate.se == b->help_rate.se);
    CHECK(a->delta_gm.se != c->delta_gm.se);
    CHECK_FALSE(a->delta_gm.bca_fallback);
    CHECK(a->delta_gm.bca_low < a->delta_gm.value);
    CHECK(a->delta_gm.value < a->delta_gm.bca_high);
  }
  SECTION("one problem: no spread, BCa undefined") {
    auto e = stats::BootstrapPairedLift(std::vector<stats::ClusterTotals>{{0.5, 3, 2, 0}}, options);
    REQUIRE(e.ok());
    CHECK(e->delta_gm.percentile_low == Approx(std::exp(0.5 / 3) - 1));
    CHECK(e->delta_gm.percentile_high == Approx(std::exp(0.5 / 3) - 1));
    CHECK(e->delta_gm.bca_fallback);
    CHECK(e->delta_gm.bca_low == e->delta_gm.percentile_low);
  }
  SECTION("no problems: NaN") {
    auto e = stats::BootstrapPairedLift(std::vector<stats::ClusterTotals>{}, options);
    REQUIRE(e.ok());
    CHECK(std::isnan(e->delta_gm.value));
    CHECK(std::isnan(e->help_rate.bca_high));
  }
  SECTION("inconsistent totals are an error") {
    CHECK_FALSE(
        stats::BootstrapPairedLift(std::vector<stats::ClusterTotals>{{0.1, 1, 1, 1}}, options)
            .ok());
    options.resamples = 0;
    CHECK_FALSE(
        stats::BootstrapPairedLift(std::vector<stats::ClusterTotals>{{0.1, 1, 0, 0}}, options)
            .ok());
  }
}

TEST_CASE("report of a small experiment, by hand") {
  // p1: source 3.0 (tier 4), base 1.0 (tier 3), skill 2.0 (tier 4): d = log 2, source above.
  // p2: source failed (tier 0), base 0.5 (tier 2), skill skipped -> counts as base: d = 0, below.
  // p3: base unresolved: left out.
  const std::vector<v1::CellReplicate> cells = {
      Cell("m", "cutedsl2tirx", "p1", v1::MOE, 0, Passed(3.0), Passed(1.0), Passed(2.0)),
      Cell("m", "cutedsl2tirx", "p2", v1::ATTENTION, 0, Failed(), Passed(0.5), Skipped()),
      Cell("m", "cutedsl2tirx", "p3", v1::ATTENTION, 0, Failed(), Unresolved(), Passed(2.0)),
  };
  auto report = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(report.ok());
  CHECK(report->n_cells() == 3);
  CHECK(report->n_resolved() == 2);
  CHECK(report->tau().source() == "default");
  CHECK(report->tau().tau() == Approx(std::log(1.05)));
  CHECK(report->config().clip_high() == 16);

  SECTION("harness aggregates") {
    // base: R@0 = 2/2, R@0.5 = 2/2, R@1 = 1/2, R@2 = 0, R@4 = 0 -> S = 100 * 2.5/5 = 50.
    const v1::AggregateRow& base = FindAggregate(*report, "*", "all", "all", "base");
    CHECK(base.n() == 2);
    REQUIRE(base.r_at_size() == 5);
    CHECK(base.r_at(0) == 1.0);
    CHECK(base.r_at(1) == 1.0);
    CHECK(base.r_at(2) == 0.5);
    CHECK(base.r_at(3) == 0.0);
    CHECK(base.s() == Approx(50));
    // skill: p1 at 2.0 clears four, p2 (its base, 0.5) two -> 1, 1, .5, .5, 0 -> S = 60.
    const v1::AggregateRow& skill = FindAggregate(*report, "*", "all", "all", "skill");
    CHECK(skill.r_at(3) == 0.5);
    CHECK(skill.s() == Approx(60));
    const v1::AggregateRow& lift = FindAggregate(*report, "*", "all", "all", "lift");
    CHECK(lift.r_at(3) == 0.5);
    CHECK(lift.s() == Approx(10));
    CHECK(FindAggregate(*report, "m", "all", "all", "lift").s() == Approx(10));
    // with_skill: only p1, where base 1.0 (three) and skill 2.0 (four).
    const v1::AggregateRow& with_skill =
        FindAggregate(*report, "*", "with_skill", "with_skill", "lift");
    CHECK(with_skill.n() == 1);
    CHECK(with_skill.s() == Approx(20));
    CHECK(FindAggregate(*report, "*", "by_source_verdict", "source_passed", "base").n() == 1);
    CHECK(FindAggregate(*report, "*", "by_source_verdict", "source_failed", "lift").s() ==
          Approx(0));
    CHECK(FindAggregate(*report, "*", "by_family", "moe", "skill").s() == Approx(80));
    CHECK(FindAggregate(*report, "*", "by_direction", "cutedsl2tirx", "base").n() == 2);
  }
  SECTION("paired lift") {
    // mean d = (log 2 + 0) / 2: ΔGM = sqrt(2) - 1; T = 1/2 (log 2 > log 1.05); H = 0.
    const v1::LiftRow& overall = FindLift(*report, "overall", "*", "*");
    CHECK(overall.n_problems() == 2);
    CHECK(overall.n_comparisons() == 2);
    CHECK(overall.n_skipped() == 1);
    CHECK(overall.delta_gm().value() == Approx(std::sqrt(2.0) - 1));
    CHECK(overall.help_rate().value() == 0.5);
    CHECK(overall.harm_rate().value() == 0.0);
    CHECK(overall.adjustment() == "none");
    // Per-problem d: log 2 and 0. Wilcoxon (Pratt): the zero ranks 1, log 2 ranks 2: W+ = 2;
    // sign flips of {2}: W+ in {0, 2}, p = 2 * min(1/2, 1) = 1.
    CHECK(overall.wilcoxon().w_plus() == 2);
    CHECK(overall.wilcoxon().n_zero() == 1);
    CHECK(overall.wilcoxon().p_value() == 1.0);
    CHECK(overall.sign().n_positive() == 1);
    CHECK(overall.sign().p_value() == 1.0);
    // Both bases passed; skills passed too: no discordant pair.
    CHECK(overall.mcnemar().both_passed() == 2);
    CHECK(overall.mcnemar().p_value() == 1.0);
    CHECK(report->problems_size() > 0);
  }
  SECTION("relative standing and tiers") {
    const v1::StandingRow& above = FindStanding(*report, "skill", "above");
    CHECK(above.n() == 1);
    CHECK(above.n_help() == 1);
    CHECK(above.help_rate() == 1.0);
    const v1::StandingRow& below = FindStanding(*report, "skill", "below");
    CHECK(below.n() == 1);
    CHECK(below.n_help() == 0);
    CHECK(below.n_harm() == 0);
    const v1::StandingRow& level = FindStanding(*report, "skill", "level");
    CHECK(level.n() == 0);
    CHECK(std::isnan(level.help_rate()));
    for (const v1::StandingRow& row : report->standing())
      CHECK(row.arm() == "skill");  // no controls
    const v1::ComparisonRow& p1 = report->comparisons(0);
    CHECK(p1.tier_source() == 4);
    CHECK(p1.tier_base() == 3);
    CHECK(p1.tier_skill() == 4);
    CHECK(p1.standing() == "above");
    CHECK(p1.outcome() == "help");
    CHECK(report->comparisons(1).standing() == "below");
    CHECK(report->comparisons(1).skill_skipped());
  }
  SECTION("usage counts each attempt once, skipped ones apart") {
    bool found = false;
    for (const v1::UsageRow& row : report->usage()) {
      if (row.model() == "*" && row.arm() == "cutedsl2tirx_skill") {
        found = true;
        CHECK(row.attempts() == 2);
        CHECK(row.skipped() == 1);
      }
    }
    CHECK(found);
  }
}

TEST_CASE("the regression-to-the-mean control") {
  // p1: source 4.0 above base failed; skill 1.0 (help), control 2.0 (help).
  // p2: source failed below base 2.0; skill failed (harm), control 2.0 (neutral).
  const std::vector<v1::CellReplicate> cells = {
      Cell("m", "tirx2cutedsl", "p1", v1::MOE, 0, Passed(4.0), Failed(), Passed(1.0), Passed(2.0)),
      Cell("m", "tirx2cutedsl", "p2", v1::MOE, 0, Failed(), Passed(2.0), Failed(), Passed(2.0)),
  };
  auto report = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(report.ok());
  CHECK(report->n_with_control() == 2);
  CHECK(FindStanding(*report, "control", "above").n_help() == 1);
  CHECK(FindStanding(*report, "control", "below").n_harm() == 0);
  CHECK(FindStanding(*report, "skill", "below").n_harm() == 1);
  // Control lift: d = log 2 - log(1/32) and 0: ΔGM = exp(log(64) / 2) - 1 = 7.
  CHECK(FindLift(*report, "overall", "*", "*", "control").delta_gm().value() == Approx(7.0));
  CHECK(report->comparisons(0).outcome_control() == "help");
}

TEST_CASE("τ from the spread of solo replicates") {
  // Five replicates of one problem: solo_cutedsl (source) always 1.0 -> 10 pairs at 0;
  // solo_tirx (base) 1, 2, 4, 8, 16 -> 10 pairs at k log 2, k = 1,1,1,1,2,2,2,3,3,4.
  // Median of the 20: (0 + log 2) / 2.
  std::vector<v1::CellReplicate> cells;
  for (int r = 0; r < 5; ++r) {
    cells.push_back(Cell("m", "cutedsl2tirx", "p1", v1::MOE, r, Passed(1.0),
                         Passed(std::pow(2.0, r)), Passed(1.0)));
  }
  auto report = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(report.ok());
  CHECK(report->tau().source() == "replicate_spread");
  CHECK(report->tau().pairs() == 20);
  CHECK(report->tau().tau() == Approx(std::log(2.0) / 2));

  SECTION("too few pairs fall back to log 1.05") {
    cells.resize(3);  // 3 + 3 pairs
    auto few = stats::ComputeStatsReport(cells, FastConfig());
    REQUIRE(few.ok());
    CHECK(few->tau().source() == "default");
    CHECK(few->tau().pairs() == 6);
  }
  SECTION("a configured τ wins") {
    v1::StatsConfig config = FastConfig();
    config.set_tau(0.3);
    auto fixed = stats::ComputeStatsReport(cells, config);
    REQUIRE(fixed.ok());
    CHECK(fixed->tau().source() == "config");
    CHECK(fixed->tau().tau() == 0.3);
  }
}

TEST_CASE("a solo serving two directions is one attempt") {
  // solo_cutedsl is the source of cutedsl2tirx and the base of tirx2cutedsl.
  v1::ArmResult solo_cutedsl = Passed(1.5);
  solo_cutedsl.mutable_usage()->set_cost_usd(2.0);
  const std::vector<v1::CellReplicate> cells = {
      Cell("m", "cutedsl2tirx", "p1", v1::MOE, 0, solo_cutedsl, Passed(1.0), Passed(1.2)),
      Cell("m", "tirx2cutedsl", "p1", v1::MOE, 0, Passed(1.0), solo_cutedsl, Failed()),
  };
  auto attempts = stats::DistinctAttempts(cells);
  REQUIRE(attempts.ok());
  CHECK(attempts->size() == 4);  // solo_cutedsl, solo_tirx and the two skill arms
  auto report = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(report.ok());
  for (const v1::UsageRow& row : report->usage()) {
    if (row.model() == "m" && row.arm() == "solo_cutedsl") {
      CHECK(row.attempts() == 1);
      CHECK(row.cost_usd() == 2.0);
    }
  }
  SECTION("occurrences that disagree are an error naming both") {
    std::vector<v1::CellReplicate> bad = cells;
    bad[1].mutable_base()->set_speedup(1.6);
    auto status = stats::ValidateCellReplicates(bad);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(FieldPath(status) == "cells[1].base");
    CHECK(std::string(status.message()).find("cells[0].source") != std::string::npos);
  }
}

TEST_CASE("grouping levels, Holm across model x direction, BH across families") {
  std::vector<v1::CellReplicate> cells;
  const v1::Family families[] = {v1::MOE, v1::ATTENTION, v1::KV_CACHE};
  for (const std::string model : {"a", "b"}) {
    for (int p = 0; p < 9; ++p) {
      const double skill = model == "a" ? 1.0 + 0.2 * p : 1.0 - 0.05 * p;
      cells.push_back(Cell(model, "cutedsl2tirx", "p" + std::to_string(p), families[p % 3], 0,
                           Passed(1.0), Passed(1.0), Passed(skill)));
    }
  }
  auto report = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(report.ok());
  REQUIRE(report->levels_size() == 5);
  CHECK(report->levels(3) == "model,direction");
  const v1::LiftRow& a = FindLift(*report, "model,direction", "a", "cutedsl2tirx");
  const v1::LiftRow& b = FindLift(*report, "model,direction", "b", "cutedsl2tirx");
  CHECK(a.adjustment() == "holm");
  const std::vector<double> holm =
      stats::HolmAdjust(std::vector<double>{a.wilcoxon().p_value(), b.wilcoxon().p_value()});
  CHECK(a.wilcoxon().p_adjusted() == Approx(holm[0]));
  CHECK(b.wilcoxon().p_adjusted() == Approx(holm[1]));
  std::vector<double> family_p;
  std::vector<double> family_adjusted;
  for (const v1::LiftRow& row : report->lift()) {
    if (row.level() != "family" || row.arm() != "skill") continue;
    CHECK(row.adjustment() == "bh");
    family_p.push_back(row.sign().p_value());
    family_adjusted.push_back(row.sign().p_adjusted());
  }
  REQUIRE(family_p.size() == 3);
  const std::vector<double> bh = stats::BenjaminiHochbergAdjust(family_p);
  for (size_t i = 0; i < bh.size(); ++i) CHECK(family_adjusted[i] == Approx(bh[i]));

  SECTION("custom levels") {
    v1::StatsOptions options;
    options.add_levels("family , model");
    auto custom = stats::ComputeStatsReport(cells, FastConfig(), options);
    REQUIRE(custom.ok());
    REQUIRE(custom->levels_size() == 1);
    CHECK(custom->levels(0) == "model,family");
    options.add_levels("direction,bogus");
    auto bad = stats::ComputeStatsReport(cells, FastConfig(), options);
    CHECK(FieldPath(bad.status()) == "options.levels[1]");
  }
  SECTION("reproducible: same seed, same report; another seed, other intervals") {
    auto again = stats::ComputeStatsReport(cells, FastConfig());
    REQUIRE(again.ok());
    CHECK(stats::StatsReportToJson(*again) == stats::StatsReportToJson(*report));
    v1::StatsConfig other = FastConfig();
    other.set_seed(99);
    auto reseeded = stats::ComputeStatsReport(cells, other);
    REQUIRE(reseeded.ok());
    CHECK(FindLift(*reseeded, "overall", "*", "*").delta_gm().se() !=
          FindLift(*report, "overall", "*", "*").delta_gm().se());
  }
}

TEST_CASE("edge cases: no cells, all failures, all ties, one problem") {
  SECTION("no cells") {
    auto report = stats::ComputeStatsReport({}, FastConfig());
    REQUIRE(report.ok());
    CHECK(report->n_resolved() == 0);
    CHECK(report->lift_size() == 0);
    const v1::AggregateRow& all = FindAggregate(*report, "*", "all", "all", "base");
    CHECK(all.n() == 0);
    CHECK(std::isnan(all.s()));
  }
  SECTION("every attempt failed: d = 0 everywhere") {
    std::vector<v1::CellReplicate> cells;
    for (int p = 0; p < 4; ++p) {
      cells.push_back(Cell("m", "cutedsl2tirx", "p" + std::to_string(p), v1::MOE, 0, Failed(),
                           Failed(), Failed()));
    }
    auto report = stats::ComputeStatsReport(cells, FastConfig());
    REQUIRE(report.ok());
    const v1::LiftRow& overall = FindLift(*report, "overall", "*", "*");
    CHECK(overall.delta_gm().value() == 0.0);
    CHECK(overall.delta_gm().percentile_low() == 0.0);
    CHECK(overall.delta_gm().bca_fallback());
    CHECK(overall.wilcoxon().p_value() == 1.0);
    CHECK(overall.mcnemar().both_failed() == 4);
    CHECK(FindAggregate(*report, "*", "all", "all", "skill").s() == 0.0);
    CHECK(FindStanding(*report, "skill", "level").n() == 4);
  }
  SECTION("one problem") {
    const std::vector<v1::CellReplicate> cells = {
        Cell("m", "cutedsl2tirx", "p0", v1::MOE, 0, Passed(1.0), Passed(1.0), Passed(2.0)),
        Cell("m", "cutedsl2tirx", "p0", v1::MOE, 1, Passed(1.0), Passed(1.0), Passed(4.0))};
    auto report = stats::ComputeStatsReport(cells, FastConfig());
    REQUIRE(report.ok());
    const v1::LiftRow& overall = FindLift(*report, "overall", "*", "*");
    CHECK(overall.n_problems() == 1);
    CHECK(overall.delta_gm().value() ==
          Approx(std::sqrt(8.0) - 1));  // exp((log 2 + log 4) / 2) - 1
    CHECK(overall.delta_gm().percentile_low() == Approx(std::sqrt(8.0) - 1));
    CHECK(overall.delta_gm().bca_fallback());
  }
}

TEST_CASE("invalid input names the field") {
  const v1::CellReplicate good =
      Cell("m", "cutedsl2tirx", "p1", v1::MOE, 0, Passed(1.0), Passed(1.0), Passed(1.0));
  auto path_of = [](std::vector<v1::CellReplicate> cells) {
    return FieldPath(stats::ValidateCellReplicates(cells));
  };
  SECTION("negative speedup") {
    v1::CellReplicate cell = good;
    cell.mutable_base()->set_speedup(-1);
    CHECK(path_of({good, cell}) == "cells[1].base.speedup");
  }
  SECTION("a skipped solo") {
    v1::CellReplicate cell = good;
    cell.mutable_base()->set_skipped(true);
    CHECK(path_of({cell}) == "cells[0].base.skipped");
  }
  SECTION("duplicate cell-replicate") { CHECK(path_of({good, good}) == "cells[1]"); }
  SECTION("missing skill and family") {
    v1::CellReplicate cell = good;
    cell.clear_skill();
    CHECK(path_of({cell}) == "cells[0].skill");
    cell = good;
    cell.clear_family();
    CHECK(path_of({cell}) == "cells[0].family");
  }
  SECTION("a problem in two families") {
    v1::CellReplicate cell = good;
    cell.set_replicate(1);
    cell.set_family(v1::ATTENTION);
    CHECK(path_of({good, cell}) == "cells[1].family");
  }
  SECTION("unknown direction without arm names") {
    v1::CellReplicate cell = good;
    cell.set_direction("placebo");
    CHECK(path_of({cell}) == "cells[0].source.arm");
    cell.mutable_source()->set_arm("solo_cutedsl");
    cell.mutable_base()->set_arm("solo_tirx");
    cell.mutable_skill()->set_arm("placebo_skill");
    CHECK(stats::ValidateCellReplicates(std::vector<v1::CellReplicate>{cell}).ok());
  }
  SECTION("negative usage") {
    v1::CellReplicate cell = good;
    cell.mutable_skill()->mutable_usage()->set_cost_usd(-1);
    CHECK(path_of({cell}) == "cells[0].skill.usage.cost_usd");
  }
  SECTION("config errors are under config.") {
    v1::StatsConfig config;
    config.set_clip_low(4);
    config.set_clip_high(2);
    auto report = stats::ComputeStatsReport(std::vector<v1::CellReplicate>{good}, config);
    CHECK(FieldPath(report.status()) == "config.clip_high");
    v1::StatsOptions options;
    options.set_confidence(1.5);
    CHECK(FieldPath(stats::ComputeStatsReport(std::vector<v1::CellReplicate>{good}, {}, options)
                        .status()) == "options.confidence");
  }
}

TEST_CASE("JSON has every key, NaN as null, enums by name") {
  const std::vector<v1::CellReplicate> cells = {
      Cell("m", "cutedsl2tirx", "p1", v1::MLP_NORM, 0, std::nullopt, Passed(1.0), Passed(1.1))};
  auto report = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(report.ok());
  const std::string json = stats::StatsReportToJson(*report, 0);
  CHECK(json.find("\"family\":\"mlp_norm\"") != std::string::npos);
  CHECK(json.find("\"q_source\":null") != std::string::npos);  // no source
  CHECK(json.find("\"standing\":\"source_unresolved\"") != std::string::npos);
  CHECK(json.find("\"tau\":{\"tau\":") != std::string::npos);
  CHECK(json.find("NaN") == std::string::npos);
  CHECK(json.find("\"bca_fallback\":true") != std::string::npos);  // one problem
}

namespace {

const v1::UsageRow& FindUsage(const v1::StatsReport& report, const std::string& model,
                              const std::string& arm) {
  for (const v1::UsageRow& row : report.usage()) {
    if (row.model() == model && row.arm() == arm) return row;
  }
  FAIL("no usage row " << model << "/" << arm);
  return report.usage(0);
}

v1::ArmResult WithState(v1::ArmResult arm, v1::AttemptState state) {
  arm.set_state(state);
  return arm;
}

v1::ArmResult WithCost(v1::ArmResult arm, double cost) {
  arm.mutable_usage()->set_cost_usd(cost);
  return arm;
}

}  // namespace

TEST_CASE("usage per arm counts the attempts that ran") {
  // Three skill arms of tirx2cutedsl: one finished (cost 1), one blocked (its source failed:
  // never ran), one failed after spending 0.5 before it was killed. Means are over the two
  // that ran, not the three (the bug: 1.5 / 3 instead of 1.5 / 2).
  v1::ArmResult source_failed = WithState(v1::ArmResult(), v1::ATTEMPT_FAILED);
  v1::ArmResult killed = WithState(v1::ArmResult(), v1::ATTEMPT_FAILED);
  killed.mutable_interrupted_usage()->set_cost_usd(0.5);
  killed.mutable_interrupted_usage()->set_input_tokens(100);
  killed.set_interrupted_tries(1);
  v1::ArmResult retried = WithCost(Passed(1.2), 1.0);
  retried.mutable_interrupted_usage()->set_cost_usd(0.25);
  retried.set_interrupted_tries(2);
  const std::vector<v1::CellReplicate> cells = {
      Cell("m", "tirx2cutedsl", "p1", v1::MOE, 0, WithCost(Passed(1.0), 2), Passed(1.0), retried),
      Cell("m", "tirx2cutedsl", "p2", v1::MOE, 0, source_failed, Passed(1.0),
           WithState(v1::ArmResult(), v1::ATTEMPT_BLOCKED)),
      Cell("m", "tirx2cutedsl", "p3", v1::MOE, 0, WithCost(Passed(1.0), 2), Passed(1.0), killed),
      // An unresolved arm without state or usage (given by hand): it did not run either.
      Cell("m", "tirx2cutedsl", "p4", v1::MOE, 0, WithCost(Passed(1.0), 2), Passed(1.0),
           Unresolved()),
  };
  auto report = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(report.ok());
  const v1::UsageRow& skill = FindUsage(*report, "m", "tirx2cutedsl_skill");
  CHECK(skill.attempts() == 2);
  CHECK(skill.unresolved() == 1);
  CHECK(skill.not_run() == 2);
  CHECK(skill.blocked() == 1);
  CHECK(skill.skipped() == 0);
  CHECK(skill.cost_usd() == Approx(1.75));  // 1 + 0.25 (two retries) + 0.5 (killed)
  CHECK(skill.interrupted_tries() == 3);
  CHECK(skill.interrupted_cost_usd() == Approx(0.75));
  CHECK(skill.mean_cost_usd() == Approx(1.75 / 2));
  const v1::UsageRow& source = FindUsage(*report, "m", "solo_tirx");
  CHECK(source.attempts() == 3);  // the failed one has no usage: it never got as far
  CHECK(source.not_run() == 1);
  CHECK(source.blocked() == 0);

  SECTION("a state that contradicts resolved is an error naming the field") {
    std::vector<v1::CellReplicate> bad = cells;
    bad[0].mutable_skill()->set_state(v1::ATTEMPT_BLOCKED);
    auto status = stats::ValidateCellReplicates(bad);
    CHECK(FieldPath(status) == "cells[0].skill.state");
    bad = cells;
    bad[1].mutable_skill()->set_state(v1::ATTEMPT_FINISHED);
    CHECK(FieldPath(stats::ValidateCellReplicates(bad)) == "cells[1].skill.state");
    bad = cells;
    bad[2].mutable_skill()->mutable_interrupted_usage()->set_cost_usd(-1);
    CHECK(FieldPath(stats::ValidateCellReplicates(bad)) ==
          "cells[2].skill.interrupted_usage.cost_usd");
  }
}

TEST_CASE("cell-replicates, coverage and R@t per cell, as the published harness reports them") {
  // p1, replicate 0: solo_cutedsl passed 1.0, solo_tirx passed 0.9; replicate 1: solo_cutedsl
  // pending, solo_tirx failed. So p1 cutedsl2tirx has two comparisons (the second with its
  // source unresolved) and p1 tirx2cutedsl one of two cell-replicates. p2 cutedsl2tirx: the
  // source failed, the skill arm skipped.
  const std::vector<v1::CellReplicate> cells = {
      Cell("m", "cutedsl2tirx", "p1", v1::MOE, 0, Passed(1.0), Passed(0.9), Passed(2.5)),
      Cell("m", "cutedsl2tirx", "p1", v1::MOE, 1, Unresolved(), Failed(), Passed(0.6)),
      Cell("m", "tirx2cutedsl", "p1", v1::MOE, 0, Passed(0.9), Passed(1.0), Failed()),
      Cell("m", "tirx2cutedsl", "p1", v1::MOE, 1, Failed(), Unresolved(), Passed(1.0)),
      Cell("m", "cutedsl2tirx", "p2", v1::ATTENTION, 0, Failed(), Passed(1.3), Skipped()),
  };
  auto report = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(report.ok());
  const v1::AggregateRow& all = FindAggregate(*report, "*", "all", "all", "lift");
  CHECK(all.n_cell_replicates() == 5);
  CHECK(all.n() == 4);
  CHECK(all.source_coverage() == Approx(2.0 / 4));
  CHECK(all.skill_coverage() == Approx(3.0 / 4));
  const v1::AggregateRow& cell = FindAggregate(*report, "*", "by_cell", "p1/tirx2cutedsl", "base");
  CHECK(cell.n_cell_replicates() == 2);
  CHECK(cell.n() == 1);
  CHECK(cell.r_at(0) == 1.0);
  const v1::AggregateRow& c2t = FindAggregate(*report, "m", "by_cell", "p1/cutedsl2tirx", "skill");
  CHECK(c2t.n() == 2);
  CHECK(c2t.r_at(0) == 1.0);  // both passed
  CHECK(c2t.r_at(2) == 0.5);  // R@1: 2.5 only
  CHECK(c2t.s() == Approx(100 * (1 + 1 + 0.5 + 0.5 + 0) / 5));
  // A cell without comparisons is still listed (the harness lists every cell).
  const std::vector<v1::CellReplicate> pending = {
      Cell("m", "cutedsl2tirx", "p3", v1::MOE, 0, Passed(1.0), Unresolved(), Passed(2.0))};
  auto empty = stats::ComputeStatsReport(pending, FastConfig());
  REQUIRE(empty.ok());
  const v1::AggregateRow& none = FindAggregate(*empty, "*", "by_cell", "p3/cutedsl2tirx", "lift");
  CHECK(none.n() == 0);
  CHECK(none.n_cell_replicates() == 1);
  CHECK(std::isnan(none.s()));
  CHECK(std::isnan(none.source_coverage()));
  // Groups defined by outcomes count their comparisons.
  CHECK(FindAggregate(*report, "*", "with_skill", "with_skill", "base").n_cell_replicates() == 3);
}

TEST_CASE("the R@t and S lifts carry bootstrap intervals; the standing table a ΔGM interval") {
  std::vector<v1::CellReplicate> cells;
  const double base[] = {0.8, 1.2, 0.9, 2.1, 1.0, 0.7};
  const double skill[] = {1.3, 1.1, 2.2, 2.5, 0.9, 1.6};
  for (int i = 0; i < 6; ++i) {
    cells.push_back(Cell("m", "cutedsl2tirx", "p" + std::to_string(i), v1::MOE, 0,
                         Passed(i % 2 ? 3.0 : 0.5), Passed(base[i]), Passed(skill[i])));
  }
  auto report = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(report.ok());
  const v1::LiftRow& lift = FindLift(*report, "overall", "*", "*");
  const v1::AggregateRow& harness = FindAggregate(*report, "*", "all", "all", "lift");
  REQUIRE(lift.r_at_lift_size() == 5);
  for (int t = 0; t < 5; ++t) {
    CHECK(lift.r_at_lift(t).value() == Approx(harness.r_at(t)).margin(1e-12));
    CHECK(lift.r_at_lift(t).percentile_low() <= lift.r_at_lift(t).value());
    CHECK(lift.r_at_lift(t).percentile_high() >= lift.r_at_lift(t).value());
  }
  CHECK(lift.s_lift().value() == Approx(harness.s()));
  CHECK(lift.s_lift().percentile_low() < lift.s_lift().percentile_high());
  // R@1 lift: base clears 1 on p1, p3, p4 (3); skill on p0, p1, p2, p3, p5 (5): +2/6.
  CHECK(lift.r_at_lift(2).value() == Approx(2.0 / 6));
  const v1::StandingRow& above = FindStanding(*report, "skill", "above");
  CHECK(above.n_problems() == above.n());
  CHECK(above.delta_gm_low() <= above.delta_gm());
  CHECK(above.delta_gm_high() >= above.delta_gm());
  CHECK(above.delta_gm_low() < above.delta_gm_high());
}

TEST_CASE("measurement noise: speedup replicates from timing samples") {
  const std::vector<double> kernel = {1.0, 1.1, 0.9, 1.05, 0.95, 1.2, 0.8};
  const std::vector<double> eager = {2.0, 2.2, 1.8, 2.1, 1.9, 2.4, 1.6};
  const std::vector<double> a = stats::SpeedupReplicates(2.0, kernel, eager, 300, 7);
  REQUIRE(a.size() == 300);
  CHECK(a == stats::SpeedupReplicates(2.0, kernel, eager, 300, 7));  // reproducible
  double low = a[0], high = a[0], mean = 0;
  for (double s : a) {
    low = std::min(low, s);
    high = std::max(high, s);
    mean += s / a.size();
  }
  CHECK(low < 2.0);
  CHECK(high > 2.0);
  CHECK(mean == Approx(2.0).epsilon(0.05));
  // Constant samples: no noise, every replicate is the point.
  const std::vector<double> flat(9, 1.0);
  for (double s : stats::SpeedupReplicates(1.7, flat, flat, 50, 3)) CHECK(s == 1.7);
  // Too few samples, or a zero median: none.
  CHECK(stats::SpeedupReplicates(1.0, {1.0}, eager, 10, 1).empty());
  CHECK(stats::SpeedupReplicates(1.0, {0.0, 0.0, 0.0}, eager, 10, 1).empty());
  CHECK(stats::SpeedupReplicates(kNaN, kernel, eager, 10, 1).empty());
}

TEST_CASE("measurement noise widens the intervals where timing samples exist, and says so") {
  // Speedups whose timing is pure noise around 1: each arm's kernel and eager samples come
  // from the same spread. Without the samples, the intervals see only the sampling of
  // problems; with them, the judge's timing noise too.
  std::vector<v1::CellReplicate> cells;
  const auto noisy = [](double speedup, int seed) {
    v1::ArmResult arm = Passed(speedup);
    for (int i = 0; i < 15; ++i) {
      const double jitter = 0.3 * std::sin(1.7 * i + seed);
      arm.add_kernel_samples_ms(1.0 + jitter);
      arm.add_eager_samples_ms(1.0 - 0.8 * jitter * std::cos(seed + i));
    }
    return arm;
  };
  for (int p = 0; p < 8; ++p) {
    cells.push_back(Cell("m", "cutedsl2tirx", "p" + std::to_string(p), v1::MOE, 0, Passed(1.0),
                         noisy(1.0 + 0.02 * p, p), noisy(1.0 + 0.03 * (p % 3), 100 + p)));
  }
  v1::StatsConfig config = FastConfig();
  auto with_noise = stats::ComputeStatsReport(cells, config);
  config.set_point_speedups_only(true);
  auto without = stats::ComputeStatsReport(cells, config);
  REQUIRE(with_noise.ok());
  REQUIRE(without.ok());
  CHECK(with_noise->measurement_noise().included());
  CHECK(with_noise->measurement_noise().with_samples() == 16);
  CHECK(with_noise->measurement_noise().passed_attempts() == 24);
  CHECK(with_noise->measurement_noise().note().find("16 of 24 passed attempts") !=
        std::string::npos);
  CHECK_FALSE(without->measurement_noise().included());
  CHECK(without->measurement_noise().note().find("not included") != std::string::npos);
  const v1::Estimate& noisy_gm = FindLift(*with_noise, "overall", "*", "*").delta_gm();
  const v1::Estimate& point_gm = FindLift(*without, "overall", "*", "*").delta_gm();
  CHECK(noisy_gm.value() == point_gm.value());  // the estimate itself is the same
  CHECK(noisy_gm.percentile_high() - noisy_gm.percentile_low() >
        1.5 * (point_gm.percentile_high() - point_gm.percentile_low()));
  // Without any samples at all, the report says the intervals carry no measurement noise.
  for (v1::CellReplicate& cell : cells) {
    cell.mutable_base()->clear_kernel_samples_ms();
    cell.mutable_skill()->clear_eager_samples_ms();
  }
  auto bare = stats::ComputeStatsReport(cells, FastConfig());
  REQUIRE(bare.ok());
  CHECK_FALSE(bare->measurement_noise().included());
  CHECK(bare->measurement_noise().note().find("none of the 24 passed attempts") !=
        std::string::npos);
  CHECK(FindLift(*bare, "overall", "*", "*").delta_gm().percentile_low() ==
        point_gm.percentile_low());
}
