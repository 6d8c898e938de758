// The experiments table: one row per experiment, its spec stored with its defaults filled in.
#ifndef LIBMKB_STORE_DETAIL_EXPERIMENT_ROWS_H_
#define LIBMKB_STORE_DETAIL_EXPERIMENT_ROWS_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libmkb/store/detail/sqlite.h"
#include "mkb/v1/experiment.pb.h"

namespace mkb::store_detail {

// Inserts or replaces the row of `filled` (a spec with its defaults filled in).
absl::Status WriteExperiment(SqliteDatabase& db, const v1::ExperimentSpec& filled);

// The spec of experiment `name`; nullopt when the store has none. DataLossError when the stored
// spec does not parse.
absl::StatusOr<std::optional<v1::ExperimentSpec>> ReadExperiment(SqliteDatabase& db,
                                                                 const std::string& name);

// Every experiment's spec, by name. DataLossError naming the experiment whose spec does not
// parse.
absl::StatusOr<std::map<std::string, v1::ExperimentSpec>> ReadExperiments(SqliteDatabase& db);

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_EXPERIMENT_ROWS_H_
