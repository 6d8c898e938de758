#include "libmkb/stats/relative_standing.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/stats/bootstrap.h"
#include "libmkb/stats/cell_replicates.h"
#include "libmkb/stats/proportions.h"

namespace mkb::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

absl::StatusOr<v1::StandingRow> StandingOf(const std::vector<const Comparison*>& group,
                                           bool control, Standing standing,
                                           const PairedLiftOptions& options,
                                           const std::string& label) {
  v1::StandingRow row;
  row.set_arm(control ? "control" : "skill");
  row.set_standing(StandingName(standing));
  int64_t n = 0, help = 0, harm = 0;
  double sum_d = 0;
  std::vector<const Comparison*> members;
  for (const Comparison* c : group) {
    if (c->standing != standing || (control && !c->has_control)) continue;
    const double d = control ? c->d_control : c->d;
    ++n;
    help += d > options.tau;
    harm += d < -options.tau;
    sum_d += d;
    members.push_back(c);
  }
  const ProportionInterval help_ci = WilsonInterval(help, n, options.confidence);
  const ProportionInterval harm_ci = WilsonInterval(harm, n, options.confidence);
  row.set_n(static_cast<int>(n));
  row.set_n_help(static_cast<int>(help));
  row.set_n_harm(static_cast<int>(harm));
  row.set_help_rate(help_ci.rate);
  row.set_help_low(help_ci.low);
  row.set_help_high(help_ci.high);
  row.set_harm_rate(harm_ci.rate);
  row.set_harm_low(harm_ci.low);
  row.set_harm_high(harm_ci.high);
  const double mean = n > 0 ? sum_d / static_cast<double>(n) : kNaN;
  row.set_mean_d(mean);
  row.set_delta_gm(std::exp(mean) - 1);

  const std::vector<ProblemCluster> clusters =
      ProblemClusters(members, control ? PairedArm::kControl : PairedArm::kSkill, options);
  row.set_n_problems(static_cast<int>(clusters.size()));
  BootstrapOptions bootstrap;
  bootstrap.resamples = options.resamples;
  bootstrap.confidence = options.confidence;
  bootstrap.seed = GroupSeed(options.seed, label);
  MKB_ASSIGN_OR_RETURN(const PairedLiftEstimates estimates,
                       BootstrapPairedLift(absl::Span<const ProblemCluster>(clusters), bootstrap));
  row.set_delta_gm_low(estimates.delta_gm.bca_low);
  row.set_delta_gm_high(estimates.delta_gm.bca_high);
  row.set_delta_gm_bca_fallback(estimates.delta_gm.bca_fallback);
  return row;
}

}  // namespace

absl::StatusOr<std::vector<v1::StandingRow>> RelativeStanding(
    absl::Span<const Comparison> comparisons, absl::Span<const Level> levels,
    const PairedLiftOptions& options) {
  std::vector<v1::StandingRow> out;
  for (const Level& level : levels) {
    const auto groups = GroupComparisons(comparisons, level);
    for (bool control : {false, true}) {
      for (const auto& [key, group] : groups) {
        bool any_control = false;
        for (const Comparison* c : group) any_control |= c->has_control;
        if (control && !any_control) continue;
        for (Standing standing : {Standing::kAbove, Standing::kLevel, Standing::kBelow}) {
          const std::string label =
              absl::StrCat(level.Name(), "|", key.model, "|", key.direction, "|", key.FamilyKey(),
                           "|", control ? "control" : "skill", "|", StandingName(standing));
          MKB_ASSIGN_OR_RETURN(v1::StandingRow row,
                               StandingOf(group, control, standing, options, label));
          row.set_level(level.Name());
          row.set_model(key.model);
          row.set_direction(key.direction);
          row.set_family(key.FamilyKey());
          out.push_back(std::move(row));
        }
      }
    }
  }
  return out;
}

std::vector<v1::TierRow> TierCounts(absl::Span<const Comparison> comparisons, int thresholds) {
  std::set<std::string> models;
  for (const Comparison& c : comparisons) models.insert(c.cell->model());
  std::vector<std::string> order(models.begin(), models.end());
  order.push_back(kAllKey);
  std::vector<v1::TierRow> out;
  for (const std::string& model : order) {
    for (Role role : {Role::kSource, Role::kBase, Role::kSkill, Role::kControl}) {
      v1::TierRow row;
      row.set_model(model);
      row.set_role(RoleName(role));
      row.mutable_counts()->Resize(thresholds + 1, 0);
      for (const Comparison& c : comparisons) {
        if (model != kAllKey && c.cell->model() != model) continue;
        const ArmOutcome* outcome = nullptr;
        switch (role) {
          case Role::kSource:
            outcome = c.source_resolved ? &c.source : nullptr;
            break;
          case Role::kBase:
            outcome = &c.base;
            break;
          case Role::kSkill:
            outcome = &c.skill;
            break;
          case Role::kControl:
            outcome = c.has_control ? &c.control : nullptr;
            break;
        }
        if (outcome == nullptr) continue;
        row.set_n(row.n() + 1);
        row.set_counts(outcome->tier, row.counts(outcome->tier) + 1);
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace mkb::stats
