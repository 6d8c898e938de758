#include "libmkb/stats/paired_lift.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/stats/bootstrap.h"
#include "libmkb/stats/multiple_comparisons.h"
#include "libmkb/stats/outcome.h"

namespace mkb::stats {
namespace {

const char* ArmName(PairedArm arm) { return arm == PairedArm::kSkill ? "skill" : "control"; }

void SetEstimate(const BootstrapEstimate& from, v1::Estimate* to) {
  to->set_value(from.value);
  to->set_se(from.se);
  to->set_percentile_low(from.percentile_low);
  to->set_percentile_high(from.percentile_high);
  to->set_bca_low(from.bca_low);
  to->set_bca_high(from.bca_high);
  to->set_bca_fallback(from.bca_fallback);
}

// Adds one comparison, with these speedups of its base and its arm, to `totals`.
void AddPair(bool base_passed, double base_speedup, bool arm_passed, double arm_speedup,
             const PairedLiftOptions& options, ClusterTotals* totals) {
  const v1::StatsConfig& config = options.config;
  const double d =
      Quality(arm_passed, arm_speedup, config) - Quality(base_passed, base_speedup, config);
  totals->sum_d += d;
  totals->n += 1;
  totals->n_help += d > options.tau;
  totals->n_harm += d < -options.tau;
  for (int i = 0; i < config.thresholds_size(); ++i) {
    const double t = config.thresholds(i);
    totals->hit_lift[i] += static_cast<int64_t>(arm_passed && arm_speedup >= t) -
                           static_cast<int64_t>(base_passed && base_speedup >= t);
  }
}

// The speedup of replicate m: the noise replicate where there is one, else the point value.
double SpeedupAt(const ArmOutcome& outcome, const std::vector<double>* noise, size_t m) {
  return noise != nullptr ? (*noise)[m] : outcome.speedup;
}

// Fills the row of one group and arm, and appends its per-problem rows.
absl::Status LiftOfGroup(const std::vector<const Comparison*>& group, PairedArm arm,
                         const Level& level, const GroupKey& key, const PairedLiftOptions& options,
                         v1::LiftRow* row, std::vector<v1::ProblemLiftRow>* problems) {
  row->set_level(level.Name());
  row->set_model(key.model);
  row->set_direction(key.direction);
  row->set_family(key.FamilyKey());
  row->set_arm(ArmName(arm));

  std::map<std::string, v1::Family> family_of;
  int64_t both = 0, base_only = 0, arm_only = 0, neither = 0, skipped = 0, n = 0, help = 0,
          harm = 0;
  double sum_d = 0;
  for (const Comparison* c : group) {
    const double d = arm == PairedArm::kSkill ? c->d : c->d_control;
    const bool arm_passed = arm == PairedArm::kSkill ? c->skill.passed : c->control.passed;
    family_of[c->cell->problem_slug()] = c->cell->family();
    sum_d += d;
    ++n;
    help += d > options.tau;
    harm += d < -options.tau;
    skipped += arm == PairedArm::kSkill && c->skill_skipped;
    both += c->base.passed && arm_passed;
    base_only += c->base.passed && !arm_passed;
    arm_only += !c->base.passed && arm_passed;
    neither += !c->base.passed && !arm_passed;
  }
  std::vector<std::string> slugs;
  const std::vector<ProblemCluster> clusters = ProblemClusters(group, arm, options, &slugs);
  row->set_n_problems(static_cast<int>(clusters.size()));
  row->set_n_comparisons(static_cast<int>(n));
  row->set_n_skipped(static_cast<int>(skipped));
  row->set_n_help(static_cast<int>(help));
  row->set_n_harm(static_cast<int>(harm));
  row->set_mean_d(sum_d / static_cast<double>(n));

  std::vector<double> problem_means;
  for (size_t i = 0; i < clusters.size(); ++i) {
    const ClusterTotals& p = clusters[i].observed;
    const double mean = p.sum_d / static_cast<double>(p.n);
    problem_means.push_back(mean);
    v1::ProblemLiftRow problem;
    problem.set_level(row->level());
    problem.set_model(row->model());
    problem.set_direction(row->direction());
    problem.set_family(row->family());
    problem.set_arm(row->arm());
    problem.set_problem_slug(slugs[i]);
    problem.set_problem_family(family_of[slugs[i]]);
    problem.set_n_comparisons(static_cast<int>(p.n));
    problem.set_mean_d(mean);
    problem.set_lift(std::exp(mean) - 1);
    problem.set_n_help(static_cast<int>(p.n_help));
    problem.set_n_harm(static_cast<int>(p.n_harm));
    problems->push_back(std::move(problem));
  }

  BootstrapOptions bootstrap;
  bootstrap.resamples = options.resamples;
  bootstrap.confidence = options.confidence;
  bootstrap.seed =
      GroupSeed(options.seed, absl::StrCat(row->level(), "|", row->model(), "|", row->direction(),
                                           "|", row->family(), "|", row->arm()));
  MKB_ASSIGN_OR_RETURN(const PairedLiftEstimates estimates,
                       BootstrapPairedLift(absl::Span<const ProblemCluster>(clusters), bootstrap));
  SetEstimate(estimates.delta_gm, row->mutable_delta_gm());
  SetEstimate(estimates.help_rate, row->mutable_help_rate());
  SetEstimate(estimates.harm_rate, row->mutable_harm_rate());
  for (const BootstrapEstimate& e : estimates.r_at_lift) SetEstimate(e, row->add_r_at_lift());
  SetEstimate(estimates.s_lift, row->mutable_s_lift());

  MKB_ASSIGN_OR_RETURN(const WilcoxonTest wilcoxon,
                       WilcoxonSignedRank(problem_means, options.wilcoxon));
  v1::WilcoxonResult* w = row->mutable_wilcoxon();
  w->set_n(wilcoxon.n);
  w->set_n_zero(wilcoxon.n_zero);
  w->set_w_plus(wilcoxon.w_plus);
  w->set_w_minus(wilcoxon.w_minus);
  w->set_statistic(wilcoxon.statistic);
  w->set_z(wilcoxon.z);
  w->set_p_value(wilcoxon.p_value);
  w->set_p_adjusted(wilcoxon.p_value);
  w->set_method(wilcoxon.method);

  MKB_ASSIGN_OR_RETURN(const SignTest sign, SignTestOf(problem_means));
  v1::SignTestResult* s = row->mutable_sign();
  s->set_n_positive(sign.n_positive);
  s->set_n_negative(sign.n_negative);
  s->set_n_zero(sign.n_zero);
  s->set_p_value(sign.p_value);
  s->set_p_adjusted(sign.p_value);

  const McNemarTest mcnemar = McNemarExact(both, base_only, arm_only, neither);
  v1::McNemarResult* m = row->mutable_mcnemar();
  m->set_n(static_cast<int>(mcnemar.n));
  m->set_both_passed(static_cast<int>(mcnemar.both_passed));
  m->set_base_only(static_cast<int>(mcnemar.base_only));
  m->set_skill_only(static_cast<int>(mcnemar.skill_only));
  m->set_both_failed(static_cast<int>(mcnemar.both_failed));
  m->set_p_value(mcnemar.p_value);
  m->set_p_adjusted(mcnemar.p_value);
  return absl::OkStatus();
}

// Replaces the p_adjusted fields of `rows` by the adjustment across them.
void Adjust(const std::vector<v1::LiftRow*>& rows, const std::string& method) {
  if (method == "none") return;
  const auto adjust = [&](auto get, auto set) {
    std::vector<double> p;
    for (v1::LiftRow* row : rows) p.push_back(get(*row));
    const std::vector<double> adjusted =
        method == "bh" ? BenjaminiHochbergAdjust(p) : HolmAdjust(p);
    for (size_t i = 0; i < rows.size(); ++i) set(rows[i], adjusted[i]);
  };
  adjust([](const v1::LiftRow& r) { return r.wilcoxon().p_value(); },
         [](v1::LiftRow* r, double p) { r->mutable_wilcoxon()->set_p_adjusted(p); });
  adjust([](const v1::LiftRow& r) { return r.sign().p_value(); },
         [](v1::LiftRow* r, double p) { r->mutable_sign()->set_p_adjusted(p); });
  adjust([](const v1::LiftRow& r) { return r.mcnemar().p_value(); },
         [](v1::LiftRow* r, double p) { r->mutable_mcnemar()->set_p_adjusted(p); });
}

}  // namespace

std::vector<ProblemCluster> ProblemClusters(absl::Span<const Comparison* const> group,
                                            PairedArm arm, const PairedLiftOptions& options,
                                            std::vector<std::string>* slugs) {
  std::map<std::string, std::vector<const Comparison*>> by_problem;  // sorted by slug
  for (const Comparison* c : group) {
    if (arm == PairedArm::kControl && !c->has_control) continue;
    by_problem[c->cell->problem_slug()].push_back(c);
  }
  const size_t thresholds = options.config.thresholds_size();
  const size_t replicates = static_cast<size_t>(std::max(0, options.config.timing_resamples()));
  std::vector<ProblemCluster> out;
  for (const auto& [slug, members] : by_problem) {
    if (slugs != nullptr) slugs->push_back(slug);
    ProblemCluster& cluster = out.emplace_back();
    cluster.observed.hit_lift.assign(thresholds, 0);
    bool noisy = false;
    for (const Comparison* c : members) {
      const ArmOutcome& other = arm == PairedArm::kSkill ? c->skill : c->control;
      const std::vector<double>* other_noise =
          arm == PairedArm::kSkill ? c->skill_noise : c->control_noise;
      AddPair(c->base.passed, c->base.speedup, other.passed, other.speedup, options,
              &cluster.observed);
      noisy |= c->base_noise != nullptr || other_noise != nullptr;
    }
    if (!noisy || replicates == 0) continue;
    cluster.noise.resize(replicates);
    for (size_t m = 0; m < replicates; ++m) {
      ClusterTotals& totals = cluster.noise[m];
      totals.hit_lift.assign(thresholds, 0);
      for (const Comparison* c : members) {
        const ArmOutcome& other = arm == PairedArm::kSkill ? c->skill : c->control;
        const std::vector<double>* other_noise =
            arm == PairedArm::kSkill ? c->skill_noise : c->control_noise;
        AddPair(c->base.passed, SpeedupAt(c->base, c->base_noise, m), other.passed,
                SpeedupAt(other, other_noise, m), options, &totals);
      }
    }
  }
  return out;
}

absl::StatusOr<PairedLiftTables> PairedLift(absl::Span<const Comparison> comparisons,
                                            absl::Span<const Level> levels,
                                            const PairedLiftOptions& options) {
  PairedLiftTables out;
  for (const Level& level : levels) {
    const auto groups = GroupComparisons(comparisons, level);
    const std::string method = level.family                       ? "bh"
                               : (level.model || level.direction) ? "holm"
                                                                  : "none";
    for (PairedArm arm : {PairedArm::kSkill, PairedArm::kControl}) {
      const size_t first = out.lift.size();
      for (const auto& [key, members] : groups) {
        std::vector<const Comparison*> group;
        for (const Comparison* c : members) {
          if (arm == PairedArm::kSkill || c->has_control) group.push_back(c);
        }
        if (group.empty()) continue;
        v1::LiftRow row;
        MKB_RETURN_IF_ERROR(LiftOfGroup(group, arm, level, key, options, &row, &out.problems));
        row.set_adjustment(method);
        out.lift.push_back(std::move(row));
      }
      std::vector<v1::LiftRow*> rows;
      for (size_t i = first; i < out.lift.size(); ++i) rows.push_back(&out.lift[i]);
      Adjust(rows, method);
    }
  }
  return out;
}

}  // namespace mkb::stats
