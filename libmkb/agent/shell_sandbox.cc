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
};

// The workspace's use of the disk: a walk that follows no link, stays on the root's file
// system, and stops once it has seen more than `max_entries` entries (a command that made that
// many is over its limit anyway).
WorkspaceUse MeasureWorkspace(const std::string& root, int64_t max_entries) {
  WorkspaceUse use;
  struct stat top;
  if (::lstat(root.c_str(), &top) != 0) return use;
  std::set<std::pair<dev_t, ino_t>> linked;  // inodes with more than one name, counted once
  std::vector<std::string> folders = {root};
  while (!folders.empty() && use.entries <= max_entries) {
    const std::string folder = std::move(folders.back());
    folders.pop_back();
    DIR* dir = ::opendir(folder.c_str());
    if (dir == nullptr) continue;
    while (const dirent* entry = ::readdir(dir)) {
      const absl::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (++use.entries > max_entries) break;
      struct stat st;
      if (::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) &&
          !linked.insert({st.st_dev, st.st_ino}).second) {
        continue;
      }
      use.bytes += static_cast<int64_t>(st.st_blocks) * 512;
      if (S_ISDIR(st.st_mode) && st.st_dev == top.st_dev) {
        folders.push_back(absl::StrCat(folder, "/", name));
      }
    }
    ::closedir(dir);
  }
  return use;
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
                    workspace_files, " files and folders) and the command was killed]\n");
  } else if (signal != 0) {
    absl::StrAppend(&out, "[killed by signal ", signal, " (", strsignal(signal), ")]\n");
  } else if (exit_code != 0) {
    absl::StrAppend(&out, "[exit code ", exit_code, "]\n");
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
  std::vector<std::string> args = {options_.bwrap, "--die-with-parent", "--new-session",
                                   "--unshare-user-try", "--unshare-ipc", "--unshare-pid",
                                   "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                                   "--hostname", "sandbox", "--dev", "/dev", "--proc", "/proc",
                                   "--size", absl::StrCat(options_.tmp_bytes), "--tmpfs", "/tmp",
                                   // The host's runtime sockets (a container engine's, D-Bus)
                                   // live under /run: an empty one.
                                   "--tmpfs", "/run"};
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
  args.insert(args.end(), {"--remount-ro", "/", "--chdir", ws, "--cap-drop", "ALL", "--",
                           options_.shell, "--noprofile", "--norc", "-c", std::string(command)});
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
  detail::SpawnOptions spawn;
  spawn.cpus = &cpus;
  spawn.max_file_bytes = options_.max_file_bytes;
  spawn.seccomp = &filter;
  // The workspace may not grow past its limits, or past what it held when the command started
  // (a workspace already over them can still be cleaned up). Counted in full here: what earlier
  // commands left is bounded by the same check (the limits and what one interval adds).
  const WorkspaceUse at_start =
      MeasureWorkspace(options_.workspace, std::numeric_limits<int64_t>::max() - 1);
  const int64_t byte_limit = std::max(options_.workspace_bytes, at_start.bytes);
  const int64_t file_limit = std::max(options_.workspace_files, at_start.entries);
  spawn.new_session = !isolated_;  // bubblewrap makes the sandbox's own session
  if (!isolated_) spawn.chdir_to = options_.workspace;
  absl::StatusOr<Spawned> spawned = detail::Spawn(std::move(argv), Environment(), spawn);
  if (!spawned.ok()) return spawned.status();
  const pid_t pid = spawned->pid;
  ShellResult result;
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
      } else if (static_cast<int>(scan.pids.size()) > options_.max_processes) {
        result.too_many_processes = true;
      }
      const WorkspaceUse use = MeasureWorkspace(options_.workspace, file_limit);
      result.workspace_bytes = use.bytes;
      result.workspace_files = use.entries;
      if (use.bytes > byte_limit || use.entries > file_limit) result.workspace_exceeded = true;
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
