#include "libmkb/store/export.h"

#include <filesystem>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libmkb/core/file.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/store/stats_input.h"

namespace mkb {

absl::StatusOr<ExportFormat> ParseExportFormat(absl::string_view name) {
  if (name == "jsonl") return ExportFormat::kJsonLines;
  if (name == "csv") return ExportFormat::kCsv;
  return absl::InvalidArgumentError(
      absl::StrCat("format: '", name, "' is not one of jsonl, csv (parquet: from Python)"));
}

const char* ExportExtension(ExportFormat format) {
  return format == ExportFormat::kCsv ? "csv" : "jsonl";
}

std::vector<std::string> ExportTableNames() {
  std::vector<std::string> names = StoreTableNames();
  names.push_back("cells");
  return names;
}

absl::StatusOr<Table> ReadExportTable(const ResultStore& store, const std::string& name,
                                      const std::string& experiment) {
  if (name != "cells") {
    absl::StatusOr<Table> table = store.ReadTable(name, experiment);
    if (!table.ok() && absl::IsInvalidArgument(table.status())) {
      return absl::InvalidArgumentError(absl::StrCat("table: no table '", name, "'; tables are ",
                                                     absl::StrJoin(ExportTableNames(), ", ")));
    }
    return table;
  }
  std::vector<std::string> experiments;
  if (!experiment.empty()) {
    experiments.push_back(experiment);
  } else {
    MKB_ASSIGN_OR_RETURN(std::vector<v1::ExperimentSpec> specs, store.ListExperiments());
    for (const v1::ExperimentSpec& spec : specs) experiments.push_back(spec.name());
  }
  std::vector<v1::CellReplicate> cells;
  for (const std::string& name_of : experiments) {
    MKB_ASSIGN_OR_RETURN(std::vector<v1::CellReplicate> some,
                         CellReplicatesFromStore(store, name_of));
    cells.insert(cells.end(), some.begin(), some.end());
  }
  return CellReplicateTable(cells);
}

absl::StatusOr<std::vector<std::string>> ExportStore(const ResultStore& store,
                                                     const ExportOptions& options) {
  if (options.directory.empty()) return absl::InvalidArgumentError("out: a folder is required");
  std::error_code error;
  std::filesystem::create_directories(options.directory, error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrCat(options.directory, ": cannot create the folder: ", error.message()));
  }
  const std::vector<std::string> tables =
      options.tables.empty() ? ExportTableNames() : options.tables;
  std::vector<std::string> written;
  for (const std::string& name : tables) {
    MKB_ASSIGN_OR_RETURN(Table table, ReadExportTable(store, name, options.experiment));
    std::ostringstream text;
    MKB_RETURN_IF_ERROR(options.format == ExportFormat::kCsv ? WriteCsv(table, text)
                                                             : WriteJsonLines(table, text));
    const std::string path = (std::filesystem::path(options.directory) /
                              absl::StrCat(name, ".", ExportExtension(options.format)))
                                 .string();
    MKB_RETURN_IF_ERROR(WriteFileAtomically(path, text.str()));
    written.push_back(path);
  }
  return written;
}

}  // namespace mkb
