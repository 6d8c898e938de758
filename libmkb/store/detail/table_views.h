// The table views of ReadTable and the export: one SQL query per view over the store's tables,
// read into a Table whose 0 / 1 columns are booleans and whose stored messages are JSON.
#ifndef LIBMKB_STORE_DETAIL_TABLE_VIEWS_H_
#define LIBMKB_STORE_DETAIL_TABLE_VIEWS_H_

#include <string>

#include "absl/status/statusor.h"
#include "libmkb/store/detail/sqlite.h"
#include "libmkb/store/table.h"

namespace mkb::store_detail {

struct TableView;

// The view named `name` (one of StoreTableNames()). InvalidArgumentError naming the known
// tables for an unknown name.
absl::StatusOr<const TableView*> FindTableView(const std::string& name);

// The rows of `view`, restricted to an experiment unless `experiment` is empty. DataLossError
// naming the column when a stored message does not parse.
absl::StatusOr<Table> ReadTableView(SqliteDatabase& db, const TableView& view,
                                    const std::string& experiment);

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_TABLE_VIEWS_H_
