#include "libmkb/agent/shell_sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "libmkb/agent/detail/process_tree.h"
#include "libmkb/agent/detail/shell_seccomp.h"
#include "libmkb/agent/detail/spawn.h"
#include "libmkb/core/utf8.h"

namespace mkb {
namespace {

namespace fs = std::filesystem;
using detail::Spawned;

// Keeps the first and the last `limit / 2` bytes of a stream.
class HeadTail {
 public:
  explicit HeadTail(size_t limit) : half_(std::max<size_t>(limit / 2, 1)) {}
  void Append(const char* data, size_t n) {
    total_ += n;
    const size_t to_head = std::min(n, half_ - std::min(half_, head_.size()));
    head_.append(data, to_head);
    data += to_head;
    n -= to_head;
    if (n == 0) return;
    tail_.append(data, n);
    if (tail_.size() > 2 * half_) tail_.erase(0, tail_.size() - half_);
  }
  std::string Contents() const {
    std::string tail = tail_.size() > half_ ? tail_.substr(tail_.size() - half_) : tail_;
    const int64_t cut =
        static_cast<int64_t>(total_) - static_cast<int64_t>(head_.size() + tail.size());
    if (cut <= 0) return head_ + tail;
    return absl::StrCat(head_, "\n[... ", cut, " bytes of output cut ...]\n", tail);
  }
  int64_t total() const { return static_cast<int64_t>(total_); }

 private:
  size_t half_;
  std::string head_;
  std::string tail_;
  size_t total_ = 0;
};

// CPUs handed out round-robin, so that concurrent attempts spread over the machine.
std::atomic<unsigned> next_cpu{0};

// The CPUs this process may use, rotated, `count` of them.
cpu_set_t PickCpus(int count) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  cpu_set_t chosen;
  CPU_ZERO(&chosen);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return allowed;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  if (cpus.empty() || count <= 0 || count >= static_cast<int>(cpus.size())) return allowed;
  const unsigned start = next_cpu.fetch_add(static_cast<unsigned>(count));
  for (int i = 0; i < count; ++i) CPU_SET(cpus[(start + i) % cpus.size()], &chosen);
  return chosen;
}

std::string FindOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    const std::string candidate = absl::StrCat(dir, "/", name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

void KillAll(pid_t pid, const std::vector<pid_t>& tree) {
  ::kill(pid, SIGKILL);
  ::kill(-pid, SIGKILL);
  for (pid_t p : tree) ::kill(p, SIGKILL);
}

struct WorkspaceUse {
  int64_t bytes = 0;    // allocated blocks of every entry, each inode once
  int64_t entries = 0;  // entries below the root (stops counting past max_entries)
  // a folder it could not measure: nested deeper than kMaxWorkspaceDepth, or one the harness
  // may not read (a harness that is not root cannot open a folder of mode 0300, even its own:
  // 3 GB went uncounted that way; red team, 2026-12-06)
  bool unmeasured = false;
  dev_t device = 0;  // the workspace's file system
};

constexpr size_t kMaxWorkspaceDepth = 128;

// The workspace's use of the disk. Each folder is opened relative to its parent's descriptor,
// never followed through a link (O_NOFOLLOW) and checked to be the one just stat-ed, so that
// neither a path past PATH_MAX (a chain of folders made by relative mkdir and cd: their files
// went uncounted) nor a folder swapped for a link meanwhile (RENAME_EXCHANGE: the walk read a
// host folder's sizes into the kill message) is missed or followed (red team, 2026-12-06). It
// stays on the root's file system and stops past `max_entries` entries or kMaxWorkspaceDepth
// levels; a folder it cannot measure (too deep, unreadable) makes the workspace over its limit
// as such.
WorkspaceUse MeasureWorkspace(const std::string& root, int64_t max_entries) {
  WorkspaceUse use;
  const int root_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root_fd < 0) return use;
  struct stat top;
  DIR* first = ::fstat(root_fd, &top) == 0 ? ::fdopendir(root_fd) : nullptr;
  if (first == nullptr) {
    ::close(root_fd);
    return use;
  }
  use.device = top.st_dev;
  std::set<std::pair<dev_t, ino_t>> linked;  // inodes with more than one name, counted once
  std::vector<DIR*> open_folders = {first};  // the walk's path, each folder open
  while (!open_folders.empty() && use.entries <= max_entries) {
    DIR* dir = open_folders.back();
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      ::closedir(dir);
      open_folders.pop_back();
      continue;
    }
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    ++use.entries;
    struct stat st;
    if (::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) && !linked.insert({st.st_dev, st.st_ino}).second) {
      continue;
    }
    use.bytes += static_cast<int64_t>(st.st_blocks) * 512;
    if (!S_ISDIR(st.st_mode) || st.st_dev != top.st_dev) continue;
    if (open_folders.size() >= kMaxWorkspaceDepth) {
      use.unmeasured = true;
      continue;
    }
    const int fd =
        ::openat(::dirfd(dir), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == EACCES || errno == EPERM) use.unmeasured = true;
      continue;
    }
    struct stat opened;
    DIR* child = nullptr;
    if (::fstat(fd, &opened) == 0 && opened.st_dev == st.st_dev && opened.st_ino == st.st_ino) {
      child = ::fdopendir(fd);
    }
    if (child == nullptr) {
      ::close(fd);
      continue;
    }
    open_folders.push_back(child);
  }
  for (DIR* dir : open_folders) ::closedir(dir);
  return use;
}

// The blocks of files on `device` that the command's processes hold open with no name left (a
// file written through a descriptor after its name was removed: the walk cannot see it, and it
// held 1.8 GB of the host's disk for the command's life; red team, 2026-12-06), each inode once.
int64_t UnlinkedOpenBytes(const std::vector<pid_t>& pids, dev_t device) {
  int64_t bytes = 0;
  std::set<ino_t> seen;
  for (pid_t pid : pids) {
    const std::string fds = absl::StrCat("/proc/", pid, "/fd");
    DIR* dir = ::opendir(fds.c_str());
    if (dir == nullptr) continue;
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] == '.') continue;
      struct stat st;
      if (::fstatat(::dirfd(dir), entry->d_name, &st, 0) != 0) continue;  // the open file
      if (S_ISREG(st.st_mode) && st.st_nlink == 0 && st.st_dev == device &&
          seen.insert(st.st_ino).second) {
        bytes += static_cast<int64_t>(st.st_blocks) * 512;
      }
    }
    ::closedir(dir);
  }
  return bytes;
}

}  // namespace

std::string ShellResult::Observation() const {
  std::string out = output;
  if (!out.empty() && out.back() != '\n') out += "\n";
  if (timed_out) {
    absl::StrAppendFormat(&out, "[the command ran past its time limit (%.0f s) and was killed]\n",
                          seconds);
  } else if (memory_exceeded) {
    absl::StrAppend(&out, "[the command's processes exceeded the sandbox's memory limit (",
                    peak_memory_bytes >> 20, " MiB used) and were killed]\n");
  } else if (too_many_processes) {
    absl::StrAppend(&out, "[the command started too many processes and was killed]\n");
  } else if (workspace_exceeded) {
    absl::StrAppend(&out, "[the workspace grew past its limit (", workspace_bytes >> 20, " MiB in ",
                    workspace_files, " files and folders, or folders nested too deep)",
                    exit_code == -1 ? " and the command was killed]\n" : "]\n");
  } else if (signal != 0) {
    absl::StrAppend(&out, "[killed by signal ", signal, " (", strsignal(signal), ")]\n");
  } else if (exit_code != 0) {
    absl::StrAppend(&out, "[exit code ", exit_code, "]\n");
  }
  if (workspace_over_at_start) {
    absl::StrAppend(&out,
                    "[the workspace was over its limit when the command started: no file data "
                    "can be written until files are removed]\n");
  }
  if (out.empty()) out = "[no output, exit code 0]\n";
  // Text for a model's context, a JSON request and a proto string: valid UTF-8 (a command may
  // print any bytes; the head / tail cut may split a character).
  return ToValidUtf8(out);
}

std::vector<std::string> ShellSandbox::Environment() const {
  std::vector<std::pair<std::string, std::string>> env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                                          {"HOME", options_.workspace},
                                                          {"PWD", options_.workspace},
                                                          {"TMPDIR", "/tmp"},
                                                          {"LANG", "C.UTF-8"},
                                                          {"TERM", "dumb"},
                                                          {"CUDA_VISIBLE_DEVICES", ""},
                                                          {"PYTHONUNBUFFERED", "1"}};
  for (const std::string& entry : options_.environment) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string key = entry.substr(0, eq);
    bool replaced = false;
    for (auto& [k, v] : env) {
      if (k == key) {
        v = entry.substr(eq + 1);
        replaced = true;
      }
    }
    if (!replaced) env.emplace_back(key, entry.substr(eq + 1));
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(absl::StrCat(k, "=", v));
  return out;
}

namespace {

// Whether `path` is `folder` or lies inside it (both lexically normal and absolute).
bool IsWithin(const std::string& path, const std::string& folder) {
  return path == folder || folder == "/" || absl::StartsWith(path, folder + "/");
}

std::string Normal(const std::string& path) { return fs::path(path).lexically_normal().string(); }

// One mount of the view: a host path and where the command sees it.
struct Mounted {
  std::string source;
  std::string canonical_source;
  std::string target;
};

// Mounts `path` (a file or folder of the host) read-only at `target`, or recreates it as a link
// where it is one (the /bin -> usr/bin of a merged /usr).
void ShowSystemPath(const std::string& path, std::vector<std::string>* args,
                    std::vector<Mounted>* mounted) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (error || !fs::exists(status)) return;
  if (fs::is_symlink(status)) {
    const fs::path link = fs::read_symlink(path, error);
    if (!error) args->insert(args->end(), {"--symlink", link.string(), path});
    return;
  }
  args->insert(args->end(), {"--ro-bind", path, path});
  mounted->push_back({path, path, path});
}

}  // namespace

bool IsSecretName(absl::string_view name) {
  const std::string upper = absl::AsciiStrToUpper(name);
  for (const char* marker : {"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
                             "CREDENTIAL", "PRIVATE_KEY"}) {
    if (absl::StrContains(upper, marker)) return true;
  }
  return false;
}

std::vector<std::string> ShellSandbox::BwrapArguments(absl::string_view command) const {
  const std::string& ws = options_.workspace;
  // A user namespace, and none nested in it: in one of its own a command holds every
  // capability and mounts what it likes (a tmpfs no limit counts).
  std::vector<std::string> args = {
      options_.bwrap, "--die-with-parent", "--new-session", "--unshare-user", "--disable-userns",
      "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
      "--hostname", "sandbox", "--dev", "/dev",
      // Every writable tmpfs sized (tmpfs pages are in no process's
      // resident memory, which the memory watcher reads): /dev's own
      // is made read-only below, /dev/shm a tmpfs of its own.
      "--size", absl::StrCat(std::min(options_.tmp_bytes, int64_t{256} << 20)), "--tmpfs",
      "/dev/shm", "--proc", "/proc"};
  // Where the harness runs as root the sandbox's root is the host's uid 0, which is all the
  // kernel asks of a writer of a host-wide sysctl or of sysrq-trigger, capabilities or not
  // (bubblewrap covers these only where it can tell they are writable): read-only here. A red
  // team wrote kernel.core_pattern and ran a script as root on the host (2026-12-06).
  for (const char* entry : {"sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "driver"}) {
    const std::string path = absl::StrCat("/proc/", entry);
    std::error_code missing;
    if (fs::exists(path, missing)) args.insert(args.end(), {"--ro-bind", path, path});
  }
  args.insert(args.end(), {"--size", absl::StrCat(options_.tmp_bytes), "--tmpfs", "/tmp",
                           // The host's runtime sockets (a container engine's, D-Bus) live
                           // under /run: an empty one, and small.
                           "--size", "1048576", "--tmpfs", "/run"});
  // The allow-list: the system's folders, the chosen /etc entries, then the given mounts.
  std::vector<Mounted> mounted;
  for (const char* top : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    ShowSystemPath(top, &args, &mounted);
  }
  args.insert(args.end(), {"--dir", "/etc"});
  std::vector<std::string> etc;
  for (const char* entry : kSystemEtcEntries) etc.push_back(entry);
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator("/etc", error)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "python3")) etc.push_back(name);
  }
  for (const std::string& entry : etc) ShowSystemPath("/etc/" + entry, &args, &mounted);
  // Empty folders made here (over a folder shown in part, or hidden): read-only at the end.
  std::vector<std::string> made;
  for (const ShellMount& mount : options_.read_only) {
    if (!fs::exists(mount.source, error)) continue;
    const std::string target = Normal(mount.target.empty() ? mount.source : mount.target);
    if (mount.only.empty()) {
      args.insert(args.end(), {"--ro-bind", mount.source, target});
    } else {
      args.insert(args.end(), {"--tmpfs", target});
      made.push_back(target);
      for (const std::string& name : mount.only) {
        const std::string entry = (fs::path(mount.source) / name).string();
        const fs::file_status status = fs::symlink_status(entry, error);
        if (error || !fs::exists(status)) continue;
        const std::string inside = (fs::path(target) / name).string();
        if (fs::is_symlink(status)) {
          const fs::path link = fs::read_symlink(entry, error);
          if (!error) args.insert(args.end(), {"--symlink", link.string(), inside});
        } else {
          args.insert(args.end(), {"--ro-bind", entry, inside});
        }
      }
    }
    const fs::path canonical = fs::canonical(mount.source, error);
    mounted.push_back(
        {Normal(mount.source), error ? Normal(mount.source) : canonical.string(), target});
  }
  // Hidden paths, inside what is mounted (the latest mount that holds one decides where it is).
  for (const std::string& hidden : options_.hidden_paths) {
    std::vector<std::string> forms = {Normal(hidden)};
    const fs::path canonical = fs::weakly_canonical(hidden, error);
    if (!error && canonical.string() != forms[0]) forms.push_back(canonical.string());
    std::string inside, host;
    for (auto m = mounted.rbegin(); m != mounted.rend() && inside.empty(); ++m) {
      for (const std::string& form : forms) {
        if (IsWithin(form, m->target)) {
          inside = form;
          host = m->source + form.substr(m->target == "/" ? 0 : m->target.size());
        } else if (IsWithin(form, m->canonical_source)) {
          host = form;
          inside =
              m->target + form.substr(m->canonical_source == "/" ? 0 : m->canonical_source.size());
        }
        if (!inside.empty()) break;
      }
    }
    if (inside.empty()) continue;  // not visible anyway
    const fs::file_status status = fs::symlink_status(host, error);
    if (error || fs::is_symlink(status) || !fs::exists(status)) continue;
    if (fs::is_directory(status)) {
      args.insert(args.end(), {"--tmpfs", inside});
      made.push_back(inside);
    } else {
      args.insert(args.end(), {"--ro-bind", "/dev/null", inside});
    }
  }
  args.insert(args.end(), {"--bind", ws, ws});
  // After the workspace's mount point was made in them, the folders made here and the root
  // become read-only.
  for (const std::string& folder : made) args.insert(args.end(), {"--remount-ro", folder});
  args.insert(args.end(),
              {"--remount-ro", "/dev", "--remount-ro", "/", "--chdir", ws, "--cap-drop", "ALL",
               "--", options_.shell, "--noprofile", "--norc", "-c", std::string(command)});
  return args;
}

absl::StatusOr<ShellSandbox> ShellSandbox::Create(ShellSandboxOptions options) {
  if (options.workspace.empty()) return absl::InvalidArgumentError("workspace: required");
  std::error_code error;
  const fs::path canonical = fs::canonical(options.workspace, error);
  if (error || !fs::is_directory(canonical)) {
    return absl::NotFoundError(
        absl::StrCat("workspace: '", options.workspace, "' is not an existing directory"));
  }
  options.workspace = canonical.string();
  for (const std::string& hidden : options.hidden_paths) {
    if (!fs::path(hidden).is_absolute()) {
      return absl::InvalidArgumentError(
          absl::StrCat("hidden_paths: '", hidden, "' is not absolute"));
    }
    const fs::path h = fs::weakly_canonical(hidden, error);
    if (!error && h.string() == options.workspace) {
      return absl::InvalidArgumentError(
          absl::StrCat("hidden_paths: '", hidden, "' is the workspace itself"));
    }
  }
  for (const ShellMount& mount : options.read_only) {
    for (const std::string* path : {&mount.source, &mount.target}) {
      if (!path->empty() && !fs::path(*path).is_absolute()) {
        return absl::InvalidArgumentError(
            absl::StrCat("read_only: '", *path, "' is not an absolute path"));
      }
    }
    if (mount.source.empty()) return absl::InvalidArgumentError("read_only: a source is required");
  }
  for (const std::string& entry : options.environment) {
    const std::string key = entry.substr(0, entry.find('='));
    if (IsSecretName(key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "environment: '", key, "' names a secret; the agent's shell gets no keys or tokens"));
    }
  }
  if (options.cpus <= 0) return absl::InvalidArgumentError("cpus: must be > 0");
  if (options.memory_bytes <= 0) return absl::InvalidArgumentError("memory_bytes: must be > 0");
  ShellSandbox sandbox(std::move(options));
  const std::string bwrap = FindOnPath(sandbox.options_.bwrap);
  std::string why;
  if (bwrap.empty()) {
    why = absl::StrCat("'", sandbox.options_.bwrap,
                       "' was not found (install bubblewrap: scripts/setup.sh does)");
  } else {
    sandbox.options_.bwrap = bwrap;
    sandbox.isolated_ = true;
    absl::StatusOr<ShellResult> probe = sandbox.Run("true", absl::Seconds(30));
    if (!probe.ok()) {
      why = std::string(probe.status().message());
    } else if (probe->exit_code != 0) {
      why = absl::StrCat(
          "bubblewrap could not start a sandbox: ", absl::StripAsciiWhitespace(probe->output),
          " (it needs unprivileged user namespaces: "
          "sysctl kernel.unprivileged_userns_clone=1, and on Ubuntu 24.04 "
          "kernel.apparmor_restrict_unprivileged_userns=0)");
    }
  }
  if (why.empty()) {
    sandbox.description_ = absl::StrCat(
        "bubblewrap (", bwrap, "): no network, no GPU devices, ", sandbox.options_.cpus, " CPUs, ",
        sandbox.options_.memory_bytes >> 20, " MiB, writes only in ", sandbox.options_.workspace);
    return sandbox;
  }
  sandbox.isolated_ = false;
  if (sandbox.options_.require_isolation) {
    return absl::FailedPreconditionError(absl::StrCat("shell sandbox: ", why));
  }
  sandbox.description_ =
      absl::StrCat("none: ", why,
                   "; commands run unisolated (network, devices and the whole file system "
                   "are reachable), with CPU, memory, process and time limits only");
  return sandbox;
}

absl::StatusOr<ShellResult> ShellSandbox::Run(absl::string_view command,
                                              absl::Duration timeout) const {
  std::vector<std::string> argv;
  if (isolated_) {
    argv = BwrapArguments(command);
  } else {
    argv = {options_.shell, "--noprofile", "--norc", "-c", std::string(command)};
  }
  const absl::Time start = absl::Now();
  const cpu_set_t cpus = PickCpus(options_.cpus);
  const std::vector<sock_filter> filter = detail::ShellFilterProgram();
  ShellResult result;
  detail::SpawnOptions spawn;
  spawn.cpus = &cpus;
  spawn.seccomp = &filter;
  // The workspace may not grow past its limits. One already over them when the command starts
  // (by what the last command wrote before the watcher's next look, at most one interval's
  // worth) may not grow at all: the command can write no file data (RLIMIT_FSIZE 0) and is
  // killed if it adds entries, so that only removing files works until it is under again
  // (each command's overshoot kept was the next one's limit: red team, 2026-12-06).
  const WorkspaceUse at_start =
      MeasureWorkspace(options_.workspace, std::numeric_limits<int64_t>::max() - 1);
  result.workspace_over_at_start = at_start.bytes > options_.workspace_bytes ||
                                   at_start.entries > options_.workspace_files ||
                                   at_start.unmeasured;
  spawn.max_file_bytes = result.workspace_over_at_start ? 0 : options_.max_file_bytes;
  const int64_t byte_limit = std::max(options_.workspace_bytes, at_start.bytes);
  const int64_t file_limit = std::max(options_.workspace_files, at_start.entries);
  // One look at the workspace (and at the files `pids` hold open with no name left).
  auto look = [&](const std::vector<pid_t>& pids) {
    const WorkspaceUse use = MeasureWorkspace(options_.workspace, file_limit);
    result.workspace_bytes = use.bytes + UnlinkedOpenBytes(pids, use.device);
    result.workspace_files = use.entries;
    if (result.workspace_bytes > byte_limit || use.entries > file_limit ||
        (use.unmeasured && !at_start.unmeasured)) {
      result.workspace_exceeded = true;
    }
  };
  spawn.new_session = !isolated_;  // bubblewrap makes the sandbox's own session
  if (!isolated_) spawn.chdir_to = options_.workspace;
  absl::StatusOr<Spawned> spawned = detail::Spawn(std::move(argv), Environment(), spawn);
  if (!spawned.ok()) return spawned.status();
  const pid_t pid = spawned->pid;
  HeadTail output(options_.max_output_bytes);
  const absl::Time deadline = start + timeout;
  absl::Time next_scan = start;
  std::vector<pid_t> tree;
  bool eof = false;
  bool exited = false;
  bool killed = false;
  int wait_status = 0;
  absl::Time exited_at;
  char buffer[65536];
  while (true) {
    if (!eof) {
      struct pollfd p = {spawned->output.get(), POLLIN, 0};
      const int ready = ::poll(&p, 1, 50);
      if (ready > 0) {
        const ssize_t n = ::read(spawned->output.get(), buffer, sizeof(buffer));
        if (n > 0) {
          output.Append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          eof = true;
        }
      }
    } else if (!exited) {
      ::usleep(20000);
    }
    if (!exited) {
      const pid_t waited = ::waitpid(pid, &wait_status, WNOHANG);
      if (waited == pid) {
        exited = true;
        exited_at = absl::Now();
      }
    }
    if (exited && eof) break;
    const absl::Time now = absl::Now();
    // Background processes that outlive the shell keep the pipe open: give them a moment,
    // then end them (with bubblewrap they die with the sandbox's init already).
    if (exited && now - exited_at > absl::Milliseconds(500)) {
      KillAll(pid, detail::ScanProcessTree(pid).pids);
      break;
    }
    if (killed) continue;
    if (now >= next_scan) {
      next_scan = now + absl::Milliseconds(100);
      detail::ProcessTree scan = detail::ScanProcessTree(pid);
      tree = scan.pids;
      result.peak_memory_bytes = std::max(result.peak_memory_bytes, scan.resident_bytes);
      if (scan.resident_bytes > options_.memory_bytes) {
        result.memory_exceeded = true;
      } else if (scan.threads > options_.max_processes) {
        // Threads too: a command made 5,000 threads under a limit of 64 processes, each a pid
        // of the host's (red team, 2026-12-06).
        result.too_many_processes = true;
      }
      look(scan.pids);
    }
    if (now >= deadline) result.timed_out = true;
    if (result.timed_out || result.memory_exceeded || result.too_many_processes ||
        result.workspace_exceeded) {
      KillAll(pid, tree);
      killed = true;
    }
  }
  if (!exited) {
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
  }
  // One last look: a command that grew the workspace and ended between two looks is reported
  // (and the next one starts over the limit, with no file data to write).
  if (!killed) look({});  // the command's processes are gone
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  result.output = output.Contents();
  result.output_bytes = output.total();
  if (WIFEXITED(wait_status)) {
    result.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    result.signal = WTERMSIG(wait_status);
  }
  // bubblewrap reports the command's death by signal as exit code 128 + signal.
  if (killed && result.signal == 0) result.signal = SIGKILL;
  if (killed) result.exit_code = -1;
  return result;
}

}  // namespace mkb
