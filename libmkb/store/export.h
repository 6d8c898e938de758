// Export of a store's tables to files: JSON Lines and CSV here; Parquet is written by the
// Python package from the same tables (metakernelbench.store, through pyarrow).
#ifndef LIBMKB_STORE_EXPORT_H_
#define LIBMKB_STORE_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libmkb/store/result_store.h"
#include "libmkb/store/table.h"

namespace mkb {

enum class ExportFormat { kJsonLines, kCsv };

// "jsonl" or "csv"; InvalidArgumentError naming the accepted formats otherwise.
absl::StatusOr<ExportFormat> ParseExportFormat(absl::string_view name);
// "jsonl", "csv": the files' extension.
const char* ExportExtension(ExportFormat format);

// The store's table views (StoreTableNames()) and "cells": the statistics' input of every
// experiment (CellReplicatesFromStore, flattened by CellReplicateTable).
std::vector<std::string> ExportTableNames();

// One table of ExportTableNames(), restricted to `experiment` unless it is empty.
absl::StatusOr<Table> ReadExportTable(const ResultStore& store, const std::string& name,
                                      const std::string& experiment = "");

struct ExportOptions {
  std::string directory;  // created if missing; files are <directory>/<table>.<ext>
  ExportFormat format = ExportFormat::kJsonLines;
  std::vector<std::string> tables;  // empty: every table of ExportTableNames()
  std::string experiment;           // empty: every experiment
};

// Writes each table to its file (atomically: a temporary file renamed over it) and returns
// the paths written, in table order.
absl::StatusOr<std::vector<std::string>> ExportStore(const ResultStore& store,
                                                     const ExportOptions& options);

}  // namespace mkb

#endif  // LIBMKB_STORE_EXPORT_H_
