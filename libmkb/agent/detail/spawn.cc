#include "libmkb/agent/detail/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libmkb/agent/detail/shell_seccomp.h"

namespace mkb::detail {
namespace {

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

}  // namespace

// Only async-signal-safe calls between fork and exec: everything is prepared before.
absl::StatusOr<Spawned> Spawn(std::vector<std::string> argv, std::vector<std::string> envp,
                              const SpawnOptions& options) {
  if (argv.empty()) return absl::InvalidArgumentError("argv: empty");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  std::vector<char*> argv_ptrs = Pointers(argv);
  std::vector<char*> envp_ptrs = Pointers(envp);
  const rlim_t fsize_limit = static_cast<rlim_t>(std::max<int64_t>(options.max_file_bytes, 0));
  const rlimit fsize = {fsize_limit, fsize_limit};
  const rlimit core = {0, 0};
  const char* chdir_to = options.chdir_to.empty() ? nullptr : options.chdir_to.c_str();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    if (options.new_session) {
      ::setsid();
    } else {
      ::setpgid(0, 0);
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    if (options.cpus != nullptr) ::sched_setaffinity(0, sizeof(*options.cpus), options.cpus);
    if (options.max_file_bytes >= 0) ::setrlimit(RLIMIT_FSIZE, &fsize);
    ::setrlimit(RLIMIT_CORE, &core);
    if (devnull.get() >= 0) ::dup2(devnull.get(), 0);
    ::dup2(write_end.get(), 1);
    ::dup2(write_end.get(), 2);
    CloseFrom(3);
    if (options.seccomp != nullptr && !InstallShellFilter(*options.seccomp)) {
      static constexpr char kRefused[] = "the kernel refused the shell's seccomp filter\n";
      (void)!::write(2, kRefused, sizeof(kRefused) - 1);
      ::_exit(126);
    }
    if (chdir_to != nullptr && ::chdir(chdir_to) != 0) ::_exit(126);
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

absl::StatusOr<Finished> RunToEnd(std::vector<std::string> argv, std::vector<std::string> envp,
                                  absl::Duration timeout, size_t max_output_bytes) {
  const std::string program = argv.empty() ? "" : argv[0];
  absl::StatusOr<Spawned> spawned = Spawn(std::move(argv), std::move(envp), SpawnOptions{});
  if (!spawned.ok()) return spawned.status();
  const absl::Time deadline = absl::Now() + timeout;
  Finished finished;
  char buffer[65536];
  bool timed_out = false;
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      timed_out = true;
      break;
    }
    struct pollfd p = {spawned->output.get(), POLLIN, 0};
    const int ready =
        ::poll(&p, 1, static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(spawned->output.get(), buffer, sizeof(buffer));
    if (n > 0) {
      const size_t room = max_output_bytes - std::min(max_output_bytes, finished.output.size());
      finished.output.append(buffer, std::min(room, static_cast<size_t>(n)));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      break;  // end of output
    }
  }
  // The output ended: the process exits now, or it is killed at the deadline.
  int status = 0;
  while (!timed_out) {
    const pid_t waited = ::waitpid(spawned->pid, &status, WNOHANG);
    if (waited == spawned->pid || (waited < 0 && errno != EINTR)) break;
    if (absl::Now() >= deadline) {
      timed_out = true;
      break;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  if (timed_out) {
    ::kill(-spawned->pid, SIGKILL);
    while (::waitpid(spawned->pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(program, " ran past ", absl::FormatDuration(timeout), " and was killed"));
  }
  finished.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return finished;
}

}  // namespace mkb::detail
