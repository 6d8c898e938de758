#include "libmkb/agent/shell_sandbox.h"

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

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "libmkb/agent/detail/process_tree.h"

namespace mkb {
namespace {

namespace fs = std::filesystem;

// Closes its descriptor on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = other.fd_;
      other.fd_ = -1;
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

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

void CloseFrom(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
#endif
  for (int fd = first; fd < 65536; ++fd) ::close(fd);
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct Spawned {
  pid_t pid = -1;
  Fd output;
};

// Forks and execs `argv` with `envp`, stdin from /dev/null, stdout and stderr into one pipe.
// Only async-signal-safe calls between fork and exec: everything is prepared before.
absl::StatusOr<Spawned> Spawn(std::vector<std::string> argv, std::vector<std::string> envp,
                              const cpu_set_t& cpus, int64_t max_file_bytes, bool new_session,
                              const std::string& chdir_to) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);
  Fd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  std::vector<char*> argv_ptrs = Pointers(argv);
  std::vector<char*> envp_ptrs = Pointers(envp);
  const rlimit fsize = {static_cast<rlim_t>(max_file_bytes), static_cast<rlim_t>(max_file_bytes)};
  const rlimit core = {0, 0};
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    if (new_session) {
      ::setsid();
    } else {
      ::setpgid(0, 0);
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    ::sched_setaffinity(0, sizeof(cpus), &cpus);
    if (max_file_bytes > 0) ::setrlimit(RLIMIT_FSIZE, &fsize);
    ::setrlimit(RLIMIT_CORE, &core);
    if (devnull.get() >= 0) ::dup2(devnull.get(), 0);
    ::dup2(write_end.get(), 1);
    ::dup2(write_end.get(), 2);
    CloseFrom(3);
    if (!chdir_to.empty() && ::chdir(chdir_to.c_str()) != 0) ::_exit(126);
    // Default signal dispositions for the command (the host may ignore SIGPIPE).
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(argv_ptrs[0], argv_ptrs.data(), envp_ptrs.data());
    ::_exit(127);
  }
  Spawned spawned;
  spawned.pid = pid;
  spawned.output = std::move(read_end);
  return spawned;
}

void KillAll(pid_t pid, const std::vector<pid_t>& tree) {
  ::kill(pid, SIGKILL);
  ::kill(-pid, SIGKILL);
  for (pid_t p : tree) ::kill(p, SIGKILL);
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
  } else if (signal != 0) {
    absl::StrAppend(&out, "[killed by signal ", signal, " (", strsignal(signal), ")]\n");
  } else if (exit_code != 0) {
    absl::StrAppend(&out, "[exit code ", exit_code, "]\n");
  }
  if (out.empty()) out = "[no output, exit code 0]\n";
  return out;
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

std::vector<std::string> ShellSandbox::BwrapArguments(absl::string_view command) const {
  const std::string& ws = options_.workspace;
  std::vector<std::string> args = {options_.bwrap,
                                   "--die-with-parent",
                                   "--new-session",
                                   "--unshare-user-try",
                                   "--unshare-ipc",
                                   "--unshare-pid",
                                   "--unshare-net",
                                   "--unshare-uts",
                                   "--unshare-cgroup-try",
                                   "--hostname",
                                   "sandbox",
                                   "--ro-bind",
                                   "/",
                                   "/",
                                   "--dev",
                                   "/dev",
                                   "--proc",
                                   "/proc",
                                   "--size",
                                   absl::StrCat(options_.tmp_bytes),
                                   "--tmpfs",
                                   "/tmp"};
  // The host's runtime sockets (a container engine's, D-Bus) live under /run.
  std::error_code run_error;
  if (fs::is_directory(fs::symlink_status("/run", run_error))) {
    args.insert(args.end(), {"--tmpfs", "/run"});
  }
  for (const std::string& hidden : options_.hidden_paths) {
    std::error_code error;
    const fs::file_status status = fs::symlink_status(hidden, error);
    if (error || fs::is_symlink(status)) continue;
    if (fs::is_directory(status)) {
      args.insert(args.end(), {"--tmpfs", hidden});
    } else if (fs::exists(status)) {
      args.insert(args.end(), {"--ro-bind", "/dev/null", hidden});
    }
  }
  args.insert(args.end(), {"--bind", ws, ws, "--chdir", ws, "--cap-drop", "ALL", "--",
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
  for (std::string& hidden : options.hidden_paths) {
    const fs::path h = fs::weakly_canonical(hidden, error);
    if (!error) hidden = h.string();
    if (hidden == options.workspace) {
      return absl::InvalidArgumentError(
          absl::StrCat("hidden_paths: '", hidden, "' is the workspace itself"));
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
  absl::StatusOr<Spawned> spawned =
      Spawn(std::move(argv), Environment(), PickCpus(options_.cpus), options_.max_file_bytes,
            /*new_session=*/!isolated_, isolated_ ? "" : options_.workspace);
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
    }
    if (now >= deadline) result.timed_out = true;
    if (result.timed_out || result.memory_exceeded || result.too_many_processes) {
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
