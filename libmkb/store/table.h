// A rectangular result read from the store (one of its table views), for DataFrames and export.
#ifndef LIBMKB_STORE_TABLE_H_
#define LIBMKB_STORE_TABLE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"

namespace mkb {

struct Table {
  // NULL, a boolean, an INTEGER, a REAL or a TEXT.
  using Cell = std::variant<std::monostate, bool, int64_t, double, std::string>;

  std::string name;  // "trials", "submissions", ...
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  // each of columns.size() cells

  // The index of `column`, or -1.
  int ColumnIndex(const std::string& column) const;
};

// Columns whose names end in "_json" hold JSON text (a message, a list). CSV writes them as
// text; JSON Lines writes them as nested values under the name without the suffix.
inline constexpr char kJsonColumnSuffix[] = "_json";

// RFC 4180 CSV with a header row; NULL is an empty field, booleans are True / False (as pandas
// reads them), reals are written round-trippably.
absl::Status WriteCsv(const Table& table, std::ostream& out);
// One JSON object per row; NULL is null, non-finite reals are null.
absl::Status WriteJsonLines(const Table& table, std::ostream& out);

}  // namespace mkb

#endif  // LIBMKB_STORE_TABLE_H_
