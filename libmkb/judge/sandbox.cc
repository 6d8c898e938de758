#include "libmkb/judge/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace mkb {
namespace {

absl::Status SetLimit(int resource, int64_t value, const char* name) {
  struct rlimit limit = {static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  if (::setrlimit(resource, &limit) != 0) {
    return absl::InternalError(absl::StrCat("setrlimit(", name, "): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// Closes every descriptor except 0-2 and `keep`.
void CloseOtherDescriptors(const std::vector<int>& keep) {
  std::vector<int> open;
  if (DIR* dir = ::opendir("/proc/self/fd"); dir != nullptr) {
    const int own = ::dirfd(dir);
    while (struct dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] == '.') continue;
      const int fd = std::atoi(entry->d_name);
      if (fd > 2 && fd != own && std::find(keep.begin(), keep.end(), fd) == keep.end())
        open.push_back(fd);
    }
    ::closedir(dir);
  }
  for (int fd : open) ::close(fd);
}

// Virtual memory this process has mapped (VmSize), in bytes.
int64_t MappedBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmSize:") {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    std::getline(status, key);
  }
  return 0;
}

bool WriteFile(const char* path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out.flush());
}

}  // namespace

absl::StatusOr<SandboxReport> EnterSandbox(const SandboxOptions& options) {
  SandboxReport report;
  if (::setsid() >= 0 || ::getpgrp() == ::getpid()) {
    report.own_process_group = true;
  } else {
    return absl::InternalError(absl::StrCat("setsid: ", std::strerror(errno)));
  }
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) == 0) report.dies_with_host = true;
  ::prctl(PR_SET_DUMPABLE, 0);

  if (options.address_space_bytes > 0) {
    const int64_t limit = MappedBytes() + options.address_space_bytes;
    if (auto s = SetLimit(RLIMIT_AS, limit, "RLIMIT_AS"); !s.ok()) return s;
  }
  if (options.cpu_seconds > 0) {
    struct rlimit limit = {static_cast<rlim_t>(options.cpu_seconds),
                           static_cast<rlim_t>(options.cpu_seconds + 5)};
    ::setrlimit(RLIMIT_CPU, &limit);
  }
  if (options.max_processes > 0)
    SetLimit(RLIMIT_NPROC, options.max_processes, "RLIMIT_NPROC").IgnoreError();
  if (options.max_file_bytes > 0)
    SetLimit(RLIMIT_FSIZE, options.max_file_bytes, "RLIMIT_FSIZE").IgnoreError();
  SetLimit(RLIMIT_CORE, 0, "RLIMIT_CORE").IgnoreError();

  CloseOtherDescriptors(options.keep_fds);

  if (options.isolate_network) {
    if (::unshare(CLONE_NEWNET) == 0) {
      report.network_isolated = true;
    } else {
      // Unprivileged: a user namespace first, mapping our own ids, then the network namespace.
      const uid_t uid = ::getuid();
      const gid_t gid = ::getgid();
      if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
        WriteFile("/proc/self/setgroups", "deny");
        WriteFile("/proc/self/uid_map", absl::StrCat(uid, " ", uid, " 1\n"));
        WriteFile("/proc/self/gid_map", absl::StrCat(gid, " ", gid, " 1\n"));
        report.network_isolated = true;
      } else {
        report.notes.push_back(
            absl::StrCat("no network namespace (", std::strerror(errno),
                         "): network calls are blocked by the runtime audit only"));
      }
    }
  }

  if (options.drop_privileges && ::geteuid() == 0) {
    constexpr uid_t kNobody = 65534;
    if (::setgroups(0, nullptr) == 0 && ::setgid(kNobody) == 0 && ::setuid(kNobody) == 0) {
      report.privileges_dropped = true;
    } else {
      report.notes.push_back(
          absl::StrCat("could not drop root privileges: ", std::strerror(errno)));
    }
  } else if (::geteuid() == 0) {
    report.notes.push_back(
        "the worker runs as root: it is isolated by namespace, limits and audits, "
        "not by user id (set drop_privileges where the environment allows)");
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) report.no_new_privileges = true;
  return report;
}

absl::Status ProtectHost() {
  if (::prctl(PR_SET_DUMPABLE, 0) != 0) {
    return absl::InternalError(absl::StrCat("prctl(PR_SET_DUMPABLE): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace mkb
