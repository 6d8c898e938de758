#include "libmkb/stats/aggregates.h"

#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "libmkb/model/names.h"

namespace mkb::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using CellFilter = std::function<bool(const v1::CellReplicate&)>;
using Filter = std::function<bool(const Comparison&)>;

// How a group is defined: by a property of its cell-replicates (all, a direction, a family, a
// cell), so that its unresolved cell-replicates count in n_cell_replicates; or by outcomes
// (with_skill, by source verdict), so that only its comparisons are known.
struct GroupFilter {
  CellFilter cells;  // set for groups defined by cell-replicates
  Filter comparisons;
};

// Appends the base, skill and lift rows of a group.
void AddGroup(absl::Span<const v1::CellReplicate> cells, absl::Span<const Comparison> comparisons,
              const v1::StatsConfig& config, const std::string& model, const std::string& split,
              const std::string& group, const GroupFilter& filter, bool keep_empty,
              std::vector<v1::AggregateRow>* out) {
  const int thresholds = config.thresholds_size();
  std::vector<int64_t> base_hits(thresholds, 0);
  std::vector<int64_t> skill_hits(thresholds, 0);
  int64_t n = 0;
  int64_t source_passed = 0;
  int64_t skill_ran = 0;
  for (const Comparison& c : comparisons) {
    if (!filter.comparisons(c)) continue;
    ++n;
    source_passed += c.source_resolved && c.source.passed;
    skill_ran += !c.skill_skipped;
    for (int i = 0; i < thresholds; ++i) {
      const double t = config.thresholds(i);
      base_hits[i] += c.base.passed && c.base.speedup >= t;
      skill_hits[i] += c.skill.passed && c.skill.speedup >= t;
    }
  }
  int64_t n_cells = n;
  if (filter.cells) {
    n_cells = 0;
    for (const v1::CellReplicate& cell : cells) n_cells += filter.cells(cell);
  }
  if (n_cells == 0 && !keep_empty) return;
  v1::AggregateRow base;
  v1::AggregateRow skill;
  v1::AggregateRow lift;
  const double share = n > 0 ? 1.0 / static_cast<double>(n) : kNaN;
  for (auto [row, arm] : {std::pair{&base, "base"}, {&skill, "skill"}, {&lift, "lift"}}) {
    row->set_model(model);
    row->set_split(split);
    row->set_group(group);
    row->set_arm(arm);
    row->set_n(static_cast<int>(n));
    row->set_n_cell_replicates(static_cast<int>(n_cells));
    row->set_source_coverage(static_cast<double>(source_passed) * share);
    row->set_skill_coverage(static_cast<double>(skill_ran) * share);
  }
  double base_sum = 0;
  double skill_sum = 0;
  for (int i = 0; i < thresholds; ++i) {
    const double rb = static_cast<double>(base_hits[i]) * share;
    const double rs = static_cast<double>(skill_hits[i]) * share;
    base.add_r_at(rb);
    skill.add_r_at(rs);
    lift.add_r_at(rs - rb);
    base_sum += rb;
    skill_sum += rs;
  }
  const double s_base = 100 * base_sum / thresholds;
  const double s_skill = 100 * skill_sum / thresholds;
  base.set_s(s_base);
  skill.set_s(s_skill);
  lift.set_s(s_skill - s_base);
  out->push_back(std::move(base));
  out->push_back(std::move(skill));
  out->push_back(std::move(lift));
}

// A group of cell-replicates with a property: its cells and its comparisons alike.
GroupFilter OfCells(const std::string& model, CellFilter property) {
  CellFilter cells = [model, property](const v1::CellReplicate& cell) {
    return (model == kAllKey || cell.model() == model) && property(cell);
  };
  return GroupFilter{cells, [cells](const Comparison& c) { return cells(*c.cell); }};
}

// A group of comparisons with an outcome.
GroupFilter OfComparisons(const std::string& model, Filter outcome) {
  return GroupFilter{nullptr, [model, outcome](const Comparison& c) {
                       return (model == kAllKey || c.cell->model() == model) && outcome(c);
                     }};
}

void AddSplits(absl::Span<const v1::CellReplicate> cells, absl::Span<const Comparison> comparisons,
               const v1::StatsConfig& config, const std::string& model,
               std::vector<v1::AggregateRow>* out) {
  const auto add = [&](const char* split, const std::string& group, const GroupFilter& filter,
                       bool keep_empty) {
    AddGroup(cells, comparisons, config, model, split, group, filter, keep_empty, out);
  };
  add("all", "all", OfCells(model, [](const v1::CellReplicate&) { return true; }), true);
  add("with_skill", "with_skill",
      OfComparisons(model, [](const Comparison& c) { return !c.skill_skipped; }), false);
  const std::pair<const char*, Filter> verdicts[] = {
      {"source_passed", [](const Comparison& c) { return c.source_resolved && c.source.passed; }},
      {"source_failed", [](const Comparison& c) { return c.source_resolved && !c.source.passed; }},
      {"source_unresolved", [](const Comparison& c) { return !c.source_resolved; }},
  };
  for (const auto& [group, filter] : verdicts) {
    add("by_source_verdict", group, OfComparisons(model, filter), false);
  }
  std::set<std::string> directions;
  std::set<std::pair<std::string, std::string>> cell_keys;  // problem, direction
  for (const v1::CellReplicate& cell : cells) {
    directions.insert(cell.direction());
    cell_keys.insert({cell.problem_slug(), cell.direction()});
  }
  for (const std::string& direction : directions) {
    add("by_direction", direction,
        OfCells(model,
                [direction](const v1::CellReplicate& c) { return c.direction() == direction; }),
        false);
  }
  for (v1::Family family : AllFamilies()) {
    add("by_family", FamilyName(family),
        OfCells(model, [family](const v1::CellReplicate& c) { return c.family() == family; }),
        false);
  }
  for (const auto& [problem, direction] : cell_keys) {
    add("by_cell", absl::StrCat(problem, "/", direction),
        OfCells(model,
                [&slug = problem, &dir = direction](const v1::CellReplicate& c) {
                  return c.problem_slug() == slug && c.direction() == dir;
                }),
        false);
  }
}

}  // namespace

std::vector<v1::AggregateRow> HarnessAggregates(absl::Span<const v1::CellReplicate> cells,
                                                absl::Span<const Comparison> comparisons,
                                                const v1::StatsConfig& config) {
  std::set<std::string> models;
  for (const v1::CellReplicate& cell : cells) models.insert(cell.model());
  std::vector<v1::AggregateRow> out;
  for (const std::string& model : models) AddSplits(cells, comparisons, config, model, &out);
  AddSplits(cells, comparisons, config, kAllKey, &out);
  return out;
}

std::vector<v1::UsageRow> UsageByArm(absl::Span<const AttemptRecord> attempts) {
  std::map<std::pair<std::string, std::string>, v1::UsageRow> rows;
  const auto add = [](const v1::Usage& u, v1::UsageRow& row) {
    row.set_input_tokens(row.input_tokens() + u.input_tokens());
    row.set_cached_input_tokens(row.cached_input_tokens() + u.cached_input_tokens());
    row.set_output_tokens(row.output_tokens() + u.output_tokens());
    row.set_cost_usd(row.cost_usd() + u.cost_usd());
    row.set_agent_seconds(row.agent_seconds() + u.agent_seconds());
  };
  for (const AttemptRecord& attempt : attempts) {
    const v1::ArmResult& result = *attempt.result;
    const RunStatus status = RunStatusOf(result, attempt.usage);
    for (const std::string& model : {attempt.model, std::string(kAllKey)}) {
      v1::UsageRow& row = rows[{model, attempt.arm}];
      row.set_model(model);
      row.set_arm(attempt.arm);
      if (status == RunStatus::kSkipped) {
        row.set_skipped(row.skipped() + 1);
        continue;
      }
      if (status == RunStatus::kNotRun) {
        row.set_not_run(row.not_run() + 1);
        if (result.state() == v1::ATTEMPT_BLOCKED) row.set_blocked(row.blocked() + 1);
        continue;
      }
      row.set_attempts(row.attempts() + 1);
      const bool finished = result.state() == v1::ATTEMPT_FINISHED ||
                            (result.state() == v1::ATTEMPT_STATE_UNSPECIFIED && result.resolved());
      if (!finished) row.set_unresolved(row.unresolved() + 1);
      if (attempt.usage == nullptr) continue;
      add(attempt.usage->usage(), row);
      add(attempt.usage->interrupted_usage(), row);
      row.set_interrupted_tries(row.interrupted_tries() + attempt.usage->interrupted_tries());
      row.set_interrupted_cost_usd(row.interrupted_cost_usd() +
                                   attempt.usage->interrupted_usage().cost_usd());
    }
  }
  std::vector<v1::UsageRow> out;
  // "*" sorts before letters; the per-model rows come first, as in the other tables.
  for (auto& [key, row] : rows) {
    if (key.first == kAllKey) continue;
    out.push_back(row);
  }
  for (auto& [key, row] : rows) {
    if (key.first != kAllKey) continue;
    out.push_back(row);
  }
  for (v1::UsageRow& row : out) {
    const double n = row.attempts();
    row.set_mean_input_tokens(n > 0 ? static_cast<double>(row.input_tokens()) / n : kNaN);
    row.set_mean_output_tokens(n > 0 ? static_cast<double>(row.output_tokens()) / n : kNaN);
    row.set_mean_cost_usd(n > 0 ? row.cost_usd() / n : kNaN);
    row.set_mean_agent_seconds(n > 0 ? row.agent_seconds() / n : kNaN);
  }
  return out;
}

}  // namespace mkb::stats
