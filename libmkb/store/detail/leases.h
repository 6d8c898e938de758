// Run leases (the run_leases table): which process runs an experiment, so that two runs stay
// off the same one.
#ifndef LIBMKB_STORE_DETAIL_LEASES_H_
#define LIBMKB_STORE_DETAIL_LEASES_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "libmkb/store/detail/sqlite.h"

namespace mkb::store_detail {

// A process that may hold leases: its host name and pid.
struct LeaseHolder {
  std::string host;
  int64_t pid = 0;
};

// This process ("unknown" as host when the name cannot be read).
LeaseHolder ThisProcess();

// Claims `experiment` for `holder` (one transaction). FailedPreconditionError naming the holder
// when another live process (same host: its pid still exists; another host: a lease renewed
// within the last 10 minutes) holds it. A lease left by a dead process is taken over.
absl::Status AcquireLease(SqliteDatabase& db, const LeaseHolder& holder,
                          const std::string& experiment);
// Marks `holder`'s lease on `experiment` as renewed now; nothing when it holds none.
absl::Status RenewLease(SqliteDatabase& db, const LeaseHolder& holder,
                        const std::string& experiment);
// Drops `holder`'s lease on `experiment`; nothing when it holds none.
absl::Status ReleaseLease(SqliteDatabase& db, const LeaseHolder& holder,
                          const std::string& experiment);

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_LEASES_H_
