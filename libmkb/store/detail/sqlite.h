// Move-only owners of SQLite handles (a connection, a prepared statement, a transaction) with
// errors as absl::Status naming the database file and the SQL that failed.
#ifndef LIBMKB_STORE_DETAIL_SQLITE_H_
#define LIBMKB_STORE_DETAIL_SQLITE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace mkb::store_detail {

// A BLOB parameter (a serialized message); plain strings bind as TEXT.
struct Blob {
  absl::string_view bytes;
};
// SQL NULL.
struct Null {};

class SqliteStatement {
 public:
  SqliteStatement() = default;
  SqliteStatement(SqliteStatement&& other) noexcept { *this = std::move(other); }
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameters are 1-based, as in SQLite.
  absl::Status Bind(int index, int64_t value);
  absl::Status Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  absl::Status Bind(int index, bool value) { return Bind(index, static_cast<int64_t>(value)); }
  absl::Status Bind(int index, double value);
  absl::Status Bind(int index, absl::string_view text);
  absl::Status Bind(int index, const std::string& text) {
    return Bind(index, absl::string_view(text));
  }
  absl::Status Bind(int index, const char* text) { return Bind(index, absl::string_view(text)); }
  absl::Status Bind(int index, Blob blob);
  absl::Status Bind(int index, Null);
  template <typename T>
  absl::Status Bind(int index, const std::optional<T>& value) {
    return value.has_value() ? Bind(index, *value) : Bind(index, Null{});
  }

  // Binds `values` to parameters 1, 2, ... in order.
  template <typename... Ts>
  absl::Status BindAll(const Ts&... values) {
    int index = 0;
    absl::Status status;
    ((status.ok() ? (void)(status = Bind(++index, values)) : (void)0), ...);
    return status;
  }

  // Advances: true when a row is available, false when the statement is done.
  absl::StatusOr<bool> Step();
  // Steps to the end, ignoring rows (INSERT, UPDATE, DELETE).
  absl::Status Run();
  // Ready to run again; bindings are cleared.
  void Reset();

  int ColumnCount() const;
  std::string ColumnName(int column) const;
  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL of the current row.
  int ColumnType(int column) const;
  bool IsNull(int column) const;
  int64_t ColumnInt(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;  // TEXT or BLOB bytes

 private:
  friend class SqliteDatabase;
  SqliteStatement(sqlite3_stmt* statement, const std::string* path)
      : statement_(statement), path_(path) {}
  absl::Status Error(int code, absl::string_view what) const;

  sqlite3_stmt* statement_ = nullptr;
  const std::string* path_ = nullptr;  // owned by the database, which outlives its statements
};

class SqliteDatabase {
 public:
  // Opens (creating when asked) the database at `path`, for reading and writing or, with
  // `read_only`, for reading only (`create` is then ignored). Sets a busy timeout so that
  // another process's transaction is waited for, up to `busy_timeout_ms`.
  static absl::StatusOr<SqliteDatabase> Open(const std::string& path, bool create,
                                             int busy_timeout_ms, bool read_only = false);

  // A copy of the whole database in memory (SQLite's online backup), writable, named after
  // this one's path in error messages.
  absl::StatusOr<SqliteDatabase> CopyToMemory() const;

  SqliteDatabase() = default;
  SqliteDatabase(SqliteDatabase&& other) noexcept { *this = std::move(other); }
  SqliteDatabase& operator=(SqliteDatabase&& other) noexcept;
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;
  ~SqliteDatabase();

  // Runs one or more statements without parameters.
  absl::Status Exec(absl::string_view sql);
  // Statements must not outlive the database.
  absl::StatusOr<SqliteStatement> Prepare(absl::string_view sql);
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const;
  const std::string& path() const { return *path_; }

 private:
  sqlite3* db_ = nullptr;
  // Heap-allocated so that statements can point at it across moves of the database.
  std::unique_ptr<std::string> path_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back in its destructor unless committed. Immediate: the
// write lock is taken at the start, so two writers never deadlock upgrading read locks.
class SqliteTransaction {
 public:
  static absl::StatusOr<SqliteTransaction> Begin(SqliteDatabase& db);
  SqliteTransaction(SqliteTransaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  SqliteTransaction& operator=(SqliteTransaction&&) = delete;
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  ~SqliteTransaction();

  absl::Status Commit();

 private:
  explicit SqliteTransaction(SqliteDatabase* db) : db_(db) {}
  SqliteDatabase* db_;  // nullptr once committed or rolled back
};

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_SQLITE_H_
