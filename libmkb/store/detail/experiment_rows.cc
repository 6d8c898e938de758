#include "libmkb/store/detail/experiment_rows.h"

#include "absl/strings/str_cat.h"
#include "libmkb/core/clock.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/store/detail/stored_values.h"

namespace mkb::store_detail {

absl::Status WriteExperiment(SqliteDatabase& db, const v1::ExperimentSpec& filled) {
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement upsert,
      db.Prepare("INSERT INTO experiments VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT(name) DO "
                 "UPDATE SET model = ?2, spec = ?3, updated_unix = ?4"));
  const std::string bytes = filled.SerializeAsString();
  MKB_RETURN_IF_ERROR(upsert.BindAll(filled.name(), filled.model(), Blob{bytes}, NowUnix()));
  return upsert.Run();
}

absl::StatusOr<std::optional<v1::ExperimentSpec>> ReadExperiment(SqliteDatabase& db,
                                                                 const std::string& name) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement select,
                       db.Prepare("SELECT spec FROM experiments WHERE name = ?"));
  MKB_RETURN_IF_ERROR(select.BindAll(name));
  MKB_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return std::optional<v1::ExperimentSpec>();
  MKB_ASSIGN_OR_RETURN(
      v1::ExperimentSpec spec,
      ParseMessage<v1::ExperimentSpec>(select.ColumnText(0), absl::StrCat("experiment ", name)));
  return std::optional<v1::ExperimentSpec>(std::move(spec));
}

absl::StatusOr<std::map<std::string, v1::ExperimentSpec>> ReadExperiments(SqliteDatabase& db) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement select,
                       db.Prepare("SELECT name, spec FROM experiments ORDER BY name"));
  std::map<std::string, v1::ExperimentSpec> specs;
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    MKB_ASSIGN_OR_RETURN(
        specs[select.ColumnText(0)],
        ParseMessage<v1::ExperimentSpec>(select.ColumnText(1),
                                         absl::StrCat("experiment ", select.ColumnText(0))));
  }
  return specs;
}

}  // namespace mkb::store_detail
