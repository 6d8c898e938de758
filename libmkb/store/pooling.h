// Experiments that share a design, pooled: replicates of one experiment run by several
// processes or machines under their own names (claude-a, claude-b), or merged from several
// stores (merge.h), count as more replicates of one experiment in the statistics.
#ifndef LIBMKB_STORE_POOLING_H_
#define LIBMKB_STORE_POOLING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libmkb/store/result_store.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/stats.pb.h"

namespace mkb {

// Where two experiments' designs differ: their specs (as stored, defaults filled in) without
// the name and the scheduling settings (concurrency, max_tries), which change no result.
// nullopt when they share a design; else the first differing field and both values, e.g.
// "replicates: 3 vs 5".
std::optional<std::string> DesignDifference(const v1::ExperimentSpec& a,
                                            const v1::ExperimentSpec& b);

struct PooledCells {
  std::vector<v1::CellReplicate> cells;
  // One line per group of experiments pooled ("experiments 'a' (replicates 0-2) and 'b'
  // (replicates 3-5) share a design: pooled as 6 replicates").
  std::vector<std::string> notes;
};

// The cell-replicates (stats_input.h) of `experiments` (in that order), pooled: experiments that
// share a design (DesignDifference) have their replicates numbered one after another (the
// first keeps 0..R-1, the next gets R..2R-1, ...), so that their cells are distinct replicates
// of one design. NotFoundError for an experiment the store does not hold; FailedPrecondition
// when experiments of different designs hold the same (model, direction, problem, replicate):
// those cannot be pooled.
absl::StatusOr<PooledCells> PooledCellReplicatesFromStore(
    const ResultStore& store, const std::vector<std::string>& experiments);

}  // namespace mkb

#endif  // LIBMKB_STORE_POOLING_H_
