#include "libmkb/stats/comparisons.h"

#include <limits>

namespace mkb::stats {

const char* StandingName(Standing standing) {
  switch (standing) {
    case Standing::kAbove:
      return "above";
    case Standing::kLevel:
      return "level";
    case Standing::kBelow:
      return "below";
    case Standing::kSourceUnresolved:
      return "source_unresolved";
  }
  return "";
}

const char* OutcomeName(double d, double tau) {
  if (d > tau) return "help";
  if (d < -tau) return "harm";
  return "neutral";
}

std::vector<Comparison> BuildComparisons(absl::Span<const v1::CellReplicate> cells,
                                         const v1::StatsConfig& config) {
  std::vector<Comparison> out;
  for (const v1::CellReplicate& cell : cells) {
    const bool skipped = cell.skill().skipped();
    if (!cell.base().resolved() || !(cell.skill().resolved() || skipped)) continue;
    Comparison c;
    c.cell = &cell;
    c.base = OutcomeOf(cell.base(), config);
    c.skill_skipped = skipped;
    c.skill = skipped ? c.base : OutcomeOf(cell.skill(), config);
    c.d = c.skill.q - c.base.q;
    c.source_resolved = cell.has_source() && cell.source().resolved();
    if (c.source_resolved) {
      c.source = OutcomeOf(cell.source(), config);
      c.standing = c.source.tier > c.base.tier    ? Standing::kAbove
                   : c.source.tier == c.base.tier ? Standing::kLevel
                                                  : Standing::kBelow;
    }
    c.has_control = cell.has_control() && cell.control().resolved();
    if (c.has_control) {
      c.control = OutcomeOf(cell.control(), config);
      c.d_control = c.control.q - c.base.q;
    }
    out.push_back(c);
  }
  return out;
}

v1::ComparisonRow ComparisonRowOf(const Comparison& c, double tau) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  v1::ComparisonRow row;
  row.set_model(c.cell->model());
  row.set_direction(c.cell->direction());
  row.set_problem_slug(c.cell->problem_slug());
  row.set_family(c.cell->family());
  row.set_replicate(c.cell->replicate());
  row.set_skill_skipped(c.skill_skipped);
  row.set_source_resolved(c.source_resolved);
  row.set_source_passed(c.source_resolved && c.source.passed);
  row.set_base_passed(c.base.passed);
  row.set_skill_passed(c.skill.passed);
  row.set_source_speedup(c.source_resolved ? c.source.speedup : kNaN);
  row.set_base_speedup(c.base.speedup);
  row.set_skill_speedup(c.skill.speedup);
  row.set_q_source(c.source_resolved ? c.source.q : kNaN);
  row.set_q_base(c.base.q);
  row.set_q_skill(c.skill.q);
  row.set_d(c.d);
  row.set_tier_source(c.source_resolved ? c.source.tier : -1);
  row.set_tier_base(c.base.tier);
  row.set_tier_skill(c.skill.tier);
  row.set_standing(StandingName(c.standing));
  row.set_outcome(OutcomeName(c.d, tau));
  row.set_has_control(c.has_control);
  row.set_control_passed(c.has_control && c.control.passed);
  row.set_control_speedup(c.has_control ? c.control.speedup : kNaN);
  row.set_q_control(c.has_control ? c.control.q : kNaN);
  row.set_d_control(c.has_control ? c.d_control : kNaN);
  row.set_tier_control(c.has_control ? c.control.tier : -1);
  row.set_outcome_control(c.has_control ? OutcomeName(c.d_control, tau) : "");
  return row;
}

}  // namespace mkb::stats
