// The store's schema: the tables of version 1, the migrations that take a store to the current
// version, and what identifies a file as a store of a version this build reads.
//
// The schema version is PRAGMA user_version: 1 for the tables of version 1, plus one for each
// migration applied. A new store gets the tables of version 1 and then every migration, so that
// a new store and a migrated one are the same.
#ifndef LIBMKB_STORE_DETAIL_SCHEMA_H_
#define LIBMKB_STORE_DETAIL_SCHEMA_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libmkb/store/detail/sqlite.h"

namespace mkb::store_detail {

// The schema version this build writes (and the newest it reads).
int CurrentSchemaVersion();

// What the file holds: the application id, the schema version and the number of schema objects.
struct FileIdentity {
  int64_t application_id = 0;
  int64_t version = 0;
  int64_t objects = 0;
};

// Reads the identity without writing anything. FailedPreconditionError when the file is not an
// SQLite database.
absl::StatusOr<FileIdentity> ReadIdentity(SqliteDatabase& db);

// FailedPreconditionError unless the file is a store this build reads (or an empty database,
// when `empty_ok`).
absl::Status CheckStoreFile(const FileIdentity& id, const std::string& path, bool empty_ok);

// Creates the schema of the current version in an empty database (the caller's transaction).
absl::Status CreateSchema(SqliteDatabase& db);

// Applies the migrations from `version` on (the caller's transaction), oldest first, and sets
// user_version to the current version.
absl::Status Migrate(SqliteDatabase& db, int64_t version);

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_SCHEMA_H_
