// The statistics' input (mkb.v1.CellReplicate, docs/statistics.md) from a store's trials, so
// that mkb::stats::ComputeStatsReport can run on a store.
#ifndef LIBMKB_STORE_STATS_INPUT_H_
#define LIBMKB_STORE_STATS_INPUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libmkb/store/result_store.h"
#include "libmkb/store/table.h"
#include "mkb/v1/stats.pb.h"

namespace mkb {

// One cell-replicate per (conditioned arm, problem, replicate) of the experiment that has a
// trial of the conditioned arm or of its base in the store. Roles:
//  - skill: the conditioned arm's trial; base: its base_arm's trial;
//  - source: for a skill taken from an arm, that arm's trial (another model's, found with
//    ResultStore::FindResolvedTrial, when SkillSource.model is set); absent for fixed texts;
//  - control: the first solo arm (no skill) whose base_arm is the cell's base, if any.
// Direction: "cutedsl2tirx" / "tirx2cutedsl" for the standard cross-DSL arms, else the
// conditioned arm's name. Every ArmResult names its arm; another model's source arm is named
// "<model>:<arm>". Trials not in the store, pending, blocked, running or failed are unresolved.
// Only the experiment's planned trials count (retired ones are left out), so the cells are
// those of its current plan. Each ArmResult carries the trial's state, the usage of its final
// try, the usage of its interrupted tries (archived as transient, failed or interrupted, and a
// current try that failed or was left running), and for a passed final regrade its parity
// timing samples.
absl::StatusOr<std::vector<v1::CellReplicate>> CellReplicatesFromStore(
    const ResultStore& store, const std::string& experiment);

// The cells as a flat table, in the column layout of metakernelbench.stats: model, direction,
// problem_slug, family, replicate, then <role>_<field> for each role and field (arm, resolved,
// passed, speedup, skipped, state, the usage fields, interrupted_tries and the interrupted
// usage fields). Timing samples are not in it.
Table CellReplicateTable(const std::vector<v1::CellReplicate>& cells);

}  // namespace mkb

#endif  // LIBMKB_STORE_STATS_INPUT_H_
