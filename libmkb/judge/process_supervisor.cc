#include "libmkb/judge/process_supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libmkb/core/utf8.h"

namespace mkb {

void TailBuffer::Append(const char* data, size_t size) {
  buffer_.append(data, size);
  if (buffer_.size() > capacity_) {
    // Cut where a character starts: the bytes of one cut in two go with the dropped ones.
    const size_t cut = Utf8BoundaryAtOrAfter(buffer_, buffer_.size() - capacity_);
    buffer_.erase(0, cut);
    dropped_ += cut;
  }
}

std::string TailBuffer::Contents() const {
  // What the process wrote is any bytes; the tail goes into proto string fields.
  const std::string text = ToValidUtf8(buffer_);
  if (dropped_ == 0) return text;
  return absl::StrCat("[... ", dropped_, " bytes cut ...]\n", text);
}

int64_t OwnResidentBytes(pid_t pid) {
  std::ifstream statm(absl::StrCat("/proc/", pid, "/statm"));
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// Resident memory of `pid` and every process below it, from /proc/<pid>/task/<pid>/children.
int64_t TreeResidentBytes(pid_t pid, int depth) {
  int64_t total = OwnResidentBytes(pid);
  if (depth > 8) return total;
  std::ifstream children(absl::StrCat("/proc/", pid, "/task/", pid, "/children"));
  pid_t child = 0;
  while (children >> child) total += TreeResidentBytes(child, depth + 1);
  return total;
}

int64_t ResidentBytes(pid_t pid) { return TreeResidentBytes(pid, 0); }

namespace {

// The CPU time the kernel has charged to process `pid` (all its threads, those that ended
// included), or 0 when it is gone.
int64_t OwnCpuNanos(pid_t pid) {
  clockid_t clock;
  if (::clock_getcpuclockid(pid, &clock) != 0) return 0;
  struct timespec ts;
  if (::clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The first field of a thread's schedstat: its time on a CPU (ns); -1 when it cannot be read.
int64_t ThreadOnCpuNanos(pid_t process, pid_t thread) {
  std::ifstream schedstat(absl::StrCat("/proc/", process, "/task/", thread, "/schedstat"));
  int64_t on_cpu = 0;
  if (!(schedstat >> on_cpu)) return -1;
  return on_cpu;
}

}  // namespace

absl::Status ProcessSupervisor::WatchThread(pid_t local_tid) {
  std::ifstream children(absl::StrCat("/proc/", pid_, "/task/", pid_, "/children"));
  pid_t worker = 0;
  if (!(children >> worker)) return absl::NotFoundError("the worker's keeper has no child");
  DIR* tasks = ::opendir(absl::StrCat("/proc/", worker, "/task").c_str());
  if (tasks == nullptr) return absl::NotFoundError(absl::StrCat("no /proc/", worker, "/task"));
  pid_t found = 0;
  while (const dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    // "NSpid:\t<global>\t...\t<innermost>": the thread's ids from this namespace inwards.
    std::ifstream status(absl::StrCat("/proc/", worker, "/task/", entry->d_name, "/status"));
    std::string line;
    while (std::getline(status, line)) {
      if (!absl::StartsWith(line, "NSpid:")) continue;
      std::vector<std::string> ids =
          absl::StrSplit(line.substr(6), absl::ByAnyChar(" \t"), absl::SkipEmpty());
      int global = 0, inner = 0;
      if (ids.size() >= 1 && absl::SimpleAtoi(ids.front(), &global) &&
          absl::SimpleAtoi(ids.back(), &inner) && inner == local_tid) {
        found = global;
      }
      break;
    }
    if (found != 0) break;
  }
  ::closedir(tasks);
  if (found == 0) return absl::NotFoundError(absl::StrCat("the worker has no thread ", local_tid));
  watched_process_ = worker;
  watched_thread_ = found;
  return absl::OkStatus();
}

ProcessSupervisor::CpuSample ProcessSupervisor::SampleCpu() const {
  CpuSample sample;
  if (watched_thread_ == 0) return sample;
  sample.process_ns = OwnCpuNanos(watched_process_);
  sample.main_thread_ns =
      std::max<int64_t>(0, ThreadOnCpuNanos(watched_process_, watched_process_));
  sample.kernel_thread_ns = ThreadOnCpuNanos(watched_process_, watched_thread_);
  return sample;
}

ProcessSupervisor::ProcessSupervisor(pid_t pid, UniqueFd stdout_fd, UniqueFd stderr_fd,
                                     const SupervisorOptions& options)
    : pid_(pid),
      options_(options),
      stdout_fd_(std::move(stdout_fd)),
      stderr_fd_(std::move(stderr_fd)),
      foreign_(false),
      stdout_tail_(options.tail_bytes),
      stderr_tail_(options.tail_bytes) {
  for (int fd : {stdout_fd_.get(), stderr_fd_.get()}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  OpenWakePipe();
  watcher_ = std::thread([this] { Watch(); });
}

ProcessSupervisor::ProcessSupervisor(pid_t pid, UniqueFd stdout_fd, UniqueFd stderr_fd,
                                     UniqueFd exit_status_fd, const SupervisorOptions& options)
    : pid_(pid),
      options_(options),
      stdout_fd_(std::move(stdout_fd)),
      stderr_fd_(std::move(stderr_fd)),
      exit_status_fd_(std::move(exit_status_fd)),
      foreign_(true),
      stdout_tail_(options.tail_bytes),
      stderr_tail_(options.tail_bytes) {
  for (int fd : {stdout_fd_.get(), stderr_fd_.get(), exit_status_fd_.get()}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  OpenWakePipe();
  watcher_ = std::thread([this] { Watch(); });
}

ProcessSupervisor::~ProcessSupervisor() {
  if (!finished_ && alive()) Kill(false);
  Finish(absl::Seconds(5));
}

void ProcessSupervisor::OpenWakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {  // without it the watcher only polls slower
    wake_.read.reset(fds[0]);
    wake_.write.reset(fds[1]);
  }
}

bool ProcessSupervisor::alive() { return !ReapIfExited(false); }

void ProcessSupervisor::Kill(bool timed_out) {
  if (finished_) return;  // its pid may be another process's by now
  if (timed_out) timed_out_ = true;
  KillGroup();
}

void ProcessSupervisor::KillGroup() {
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
}

bool ProcessSupervisor::ReapIfExited(bool block) {
  if (foreign_ && block) {
    // Its parent reports it (after a SIGKILL, at once); without the lock, so that the watcher
    // keeps draining its pipes meanwhile. A parent that never reports counts as lost.
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (!ReapIfExited(false)) {
      if (absl::Now() > give_up) {
        absl::MutexLock lock(&mutex_);
        exit_status_fd_.reset();
        break;
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
  }
  absl::MutexLock lock(&mutex_);
  if (reaped_) return true;
  if (foreign_) {
    while (exit_status_bytes_.size() < 4) {
      if (!exit_status_fd_.valid()) break;
      struct pollfd p = {exit_status_fd_.get(), POLLIN, 0};
      int ready;
      do {
        ready = ::poll(&p, 1, 0);
      } while (ready < 0 && errno == EINTR);
      if (ready <= 0) return false;
      char bytes[4];
      const ssize_t n = ::read(exit_status_fd_.get(), bytes, 4 - exit_status_bytes_.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {  // its parent died without a report: the process may run on, orphaned
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        reaped_ = true;
        wait_status_ = SIGKILL;
        return true;
      }
      exit_status_bytes_.append(bytes, static_cast<size_t>(n));
    }
    if (exit_status_bytes_.size() < 4) {  // given up on above
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      reaped_ = true;
      wait_status_ = SIGKILL;
      return true;
    }
    uint32_t status = 0;
    for (int i = 0; i < 4; ++i)
      status |= static_cast<uint32_t>(static_cast<unsigned char>(exit_status_bytes_[i])) << (8 * i);
    reaped_ = true;
    wait_status_ = static_cast<int>(status);
    return true;
  }
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    reaped_ = true;
    wait_status_ = status;
    return true;
  }
  if (r < 0 && errno == ECHILD) {  // reaped elsewhere
    reaped_ = true;
    return true;
  }
  return false;
}

void ProcessSupervisor::Watch() {
  char buffer[4096];
  int rounds_after_stop = 0;
  while (true) {
    // The third: Finish's wake-up, so that it never waits out a poll interval to join.
    struct pollfd fds[3] = {{stdout_fd_.get(), POLLIN, 0},
                            {stderr_fd_.get(), POLLIN, 0},
                            {wake_.read.get(), POLLIN, 0}};
    const int ready =
        ::poll(fds, 3, static_cast<int>(absl::ToInt64Milliseconds(options_.poll_interval)));
    bool open_pipes = false;
    for (int i = 0; i < 2; ++i) {
      UniqueFd& fd = i == 0 ? stdout_fd_ : stderr_fd_;
      if (!fd.valid()) continue;
      open_pipes = true;
      if (ready <= 0 || fds[i].revents == 0) continue;
      while (true) {
        const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
        if (n > 0) {
          absl::MutexLock lock(&mutex_);
          (i == 0 ? stdout_tail_ : stderr_tail_).Append(buffer, static_cast<size_t>(n));
          continue;
        }
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          fd.reset();
        }
        break;
      }
    }
    const int64_t rss = ResidentBytes(pid_);
    if (rss > peak_rss_bytes_.load()) peak_rss_bytes_ = rss;
    if (options_.memory_limit_bytes > 0 && rss > options_.memory_limit_bytes && !out_of_memory_) {
      out_of_memory_ = true;
      Kill(false);
    }
    // After Finish: drain what is buffered, but never wait on a pipe that a straggler holds open.
    if (stop_ && (!open_pipes || ready <= 0 || ++rounds_after_stop > 20)) break;
  }
}

v1::ProcessOutcome ProcessSupervisor::Snapshot() {
  v1::ProcessOutcome outcome;
  absl::MutexLock lock(&mutex_);
  outcome.set_stdout_tail(stdout_tail_.Contents());
  outcome.set_stderr_tail(stderr_tail_.Contents());
  outcome.set_timed_out(timed_out_);
  outcome.set_out_of_memory(out_of_memory_);
  outcome.set_peak_rss_bytes(static_cast<double>(peak_rss_bytes_.load()));
  if (reaped_) {
    if (WIFEXITED(wait_status_)) outcome.set_exit_code(WEXITSTATUS(wait_status_));
    if (WIFSIGNALED(wait_status_)) {
      outcome.set_signal(WTERMSIG(wait_status_));
      const char* name = ::sigabbrev_np(WTERMSIG(wait_status_));
      outcome.set_signal_name(name != nullptr ? absl::StrCat("SIG", name)
                                              : absl::StrCat("signal ", WTERMSIG(wait_status_)));
    }
  }
  return outcome;
}

v1::ProcessOutcome ProcessSupervisor::Finish(absl::Duration timeout) {
  // Once only: after it the pid (and group) may belong to another process.
  if (finished_.exchange(true)) return Snapshot();
  const absl::Time deadline = absl::Now() + timeout;
  // Short steps: an evaluation's caller waits for this (a host exits right after its verdict).
  while (!ReapIfExited(false) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  if (!ReapIfExited(false)) {
    KillGroup();
    ReapIfExited(true);
  }
  // Stragglers of the group (children the kernel left behind) die with it.
  ::kill(-pid_, SIGKILL);
  stop_ = true;
  if (wake_.write.valid()) {
    const char byte = 1;
    (void)!::write(wake_.write.get(), &byte, 1);
  }
  if (watcher_.joinable()) watcher_.join();
  stdout_fd_.reset();
  stderr_fd_.reset();
  {
    // A foreign process's parent reaps it now (its pid may be reused from here on).
    absl::MutexLock lock(&mutex_);
    exit_status_fd_.reset();
  }
  return Snapshot();
}

}  // namespace mkb
