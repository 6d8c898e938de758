// The migrations of the store's schema (detail/schema.cc lists them in order). Each takes a
// store of the version before it to its version, inside the caller's transaction.
#ifndef LIBMKB_STORE_DETAIL_MIGRATIONS_H_
#define LIBMKB_STORE_DETAIL_MIGRATIONS_H_

#include "absl/status/status.h"
#include "libmkb/store/detail/sqlite.h"

namespace mkb::store_detail {

// Version 2: trials that could not start are BLOCKED (version 1 left them PENDING), and trials
// outside their experiment's plan can be RETIRED (nothing to migrate: version 1 kept them as
// they were). A PENDING conditioned trial whose source trial in its experiment failed or is
// blocked, or whose other model's source has no resolved trial, becomes BLOCKED.
absl::Status MigrateToVersion2(SqliteDatabase& db);

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_MIGRATIONS_H_
