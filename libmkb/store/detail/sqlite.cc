#include "libmkb/store/detail/sqlite.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"

namespace mkb::store_detail {
namespace {

// The most specific canonical code for an SQLite result code.
absl::StatusCode CodeOf(int code) {
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CANTOPEN:
      return absl::StatusCode::kNotFound;
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return absl::StatusCode::kPermissionDenied;
    case SQLITE_CONSTRAINT:
      return absl::StatusCode::kAlreadyExists;
    case SQLITE_FULL:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::string_view FirstLine(absl::string_view sql) {
  while (!sql.empty() && (sql.front() == ' ' || sql.front() == '\n')) sql.remove_prefix(1);
  const size_t end = sql.find('\n');
  return end == absl::string_view::npos ? sql : sql.substr(0, end);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SqliteStatement

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    if (statement_ != nullptr) sqlite3_finalize(statement_);
    statement_ = std::exchange(other.statement_, nullptr);
    path_ = other.path_;
  }
  return *this;
}

SqliteStatement::~SqliteStatement() {
  if (statement_ != nullptr) sqlite3_finalize(statement_);
}

absl::Status SqliteStatement::Error(int code, absl::string_view what) const {
  sqlite3* db = sqlite3_db_handle(statement_);
  return absl::Status(CodeOf(code),
                      absl::StrCat(path_ != nullptr ? *path_ : "sqlite", ": ", what, " '",
                                   FirstLine(sqlite3_sql(statement_)), "': ", sqlite3_errmsg(db)));
}

absl::Status SqliteStatement::Bind(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(statement_, index, value);
  return rc == SQLITE_OK ? absl::OkStatus() : Error(rc, absl::StrCat("binding parameter ", index));
}

absl::Status SqliteStatement::Bind(int index, double value) {
  const int rc = sqlite3_bind_double(statement_, index, value);
  return rc == SQLITE_OK ? absl::OkStatus() : Error(rc, absl::StrCat("binding parameter ", index));
}

absl::Status SqliteStatement::Bind(int index, absl::string_view text) {
  const int rc = sqlite3_bind_text64(statement_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                                     SQLITE_UTF8);
  return rc == SQLITE_OK ? absl::OkStatus() : Error(rc, absl::StrCat("binding parameter ", index));
}

absl::Status SqliteStatement::Bind(int index, Blob blob) {
  const int rc = sqlite3_bind_blob64(statement_, index, blob.bytes.data(), blob.bytes.size(),
                                     SQLITE_TRANSIENT);
  return rc == SQLITE_OK ? absl::OkStatus() : Error(rc, absl::StrCat("binding parameter ", index));
}

absl::Status SqliteStatement::Bind(int index, Null) {
  const int rc = sqlite3_bind_null(statement_, index);
  return rc == SQLITE_OK ? absl::OkStatus() : Error(rc, absl::StrCat("binding parameter ", index));
}

absl::StatusOr<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(rc, "running");
}

absl::Status SqliteStatement::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

void SqliteStatement::Reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

int SqliteStatement::ColumnCount() const { return sqlite3_column_count(statement_); }

std::string SqliteStatement::ColumnName(int column) const {
  const char* name = sqlite3_column_name(statement_, column);
  return name == nullptr ? "" : name;
}

int SqliteStatement::ColumnType(int column) const {
  return sqlite3_column_type(statement_, column);
}

bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

int64_t SqliteStatement::ColumnInt(int column) const {
  return sqlite3_column_int64(statement_, column);
}

double SqliteStatement::ColumnDouble(int column) const {
  return sqlite3_column_double(statement_, column);
}

std::string SqliteStatement::ColumnText(int column) const {
  const void* data = sqlite3_column_blob(statement_, column);
  const int bytes = sqlite3_column_bytes(statement_, column);
  return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), bytes);
}

// ---------------------------------------------------------------------------------------------
// SqliteDatabase

absl::StatusOr<SqliteDatabase> SqliteDatabase::Open(const std::string& path, bool create,
                                                    int busy_timeout_ms, bool read_only) {
  SqliteDatabase db;
  db.path_ = std::make_unique<std::string>(path);
  // NOMUTEX: the store serialises use of its connection itself.
  const int flags = (read_only ? SQLITE_OPEN_READONLY
                               : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)) |
                    SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db.db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db.db_ != nullptr ? sqlite3_errmsg(db.db_) : sqlite3_errstr(rc);
    return absl::Status(CodeOf(rc), absl::StrCat(path, ": cannot open the store: ", message));
  }
  sqlite3_extended_result_codes(db.db_, 1);
  sqlite3_busy_timeout(db.db_, busy_timeout_ms);
  return db;
}

absl::StatusOr<SqliteDatabase> SqliteDatabase::CopyToMemory() const {
  SqliteDatabase copy;
  copy.path_ = std::make_unique<std::string>(*path_);
  const int rc =
      sqlite3_open_v2(":memory:", &copy.db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    return absl::Status(
        CodeOf(rc), absl::StrCat(*path_, ": cannot open a copy in memory: ", sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(copy.db_, 1);
  sqlite3_backup* backup = sqlite3_backup_init(copy.db_, "main", db_, "main");
  if (backup == nullptr) {
    return absl::Status(
        CodeOf(sqlite3_errcode(copy.db_)),
        absl::StrCat(*path_, ": cannot copy into memory: ", sqlite3_errmsg(copy.db_)));
  }
  const int step = sqlite3_backup_step(backup, -1);
  const int finish = sqlite3_backup_finish(backup);
  if (step != SQLITE_DONE || finish != SQLITE_OK) {
    const int code = step != SQLITE_DONE ? step : finish;
    return absl::Status(CodeOf(code),
                        absl::StrCat(*path_, ": cannot copy into memory: ", sqlite3_errstr(code)));
  }
  return copy;
}

SqliteDatabase& SqliteDatabase::operator=(SqliteDatabase&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

SqliteDatabase::~SqliteDatabase() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

absl::Status SqliteDatabase::Exec(absl::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return absl::OkStatus();
  absl::Status status(CodeOf(rc), absl::StrCat(*path_, ": '", FirstLine(sql), "': ",
                                               error != nullptr ? error : sqlite3_errstr(rc)));
  sqlite3_free(error);
  return status;
}

absl::StatusOr<SqliteStatement> SqliteDatabase::Prepare(absl::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  const int rc =
      sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr);
  if (rc != SQLITE_OK) {
    return absl::Status(CodeOf(rc), absl::StrCat(*path_, ": preparing '", FirstLine(sql),
                                                 "': ", sqlite3_errmsg(db_)));
  }
  return SqliteStatement(statement, path_.get());
}

int64_t SqliteDatabase::Changes() const { return sqlite3_changes64(db_); }

// ---------------------------------------------------------------------------------------------
// SqliteTransaction

absl::StatusOr<SqliteTransaction> SqliteTransaction::Begin(SqliteDatabase& db) {
  if (absl::Status status = db.Exec("BEGIN IMMEDIATE"); !status.ok()) return status;
  return SqliteTransaction(&db);
}

SqliteTransaction::~SqliteTransaction() {
  if (db_ != nullptr) (void)db_->Exec("ROLLBACK");
}

absl::Status SqliteTransaction::Commit() {
  SqliteDatabase* db = std::exchange(db_, nullptr);
  absl::Status status = db->Exec("COMMIT");
  if (!status.ok()) (void)db->Exec("ROLLBACK");
  return status;
}

}  // namespace mkb::store_detail
