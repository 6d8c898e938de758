#include "libmkb/store/detail/table_views.h"

#include <google/protobuf/util/json_util.h>
#include <sqlite3.h>

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/store/result_store.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/experiment.pb.h"

namespace mkb::store_detail {

// The SQL of each table view; ?1 is the experiment ('' = all). Columns named *_json hold
// JSON; BLOB columns listed in the view's `messages` become such columns.
struct TableView {
  const char* name;
  const char* sql;
};

namespace {

// The current try of a row of table `x`, for views over per-try tables.
#define MKB_CURRENT(x) \
  "(" x ".try_number = (SELECT t.try_number FROM trials t WHERE t.trial_id = " x ".trial_id))"
#define MKB_IN_EXPERIMENT(x) \
  "(?1 = '' OR " x ".trial_id IN (SELECT t.trial_id FROM trials t WHERE t.experiment = ?1))"

const TableView kViews[] = {
    {"experiments",
     "SELECT name, model, created_unix, updated_unix, spec AS spec_json FROM experiments "
     "WHERE ?1 = '' OR name = ?1 ORDER BY name"},
    {"trials",
     "SELECT t.trial_id, t.experiment, t.model, t.problem_slug, t.problem_number, t.family, t.arm, "
     "t.dsl, t.replicate, t.state, t.try_number, "
     "(SELECT COUNT(*) FROM archived_tries a WHERE a.trial_id = t.trial_id) AS archived_tries, "
     "t.passed, t.speedup, t.final_status, t.best_submission, t.stop_reason, "
     "(SELECT COUNT(*) FROM submissions s WHERE s.trial_id = t.trial_id "
     "   AND s.try_number = t.try_number) AS submissions, "
     "(SELECT COUNT(*) FROM submissions s WHERE s.trial_id = t.trial_id "
     "   AND s.try_number = t.try_number AND s.counted) AS counted_submissions, "
     "si.sha256 AS skill_in_sha256, si.origin AS skill_in_origin, "
     "so.sha256 AS skill_out_sha256, so.bytes AS skill_out_bytes, so.empty AS skill_out_empty, "
     "so.contains_code AS skill_out_contains_code, "
     "u.input_tokens, u.cached_input_tokens, u.cache_write_tokens, u.output_tokens, "
     "u.reasoning_tokens, u.requests, u.cost_usd, u.agent_seconds, u.gpu_queue_seconds, "
     "t.task_fingerprint, t.skill_digest, t.error, t.started_unix, t.finished_unix, "
     "t.updated_unix "
     "FROM trials t "
     "LEFT JOIN skills si ON si.trial_id = t.trial_id AND si.try_number = t.try_number "
     "  AND si.role = 'in' "
     "LEFT JOIN skills so ON so.trial_id = t.trial_id AND so.try_number = t.try_number "
     "  AND so.role = 'out' "
     "LEFT JOIN usage u ON u.trial_id = t.trial_id AND u.try_number = t.try_number "
     "WHERE ?1 = '' OR t.experiment = ?1 ORDER BY t.trial_id"},
    {"attempts",
     "SELECT t.trial_id, t.try_number, t.attempt AS attempt_json FROM trials t "
     "WHERE t.attempt IS NOT NULL AND (?1 = '' OR t.experiment = ?1) ORDER BY t.trial_id"},
    {"archived_tries",
     "SELECT a.trial_id, a.try_number, a.reason, a.state, a.error, a.task_fingerprint, "
     "a.skill_digest, a.started_unix, a.archived_unix, a.attempt AS attempt_json "
     "FROM archived_tries a WHERE " MKB_IN_EXPERIMENT("a") " ORDER BY a.trial_id, a.try_number"},
    {"submissions",
     "SELECT s.trial_id, s.try_number, " MKB_CURRENT(
         "s") " AS current, s.idx AS \"index\", "
              "s.counted, s.at_agent_seconds, s.kernel_sha256, s.kernel_bytes, v.status, v.passed, "
              "v.speedup_vs_eager, v.message, s.kernel_source "
              "FROM submissions s LEFT JOIN verdicts v ON v.trial_id = s.trial_id "
              "  AND v.try_number = s.try_number AND v.role = 'submission' AND v.idx = s.idx "
              "WHERE " MKB_IN_EXPERIMENT("s") " ORDER BY s.trial_id, s.try_number, s.idx"},
    {"verdicts",
     "SELECT v.trial_id, v.try_number, " MKB_CURRENT(
         "v") " AS current, v.role, "
              "v.idx AS \"index\", v.status, v.passed, v.correct, v.correct_draws, v.total_draws, "
              "v.speedup_vs_eager, v.speedup_span, v.kernel_ms, v.eager_ms, v.message, "
              "v.verdict AS verdict_json FROM verdicts v WHERE " MKB_IN_EXPERIMENT(
                  "v") " ORDER BY v.trial_id, v.try_number, v.role, v.idx"},
    {"skills",
     "SELECT k.trial_id, k.try_number, " MKB_CURRENT(
         "k") " AS current, k.role, k.sha256, "
              "k.bytes, k.origin, k.source_attempt_id, k.source_dsl, k.source_model, k.empty, "
              "k.truncated, k.contains_code, k.text FROM skills k WHERE " MKB_IN_EXPERIMENT(
                  "k") " ORDER BY k.trial_id, k.try_number, k.role"},
    {"trajectories", "SELECT e.trial_id, e.try_number, " MKB_CURRENT(
                         "e") " AS current, e.idx AS \"index\", "
                              "e.t_seconds, e.kind, e.tool, e.text, e.json, e.input_tokens, "
                              "e.output_tokens, e.seconds "
                              "FROM trajectory_events e WHERE " MKB_IN_EXPERIMENT(
                                  "e") " ORDER BY e.trial_id, e.try_number, e.idx"},
    {"usage",
     "SELECT u.trial_id, u.try_number, " MKB_CURRENT(
         "u") " AS current, u.live, "
              "u.input_tokens, u.cached_input_tokens, u.cache_write_tokens, u.output_tokens, "
              "u.reasoning_tokens, u.requests, u.cost_usd, u.agent_seconds, u.gpu_queue_seconds, "
              "u.llm_seconds, u.tool_seconds FROM usage u WHERE " MKB_IN_EXPERIMENT(
                  "u") " ORDER BY u.trial_id, u.try_number"},
};

#undef MKB_CURRENT
#undef MKB_IN_EXPERIMENT

// Columns of the views that SQLite holds as 0 / 1 and tables show as booleans.
bool IsBooleanColumn(const std::string& column) {
  static const char* const kBooleans[] = {"passed",          "counted",
                                          "current",         "live",
                                          "empty",           "truncated",
                                          "contains_code",   "correct",
                                          "skill_out_empty", "skill_out_contains_code"};
  for (const char* name : kBooleans) {
    if (column == name) return true;
  }
  return false;
}

// The message type stored in a BLOB column of a view, by the column's JSON name.
const google::protobuf::Descriptor* JsonColumnType(const std::string& column) {
  if (column == "spec_json") return v1::ExperimentSpec::descriptor();
  if (column == "attempt_json") return v1::Attempt::descriptor();
  if (column == "verdict_json") return v1::Verdict::descriptor();
  return nullptr;
}

std::string MessageJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

}  // namespace

absl::StatusOr<const TableView*> FindTableView(const std::string& name) {
  for (const TableView& view : kViews) {
    if (name == view.name) return &view;
  }
  return absl::InvalidArgumentError(absl::StrCat("table: no table '", name, "'; tables are ",
                                                 absl::StrJoin(StoreTableNames(), ", ")));
}

absl::StatusOr<Table> ReadTableView(SqliteDatabase& db, const TableView& view,
                                    const std::string& experiment) {
  const std::string name = view.name;
  MKB_ASSIGN_OR_RETURN(SqliteStatement select, db.Prepare(view.sql));
  MKB_RETURN_IF_ERROR(select.BindAll(experiment));
  Table table;
  table.name = name;
  const int columns = select.ColumnCount();
  std::vector<const google::protobuf::Descriptor*> message_types(columns, nullptr);
  std::vector<bool> booleans(columns, false);
  for (int i = 0; i < columns; ++i) {
    table.columns.push_back(select.ColumnName(i));
    message_types[i] = JsonColumnType(table.columns.back());
    booleans[i] = IsBooleanColumn(table.columns.back());
  }
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    std::vector<Table::Cell>& cells = table.rows.emplace_back(columns);
    for (int i = 0; i < columns; ++i) {
      switch (select.ColumnType(i)) {
        case SQLITE_INTEGER:
          if (booleans[i]) {
            cells[i] = select.ColumnInt(i) != 0;
          } else {
            cells[i] = select.ColumnInt(i);
          }
          break;
        case SQLITE_FLOAT:
          cells[i] = select.ColumnDouble(i);
          break;
        case SQLITE_TEXT:
          cells[i] = select.ColumnText(i);
          break;
        case SQLITE_BLOB: {
          if (message_types[i] == nullptr) {
            cells[i] = select.ColumnText(i);
            break;
          }
          std::unique_ptr<google::protobuf::Message> message(
              google::protobuf::MessageFactory::generated_factory()
                  ->GetPrototype(message_types[i])
                  ->New());
          if (!message->ParseFromString(select.ColumnText(i))) {
            return absl::DataLossError(absl::StrCat(db.path(), ": table ", name, " column ",
                                                    table.columns[i], ": a stored ",
                                                    message_types[i]->name(), " does not parse"));
          }
          cells[i] = MessageJson(*message);
          break;
        }
        default:
          break;  // NULL
      }
    }
  }
  return table;
}

}  // namespace mkb::store_detail

namespace mkb {

std::vector<std::string> StoreTableNames() {
  std::vector<std::string> names;
  for (const store_detail::TableView& view : store_detail::kViews) names.push_back(view.name);
  return names;
}

}  // namespace mkb
