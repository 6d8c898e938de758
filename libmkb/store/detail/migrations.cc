#include "libmkb/store/detail/migrations.h"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/store/detail/experiment_rows.h"
#include "mkb/v1/experiment.pb.h"

namespace mkb::store_detail {

absl::Status MigrateToVersion2(SqliteDatabase& db) {
  std::map<std::string, v1::ExperimentSpec> specs;
  MKB_ASSIGN_OR_RETURN(specs, ReadExperiments(db));
  struct Row {
    std::string id, experiment, model, problem, arm, state;
    int replicate = 0;
  };
  std::vector<Row> rows;
  std::map<std::tuple<std::string, std::string, std::string, int>, size_t> by_key;
  std::set<std::tuple<std::string, std::string, std::string, int>> resolved;  // model, arm, ...
  {
    MKB_ASSIGN_OR_RETURN(
        SqliteStatement select,
        db.Prepare("SELECT trial_id, experiment, model, problem_slug, arm, replicate, state "
                   "FROM trials ORDER BY trial_id"));
    while (true) {
      MKB_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      Row& r = rows.emplace_back();
      r.id = select.ColumnText(0);
      r.experiment = select.ColumnText(1);
      r.model = select.ColumnText(2);
      r.problem = select.ColumnText(3);
      r.arm = select.ColumnText(4);
      r.replicate = static_cast<int>(select.ColumnInt(5));
      r.state = select.ColumnText(6);
      by_key[{r.experiment, r.problem, r.arm, r.replicate}] = rows.size() - 1;
      if (r.state == "finished" || r.state == "skipped") {
        resolved.insert({r.model, r.arm, r.problem, r.replicate});
      }
    }
  }
  std::map<size_t, std::string> blocked;  // row -> why
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      if (r.state != "pending" || blocked.count(i) > 0) continue;
      auto spec = specs.find(r.experiment);
      if (spec == specs.end()) continue;
      const v1::ArmSpec* arm = nullptr;
      for (const v1::ArmSpec& candidate : spec->second.arms()) {
        if (candidate.name() == r.arm) arm = &candidate;
      }
      if (arm == nullptr || arm->skill().kind() != v1::SkillSource::ARM) continue;
      const std::string& source_model = arm->skill().model();
      std::string why;
      if (!source_model.empty() && source_model != spec->second.model()) {
        if (resolved.count({source_model, arm->skill().arm(), r.problem, r.replicate}) == 0) {
          why = absl::StrCat("no resolved trial of model '", source_model, "', arm '",
                             arm->skill().arm(),
                             "' at this problem and replicate in the store: run that model's "
                             "experiment first");
        }
      } else if (auto source =
                     by_key.find({r.experiment, r.problem, arm->skill().arm(), r.replicate});
                 source != by_key.end()) {
        const Row& s = rows[source->second];
        if (s.state == "failed") why = absl::StrCat("its source ", s.id, " failed");
        if (blocked.count(source->second) > 0)
          why = absl::StrCat("its source ", s.id, " is blocked");
      }
      if (!why.empty()) {
        blocked[i] = why;
        changed = true;
      }
    }
  }
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement update,
      db.Prepare("UPDATE trials SET state = 'blocked', error = ? WHERE trial_id = ? AND "
                 "state = 'pending'"));
  for (const auto& [i, why] : blocked) {
    update.Reset();
    MKB_RETURN_IF_ERROR(update.BindAll(why, rows[i].id));
    MKB_RETURN_IF_ERROR(update.Run());
  }
  return absl::OkStatus();
}

}  // namespace mkb::store_detail
