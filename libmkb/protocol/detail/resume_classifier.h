// Resuming an experiment: what to do with each planned trial given what the store holds
// (reuse, run, rerun, stale, blocked), shared by the dry run (PlanExperiment) and the run.
#ifndef LIBMKB_PROTOCOL_DETAIL_RESUME_CLASSIFIER_H_
#define LIBMKB_PROTOCOL_DETAIL_RESUME_CLASSIFIER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libmkb/protocol/plan.h"
#include "libmkb/protocol/protocol.h"
#include "libmkb/store/result_store.h"

namespace mkb::detail {

// The store's trials of `experiment` by trial id (none without a store). A retired trial that
// would get its last ended try back when planned again (ResultStore::PlanTrials) appears as
// that try.
absl::StatusOr<std::map<std::string, TrialRecord>> StoredTrials(const ResultStore* store,
                                                                const std::string& experiment);

// One entry per planned trial, in plan order: a trial not in `records` runs; an interrupted or
// failed one reruns; a resolved one is reused unless its task fingerprint or (conditioned) its
// source skill's digest changed, which makes it stale (rerun with `rerun_stale`); a trial whose
// source is another model's waits until that trial is in the store.
absl::StatusOr<std::vector<PlanEntry>> ClassifyTrials(
    const ExperimentPlan& plan, const ResultStore* store,
    const std::map<std::string, TrialRecord>& records, bool rerun_stale);

// OK when no entry is stale; else FailedPrecondition naming the stale trials by reason (a few
// ids each) and how to rerun them.
absl::Status StaleRefusal(const ResultStore& store, const std::vector<PlanEntry>& entries);

}  // namespace mkb::detail

#endif  // LIBMKB_PROTOCOL_DETAIL_RESUME_CLASSIFIER_H_
