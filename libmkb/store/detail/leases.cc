#include "libmkb/store/detail/leases.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "libmkb/core/clock.h"
#include "libmkb/core/status_macros.h"

namespace mkb::store_detail {
namespace {

// How long a lease held by a process on another host stays valid without renewal.
constexpr double kForeignLeaseSeconds = 600;

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

bool ProcessExists(int64_t pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

LeaseHolder ThisProcess() { return LeaseHolder{HostName(), getpid()}; }

absl::Status AcquireLease(SqliteDatabase& db, const LeaseHolder& holder,
                          const std::string& experiment) {
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement select,
      db.Prepare("SELECT host, pid, renewed_unix FROM run_leases WHERE experiment = ?"));
  MKB_RETURN_IF_ERROR(select.BindAll(experiment));
  MKB_ASSIGN_OR_RETURN(bool held, select.Step());
  const double now = NowUnix();
  if (held) {
    const std::string host = select.ColumnText(0);
    const int64_t pid = select.ColumnInt(1);
    const double renewed = select.ColumnDouble(2);
    const bool mine = host == holder.host && pid == holder.pid;
    const bool live =
        host == holder.host ? ProcessExists(pid) : now - renewed < kForeignLeaseSeconds;
    if (!mine && live) {
      return absl::FailedPreconditionError(
          absl::StrCat(db.path(), ": experiment '", experiment, "' is being run by process ", pid,
                       " on ", host, "; wait for it to end (or stop it) before running it again"));
    }
  }
  select = SqliteStatement();
  MKB_ASSIGN_OR_RETURN(SqliteStatement upsert,
                       db.Prepare("INSERT OR REPLACE INTO run_leases VALUES (?, ?, ?, ?, ?)"));
  MKB_RETURN_IF_ERROR(upsert.BindAll(experiment, holder.host, holder.pid, now, now));
  MKB_RETURN_IF_ERROR(upsert.Run());
  return transaction.Commit();
}

absl::Status RenewLease(SqliteDatabase& db, const LeaseHolder& holder,
                        const std::string& experiment) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement update,
                       db.Prepare("UPDATE run_leases SET renewed_unix = ? "
                                  "WHERE experiment = ? AND host = ? AND pid = ?"));
  MKB_RETURN_IF_ERROR(update.BindAll(NowUnix(), experiment, holder.host, holder.pid));
  return update.Run();
}

absl::Status ReleaseLease(SqliteDatabase& db, const LeaseHolder& holder,
                          const std::string& experiment) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement remove,
                       db.Prepare("DELETE FROM run_leases "
                                  "WHERE experiment = ? AND host = ? AND pid = ?"));
  MKB_RETURN_IF_ERROR(remove.BindAll(experiment, holder.host, holder.pid));
  return remove.Run();
}

}  // namespace mkb::store_detail
