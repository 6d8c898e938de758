#include "libmkb/stats/aggregates.h"

#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "libmkb/model/names.h"

namespace mkb::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using Filter = std::function<bool(const Comparison&)>;

// Appends the base, skill and lift rows of the comparisons that pass `filter`.
void AddGroup(absl::Span<const Comparison> comparisons, const v1::StatsConfig& config,
              const std::string& model, const std::string& split, const std::string& group,
              const Filter& filter, bool keep_empty, std::vector<v1::AggregateRow>* out) {
  const int thresholds = config.thresholds_size();
  std::vector<int64_t> base_hits(thresholds, 0);
  std::vector<int64_t> skill_hits(thresholds, 0);
  int64_t n = 0;
  for (const Comparison& c : comparisons) {
    if (!filter(c)) continue;
    ++n;
    for (int i = 0; i < thresholds; ++i) {
      const double t = config.thresholds(i);
      base_hits[i] += c.base.passed && c.base.speedup >= t;
      skill_hits[i] += c.skill.passed && c.skill.speedup >= t;
    }
  }
  if (n == 0 && !keep_empty) return;
  v1::AggregateRow base;
  v1::AggregateRow skill;
  v1::AggregateRow lift;
  for (auto [row, arm] : {std::pair{&base, "base"}, {&skill, "skill"}, {&lift, "lift"}}) {
    row->set_model(model);
    row->set_split(split);
    row->set_group(group);
    row->set_arm(arm);
    row->set_n(static_cast<int>(n));
  }
  double base_sum = 0;
  double skill_sum = 0;
  for (int i = 0; i < thresholds; ++i) {
    const double rb = n > 0 ? static_cast<double>(base_hits[i]) / static_cast<double>(n) : kNaN;
    const double rs = n > 0 ? static_cast<double>(skill_hits[i]) / static_cast<double>(n) : kNaN;
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

void AddSplits(absl::Span<const Comparison> comparisons, const v1::StatsConfig& config,
               const std::string& model, std::vector<v1::AggregateRow>* out) {
  const auto in_model = [model](const Comparison& c) {
    return model == kAllKey || c.cell->model() == model;
  };
  AddGroup(comparisons, config, model, "all", "all", in_model, true, out);
  AddGroup(
      comparisons, config, model, "with_skill", "with_skill",
      [&](const Comparison& c) { return in_model(c) && !c.skill_skipped; }, false, out);
  const std::pair<const char*, Filter> verdicts[] = {
      {"source_passed", [](const Comparison& c) { return c.source_resolved && c.source.passed; }},
      {"source_failed", [](const Comparison& c) { return c.source_resolved && !c.source.passed; }},
      {"source_unresolved", [](const Comparison& c) { return !c.source_resolved; }},
  };
  for (const auto& verdict : verdicts) {
    const Filter& filter = verdict.second;
    AddGroup(
        comparisons, config, model, "by_source_verdict", verdict.first,
        [&](const Comparison& c) { return in_model(c) && filter(c); }, false, out);
  }
  std::set<std::string> directions;
  for (const Comparison& c : comparisons) directions.insert(c.cell->direction());
  for (const std::string& direction : directions) {
    AddGroup(
        comparisons, config, model, "by_direction", direction,
        [&](const Comparison& c) { return in_model(c) && c.cell->direction() == direction; }, false,
        out);
  }
  for (v1::Family family : AllFamilies()) {
    AddGroup(
        comparisons, config, model, "by_family", FamilyName(family),
        [&](const Comparison& c) { return in_model(c) && c.cell->family() == family; }, false, out);
  }
}

}  // namespace

std::vector<v1::AggregateRow> HarnessAggregates(absl::Span<const Comparison> comparisons,
                                                const v1::StatsConfig& config) {
  std::set<std::string> models;
  for (const Comparison& c : comparisons) models.insert(c.cell->model());
  std::vector<v1::AggregateRow> out;
  for (const std::string& model : models) AddSplits(comparisons, config, model, &out);
  AddSplits(comparisons, config, kAllKey, &out);
  return out;
}

std::vector<v1::UsageRow> UsageByArm(absl::Span<const AttemptRecord> attempts) {
  std::map<std::pair<std::string, std::string>, v1::UsageRow> rows;
  for (const AttemptRecord& attempt : attempts) {
    for (const std::string& model : {attempt.model, std::string(kAllKey)}) {
      v1::UsageRow& row = rows[{model, attempt.arm}];
      row.set_model(model);
      row.set_arm(attempt.arm);
      if (attempt.result->skipped()) {
        row.set_skipped(row.skipped() + 1);
        continue;
      }
      row.set_attempts(row.attempts() + 1);
      if (attempt.usage == nullptr) continue;
      const v1::Usage& u = *attempt.usage;
      row.set_input_tokens(row.input_tokens() + u.input_tokens());
      row.set_cached_input_tokens(row.cached_input_tokens() + u.cached_input_tokens());
      row.set_output_tokens(row.output_tokens() + u.output_tokens());
      row.set_cost_usd(row.cost_usd() + u.cost_usd());
      row.set_agent_seconds(row.agent_seconds() + u.agent_seconds());
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
