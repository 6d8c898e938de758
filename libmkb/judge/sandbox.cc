#include "libmkb/judge/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libmkb/core/unique_fd.h"
#include "libmkb/judge/detail/seccomp_filter.h"

namespace mkb {
namespace {

absl::Status Errno(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status SetLimit(int resource, int64_t value, const char* name) {
  struct rlimit limit = {static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  if (::setrlimit(resource, &limit) != 0) return Errno(absl::StrCat("setrlimit(", name, ")"));
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

// mkdir -p, mode 0755.
absl::Status MakeDirectories(const std::string& path) {
  std::string partial;
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      partial = path.substr(0, i);
      if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
        return Errno(absl::StrCat("mkdir ", partial));
    }
  }
  return absl::OkStatus();
}

// An empty file or directory at `target` to mount `source` onto.
absl::Status MakeMountPoint(const std::string& source, const std::string& target) {
  struct stat st;
  if (::stat(source.c_str(), &st) != 0) return Errno(absl::StrCat("stat ", source));
  if (S_ISDIR(st.st_mode)) return MakeDirectories(target);
  const size_t slash = target.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    if (auto s = MakeDirectories(target.substr(0, slash)); !s.ok()) return s;
  }
  const UniqueFd fd(::open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  if (!fd.valid() && errno != EEXIST) return Errno(absl::StrCat("create ", target));
  return absl::OkStatus();
}

// Makes a bind mount (and, with MS_REC, those below it) read-only. mount_setattr reaches every
// submount at once; older kernels get a remount of the top one.
absl::Status MakeReadOnly(const std::string& target, bool recursive) {
#ifdef SYS_mount_setattr
  struct MountAttr {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
  } attr = {0x1 /* MOUNT_ATTR_RDONLY */ | 0x2 /* NOSUID */ | 0x4 /* NODEV */, 0, 0, 0};
  constexpr unsigned kAtRecursive = 0x8000;
  if (::syscall(SYS_mount_setattr, -1, target.c_str(), recursive ? kAtRecursive : 0, &attr,
                sizeof(attr)) == 0) {
    return absl::OkStatus();
  }
#endif
  if (::mount(nullptr, target.c_str(), nullptr,
              MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) != 0) {
    // A mount with locked flags (e.g. one inherited read-only from a container) refuses to
    // change nosuid / nodev: make it read-only alone.
    if (::mount(nullptr, target.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0)
      return Errno(absl::StrCat("read-only remount of ", target));
  }
  return absl::OkStatus();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The view's paths in mount order: parents before what lies below them, one entry per path.
std::vector<std::string> Normalized(std::vector<std::string> paths) {
  for (std::string& p : paths) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

bool Below(const std::string& path, const std::string& root) {
  return path == root || absl::StartsWith(path, root == "/" ? "/" : absl::StrCat(root, "/"));
}

// A writable directory of the view as a tmpfs of options.writable_bytes holding a copy of
// `source` (the workspace: kernel.py and whatever the host put there). The copies and the tmpfs's
// root belong to the worker's user when the keeper is root (the worker switches to it); in a
// user namespace the keeper already is that user.
absl::Status MountWritableCopy(const SandboxOptions& options, const std::string& source,
                               const std::string& target) {
  const bool root = ::geteuid() == 0;
  std::string mount_options = absl::StrCat("size=", options.writable_bytes, ",mode=0700");
  if (root) absl::StrAppend(&mount_options, ",uid=", options.uid, ",gid=", options.gid);
  // noexec, as every writable place of the view: nothing the kernel writes is mapped as code (a
  // compiled extension it wrote into the workspace loaded through CuTe DSL's import retry: red
  // team, 2026-12-06; TVM's load_module dlopens a file with no audit event at all).
  if (::mount("mkb-work", target.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              mount_options.c_str()) != 0) {
    return Errno(absl::StrCat("mount the writable copy of ", source));
  }
  namespace fs = std::filesystem;
  std::error_code error;
  fs::copy(source, target, fs::copy_options::recursive | fs::copy_options::copy_symlinks, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("copy ", source, " into the worker's view: ", error.message()));
  }
  if (root) {
    for (auto it = fs::recursive_directory_iterator(target, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      ::lchown(it->path().c_str(), options.uid, options.gid);
    }
    if (error) return absl::InternalError(absl::StrCat("chown in ", target, ": ", error.message()));
  }
  return absl::OkStatus();
}

// Builds the worker's filesystem under options.view_root (already a private mount namespace):
// everything but /proc, which the worker mounts once it is in its PID namespace.
absl::Status BuildView(const SandboxOptions& options) {
  const std::string& root = options.view_root;
  if (::mount("mkb-root", root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755") != 0)
    return Errno("mount the view's root");
  const std::string tmp_options = absl::StrCat("size=", options.tmp_bytes, ",mode=1777");
  for (const char* dir : {"/tmp", "/dev", "/proc"}) {
    if (auto s = MakeDirectories(root + dir); !s.ok()) return s;
  }
  if (::mount("mkb-tmp", (root + "/tmp").c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              tmp_options.c_str()) != 0) {
    return Errno("mount the private /tmp");
  }
  if (::mount("mkb-dev", (root + "/dev").c_str(), "tmpfs", MS_NOSUID | MS_NOEXEC,
              "size=64k,mode=0755") != 0) {
    return Errno("mount /dev");
  }
  std::vector<std::string> devices = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                      "/dev/urandom"};
  devices.insert(devices.end(), options.device_paths.begin(), options.device_paths.end());
  for (const std::string& device : Normalized(devices)) {
    if (!Exists(device)) continue;
    const std::string target = root + device;
    if (auto s = MakeMountPoint(device, target); !s.ok()) return s;
    if (::mount(device.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return Errno(absl::StrCat("bind ", device));
  }
  if (auto s = MakeDirectories(root + "/dev/shm"); !s.ok()) return s;
  if (::mount("mkb-shm", (root + "/dev/shm").c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=64m,mode=1777") != 0) {
    return Errno("mount /dev/shm");
  }

  // Read-only and writable binds, parents first (a writable workdir below a read-only tree
  // stays writable).
  struct Bind {
    std::string path;
    bool writable;
  };
  std::vector<Bind> binds;
  for (const std::string& p : Normalized(options.read_only_paths)) binds.push_back({p, false});
  for (const std::string& p : Normalized(options.writable_paths)) binds.push_back({p, true});
  std::sort(binds.begin(), binds.end(),
            [](const Bind& a, const Bind& b) { return a.path < b.path; });
  for (const Bind& bind : binds) {
    if (bind.path.empty() || bind.path[0] != '/' || !Exists(bind.path)) continue;
    if (bind.path == "/" || Below(bind.path, "/proc") || Below(bind.path, "/dev")) continue;
    const std::string target = root + bind.path;
    if (auto s = MakeMountPoint(bind.path, target); !s.ok()) return s;
    if (bind.writable && options.writable_bytes > 0 && IsDirectory(bind.path)) {
      if (auto s = MountWritableCopy(options, bind.path, target); !s.ok()) return s;
      continue;
    }
    const bool recursive = bind.path != "/sys";  // sysfs: its own tree, not cgroupfs & co.
    if (::mount(bind.path.c_str(), target.c_str(), nullptr, MS_BIND | (recursive ? MS_REC : 0),
                nullptr) != 0) {
      return Errno(absl::StrCat("bind ", bind.path));
    }
    if (!bind.writable) {
      if (auto s = MakeReadOnly(target, recursive); !s.ok()) return s;
    } else {
      ::mount(nullptr, target.c_str(), nullptr,
              MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    }
  }
  // Masks: hidden paths that a bind made visible (strictly inside a bound tree; a hidden path
  // that holds a bound one is simply not bound, and masking it would hide the bind).
  for (const std::string& hidden : Normalized(options.hidden_paths)) {
    if (hidden.empty() || hidden[0] != '/') continue;
    bool inside = false, holds = false;
    for (const Bind& bind : binds) {
      inside |= hidden != bind.path && Below(hidden, bind.path);
      holds |= Below(bind.path, hidden);
    }
    if (!inside || holds) continue;
    const std::string target = root + hidden;
    if (!Exists(target)) continue;
    if (IsDirectory(target)) {
      if (::mount("mkb-hidden", target.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV,
                  "size=4k,mode=0000") != 0) {
        return Errno(absl::StrCat("hide ", hidden));
      }
    } else if (::mount("/dev/null", target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      return Errno(absl::StrCat("hide ", hidden));
    }
  }
  return MakeDirectories(root + "/.old");
}

// The worker's side, once it is PID 1 of its namespace: /proc, then the new root.
absl::Status EnterView(const SandboxOptions& options) {
  const std::string& root = options.view_root;
  if (::mount("proc", (root + "/proc").c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              nullptr) != 0) {
    return Errno("mount /proc");
  }
  if (::syscall(SYS_pivot_root, root.c_str(), (root + "/.old").c_str()) != 0)
    return Errno("pivot_root");
  if (::chdir("/") != 0) return Errno("chdir /");
  if (::umount2("/.old", MNT_DETACH) != 0) return Errno("detach the old root");
  ::rmdir("/.old");
  // The root itself read-only: the worker writes only where a writable bind or tmpfs says.
  ::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr);
  return absl::OkStatus();
}

// Drops every capability from the bounding, permitted, effective, inheritable and ambient sets.
absl::Status ClearCapabilities() {
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  for (int cap = 0; cap <= 63; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return Errno("capset");
  return absl::OkStatus();
}

bool HasNoCapabilities() {
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return data[0].effective == 0 && data[1].effective == 0 && data[0].permitted == 0 &&
         data[1].permitted == 0;
}

// The keeper: waits for the worker and ends as it did. Never returns.
[[noreturn]] void Keep(pid_t worker) {
  int status = 0;
  while (::waitpid(worker, &status, 0) < 0) {
    if (errno != EINTR) ::_exit(71);
  }
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    struct sigaction action = {};
    action.sa_handler = SIG_DFL;
    ::sigaction(sig, &action, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::kill(::getpid(), sig);
    ::_exit(128 + sig);
  }
  ::_exit(72);
}

}  // namespace

absl::StatusOr<SandboxReport> EnterSandbox(const SandboxOptions& options) {
  SandboxReport report;
  // The caller's stdin is the judge's request pipe: the worker reads nothing from it.
  if (const UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC)); null_fd.valid()) {
    ::dup2(null_fd.get(), 0);
  }
  if (::setsid() >= 0 || ::getpgrp() == ::getpid()) {
    report.own_process_group = true;
  } else {
    return Errno("setsid");
  }
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) == 0) report.dies_with_host = true;
  ::prctl(PR_SET_DUMPABLE, 0);
  CloseOtherDescriptors(options.keep_fds);

  // Namespaces. This child is single-threaded (fork copies one thread), as CLONE_NEWUSER needs.
  const bool root = ::geteuid() == 0;
  int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (options.isolate_network) flags |= CLONE_NEWNET;
  const uid_t outer_uid = ::getuid();
  const gid_t outer_gid = ::getgid();
  if (!root) flags |= CLONE_NEWUSER;
  if (::unshare(flags) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create the worker's namespaces (", std::strerror(errno),
                     root ? ")" : "; unprivileged user namespaces may be disabled here)"));
  }
  if (!root) {
    WriteFile("/proc/self/setgroups", "deny");
    if (!WriteFile("/proc/self/uid_map", absl::StrCat(outer_uid, " ", outer_uid, " 1\n")) ||
        !WriteFile("/proc/self/gid_map", absl::StrCat(outer_gid, " ", outer_gid, " 1\n"))) {
      return Errno("map the worker's user namespace");
    }
  }
  report.own_mount_namespace = true;
  report.network_isolated = options.isolate_network;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return Errno("make the worker's mounts private");
  if (!options.view_root.empty()) {
    if (auto s = BuildView(options); !s.ok()) return s;
    report.filesystem_view = true;
  }
  SetLimit(RLIMIT_CORE, 0, "RLIMIT_CORE").IgnoreError();

  const pid_t worker = ::fork();
  if (worker < 0) return Errno("fork the worker");
  if (worker > 0) Keep(worker);

  // The worker: PID 1 of its namespace; it dies with its keeper.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  report.own_pid_namespace = ::getpid() == 1;
  if (!options.view_root.empty()) {
    if (auto s = EnterView(options); !s.ok()) return s;
  } else if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    report.notes.push_back(absl::StrCat("no /proc of its own: ", std::strerror(errno)));
  }

  if (options.address_space_bytes > 0) {
    const int64_t limit = MappedBytes() + options.address_space_bytes;
    if (auto s = SetLimit(RLIMIT_AS, limit, "RLIMIT_AS"); !s.ok()) return s;
  }
  if (options.cpu_seconds > 0) {
    struct rlimit limit = {static_cast<rlim_t>(options.cpu_seconds),
                           static_cast<rlim_t>(options.cpu_seconds + 5)};
    ::setrlimit(RLIMIT_CPU, &limit);
  }
  if (options.max_file_bytes > 0)
    SetLimit(RLIMIT_FSIZE, options.max_file_bytes, "RLIMIT_FSIZE").IgnoreError();

  // Privileges: never root. A root judge switches to options.uid; a non-root one keeps its uid
  // (mapped to itself in the user namespace) and gives up the namespace's capabilities.
  if (root) {
    if (options.uid == 0) return absl::InvalidArgumentError("the worker may not run as root");
    for (int cap = 0; cap <= 63; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(options.gid, options.gid, options.gid) != 0 ||
        ::setresuid(options.uid, options.uid, options.uid) != 0) {
      return Errno("drop root privileges");
    }
  }
  if (auto s = ClearCapabilities(); !s.ok()) return s;
  report.uid = ::getuid();
  report.privileges_dropped = report.uid != 0 && ::geteuid() != 0 && HasNoCapabilities();
  if (!report.privileges_dropped) return absl::InternalError("the worker kept privileges");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) report.no_new_privileges = true;
  if (options.seccomp) {
    if (auto s = detail::InstallWorkerSeccompFilter(); !s.ok()) return s;
    report.syscall_filter = true;
  }
  return report;
}

absl::Status ProtectHost() {
  if (::prctl(PR_SET_DUMPABLE, 0) != 0) {
    return absl::InternalError(absl::StrCat("prctl(PR_SET_DUMPABLE): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

std::vector<std::string> SeccompDeniedSyscalls() { return detail::WorkerSeccompDeniedNames(); }

absl::Status SealCpuAffinity() { return detail::SealCpuAffinity(); }
absl::Status SealProcesses() { return detail::SealProcesses(); }

}  // namespace mkb
