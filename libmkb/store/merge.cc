#include "libmkb/store/merge.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/store/detail/sqlite.h"
#include "libmkb/store/pooling.h"
#include "libmkb/store/result_store.h"

namespace mkb {
namespace {

namespace fs = std::filesystem;
using store_detail::SqliteDatabase;
using store_detail::SqliteStatement;
using store_detail::SqliteTransaction;

// The tables that hold a trial's rows, the trials table first (the others refer to it).
constexpr const char* kTrialTables[] = {"trials", "archived_tries",    "submissions", "verdicts",
                                        "skills", "trajectory_events", "usage"};

std::string Quoted(const std::string& text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "''"}}), "'");
}

// Removes a SQLite file and its companions.
void RemoveDatabase(const std::string& path) {
  std::error_code error;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    fs::remove(absl::StrCat(path, suffix), error);
  }
}

// A snapshot file of one input; removed when it goes out of scope.
struct Snapshot {
  std::string input;
  std::string path;
  std::vector<v1::ExperimentSpec> experiments;
  Snapshot() = default;
  Snapshot(Snapshot&& other) noexcept
      : input(std::move(other.input)),
        path(std::exchange(other.path, "")),
        experiments(std::move(other.experiments)) {}
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;
  ~Snapshot() {
    if (!path.empty()) RemoveDatabase(path);
  }
};

struct StoredTrial {
  std::string experiment;
  std::string state;
  std::string attempt;  // the Attempt's bytes
  bool resolved() const { return state == "finished" || state == "skipped"; }
};

absl::StatusOr<std::map<std::string, StoredTrial>> ReadTrials(const std::string& path) {
  MKB_ASSIGN_OR_RETURN(SqliteDatabase db, SqliteDatabase::Open(path, false, 30000, true));
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement select,
      db.Prepare("SELECT trial_id, experiment, state, coalesce(attempt, '') FROM trials"));
  std::map<std::string, StoredTrial> out;
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    out[select.ColumnText(0)] = {select.ColumnText(1), select.ColumnText(2), select.ColumnText(3)};
  }
  return out;
}

}  // namespace

absl::StatusOr<MergeSummary> MergeStores(const std::vector<std::string>& inputs,
                                         const std::string& output) {
  if (inputs.empty()) return absl::InvalidArgumentError("inputs: at least one store to merge");
  if (output.empty()) return absl::InvalidArgumentError("--out: a path is required");
  std::error_code error;
  if (fs::exists(output, error)) {
    return absl::AlreadyExistsError(
        absl::StrCat("--out: '", output, "' exists; merge writes a new store"));
  }
  std::set<std::string> seen;
  for (const std::string& input : inputs) {
    const std::string canonical = fs::weakly_canonical(input, error).string();
    if (!seen.insert(canonical).second) {
      return absl::InvalidArgumentError(absl::StrCat("'", input, "' is given twice"));
    }
  }
  if (seen.count(fs::weakly_canonical(output, error).string()) != 0) {
    return absl::InvalidArgumentError("--out: the output is one of the inputs");
  }

  // Consistent snapshots of the inputs, at the current schema version, beside the output.
  const fs::path folder = fs::absolute(output).parent_path();
  std::vector<Snapshot> snapshots;
  for (size_t i = 0; i < inputs.size(); ++i) {
    StoreOptions read_only;
    read_only.read_only = true;
    MKB_ASSIGN_OR_RETURN(ResultStore store, ResultStore::Open(inputs[i], read_only));
    Snapshot snapshot;
    snapshot.input = inputs[i];
    snapshot.path = (folder / absl::StrCat(".", fs::path(output).filename().string(), ".merge-",
                                           ::getpid(), "-", i))
                        .string();
    RemoveDatabase(snapshot.path);
    MKB_RETURN_IF_ERROR(store.SnapshotTo(snapshot.path));
    MKB_ASSIGN_OR_RETURN(snapshot.experiments, store.ListExperiments());
    snapshots.push_back(std::move(snapshot));
  }

  // What comes from where, decided before anything is written.
  std::map<std::string, std::pair<v1::ExperimentSpec, size_t>>
      experiments;  // name -> (spec, input)
  for (size_t i = 0; i < snapshots.size(); ++i) {
    for (const v1::ExperimentSpec& spec : snapshots[i].experiments) {
      auto [it, fresh] = experiments.emplace(spec.name(), std::make_pair(spec, i));
      if (fresh) continue;
      if (std::optional<std::string> diff = DesignDifference(it->second.first, spec)) {
        return absl::FailedPreconditionError(
            absl::StrCat("conflicting specs: '", snapshots[it->second.second].input, "' and '",
                         snapshots[i].input, "' both hold experiment '", spec.name(),
                         "' with different designs (", *diff,
                         "); rename one of them before merging (mkb run --experiment NAME)"));
      }
    }
  }
  MergeSummary summary;
  std::map<std::string, std::pair<StoredTrial, size_t>> chosen;  // trial id -> (trial, input)
  for (size_t i = 0; i < snapshots.size(); ++i) {
    MKB_ASSIGN_OR_RETURN(auto trials, ReadTrials(snapshots[i].path));
    for (auto& [id, trial] : trials) {
      auto [it, fresh] = chosen.emplace(id, std::make_pair(trial, i));
      if (fresh) continue;
      StoredTrial& kept = it->second.first;
      if (kept.state == trial.state && kept.attempt == trial.attempt) {
        ++summary.duplicates;
      } else if (kept.resolved() && trial.resolved()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "trial '", id, "' was run in both '", snapshots[it->second.second].input, "' and '",
            snapshots[i].input,
            "' with different results: they are different replicates of one design. Run each "
            "process under its own experiment name (mkb run --experiment NAME); mkb stats pools "
            "experiments that share a design"));
      } else if (trial.resolved()) {
        it->second = std::make_pair(trial, i);
        ++summary.superseded;
      } else {
        ++summary.superseded;
      }
    }
  }

  // The output: a fresh store (the current schema), then each input's rows copied in.
  auto write = [&]() -> absl::Status {
    { MKB_ASSIGN_OR_RETURN(ResultStore created, ResultStore::Open(output)); }
    MKB_ASSIGN_OR_RETURN(SqliteDatabase db, SqliteDatabase::Open(output, false, 30000));
    MKB_RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys = ON;"));
    for (size_t i = 0; i < snapshots.size(); ++i) {
      MKB_RETURN_IF_ERROR(
          db.Exec(absl::StrCat("ATTACH DATABASE ", Quoted(snapshots[i].path), " AS source;")));
      {
        MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
        MKB_RETURN_IF_ERROR(db.Exec(
            "CREATE TEMP TABLE IF NOT EXISTS picked(id TEXT PRIMARY KEY); DELETE FROM picked;"));
        MKB_ASSIGN_OR_RETURN(SqliteStatement pick, db.Prepare("INSERT INTO picked(id) VALUES (?)"));
        for (const auto& [name, from] : experiments) {
          if (from.second != i) continue;
          MKB_RETURN_IF_ERROR(pick.BindAll(name));
          MKB_RETURN_IF_ERROR(pick.Run());
          pick.Reset();
        }
        MKB_RETURN_IF_ERROR(
            db.Exec("INSERT INTO main.experiments SELECT * FROM source.experiments "
                    "WHERE name IN (SELECT id FROM picked); DELETE FROM picked;"));
        for (const auto& [id, from] : chosen) {
          if (from.second != i) continue;
          MKB_RETURN_IF_ERROR(pick.BindAll(id));
          MKB_RETURN_IF_ERROR(pick.Run());
          pick.Reset();
        }
        pick = SqliteStatement();
        for (const char* table : kTrialTables) {
          MKB_RETURN_IF_ERROR(
              db.Exec(absl::StrCat("INSERT INTO main.", table, " SELECT * FROM source.", table,
                                   " WHERE trial_id IN (SELECT id FROM picked);")));
        }
        MKB_RETURN_IF_ERROR(transaction.Commit());
      }
      MKB_RETURN_IF_ERROR(db.Exec("DETACH DATABASE source;"));
    }
    return absl::OkStatus();
  };
  if (absl::Status status = write(); !status.ok()) {
    RemoveDatabase(output);
    return status;
  }
  {
    StoreOptions read_only;
    read_only.read_only = true;
    absl::StatusOr<ResultStore> merged = ResultStore::Open(output, read_only);
    absl::Status status = merged.ok() ? merged->CheckIntegrity() : merged.status();
    if (!status.ok()) {
      RemoveDatabase(output);
      return absl::DataLossError(
          absl::StrCat("the merged store failed its check: ", status.message()));
    }
  }
  for (const auto& [name, from] : experiments) summary.experiments.push_back(name);
  summary.trials = static_cast<int>(chosen.size());
  return summary;
}

}  // namespace mkb
