// Merging stores: the replicates of one experiment run by several processes or machines into
// stores of their own, brought together into one store (`mkb store merge A.db B.db --out
// C.db`), whose statistics then pool them (pooling.h).
#ifndef LIBMKB_STORE_MERGE_H_
#define LIBMKB_STORE_MERGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mkb {

struct MergeSummary {
  std::vector<std::string> experiments;  // in the output, sorted
  int trials = 0;                        // in the output
  // Trials held by several inputs: the same try (a copy of one store in another) is taken once;
  // a trial resolved in one input and unresolved (pending, running, failed, blocked, retired)
  // in another is taken from the input where it is resolved.
  int duplicates = 0;
  int superseded = 0;
};

// Writes a new store `output` holding every experiment of the stores `inputs` with all their
// trials: each trial's current try and its archived tries, submissions, verdicts, skills,
// trajectory and usage (run leases are not copied). Each input is read through a consistent
// snapshot, so a store still being written can be merged; inputs of an older schema are
// migrated in the snapshot, never in place. Refused before anything is written:
//  - AlreadyExistsError: `output` exists;
//  - InvalidArgumentError: no input, an input given twice, or `output` among the inputs;
//  - NotFoundError / FailedPreconditionError: an input that is missing or is not a store;
//  - FailedPreconditionError: two inputs hold an experiment of the same name whose designs
//    differ (pooling.h: DesignDifference; the error names the experiment, the field and both
//    values), or the same trial resolved with different results in two inputs (they are
//    different replicates: run each process under its own experiment name, which the
//    statistics pool).
// On any error nothing is left at `output`.
absl::StatusOr<MergeSummary> MergeStores(const std::vector<std::string>& inputs,
                                         const std::string& output);

}  // namespace mkb

#endif  // LIBMKB_STORE_MERGE_H_
