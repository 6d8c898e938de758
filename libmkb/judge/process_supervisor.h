// Watch over a child process (the judge host, or the worker that runs a kernel): keeps the
// tails of its stdout and stderr, enforces its memory limit, kills its whole process group on
// demand, and reports how it ended.
#ifndef LIBMKB_JUDGE_PROCESS_SUPERVISOR_H_
#define LIBMKB_JUDGE_PROCESS_SUPERVISOR_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libmkb/core/unique_fd.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

// Keeps the last `capacity` bytes written to it (fewer by the rest of a UTF-8 character that a
// cut at `capacity` would split: the tail starts where a character does).
class TailBuffer {
 public:
  explicit TailBuffer(size_t capacity) : capacity_(capacity) {}
  void Append(const char* data, size_t size);
  // The tail as valid UTF-8 (invalid bytes replaced by U+FFFD, core/utf8.h: it goes into proto
  // string fields), prefixed with "[... N bytes cut ...]" when bytes were dropped.
  std::string Contents() const;

 private:
  size_t capacity_;
  std::string buffer_;
  uint64_t dropped_ = 0;
};

struct SupervisorOptions {
  int64_t memory_limit_bytes = 0;  // resident memory of the worker; 0 = unlimited
  size_t tail_bytes = 8192;
  absl::Duration poll_interval = absl::Milliseconds(50);
};

// Watches `pid` (a child of this process and the leader of its own process group). Takes
// ownership of the read ends of the child's stdout / stderr pipes. Not movable: its thread
// points into it.
class ProcessSupervisor {
 public:
  ProcessSupervisor(pid_t pid, UniqueFd stdout_fd, UniqueFd stderr_fd,
                    const SupervisorOptions& options);
  // Watches `pid`, which is not a child of this process but of one that reports for it (the
  // host template, judge/template.py): its wait status arrives as 4 bytes (little-endian,
  // waitpid's encoding) on `exit_status_fd`, and its parent keeps it a zombie until this closes
  // that descriptor (at the end of Finish), so that signalling its pid or group never reaches a
  // reused one. End of file without a status (its parent died) reads as SIGKILL, after its
  // group is killed.
  ProcessSupervisor(pid_t pid, UniqueFd stdout_fd, UniqueFd stderr_fd, UniqueFd exit_status_fd,
                    const SupervisorOptions& options);
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;
  ~ProcessSupervisor();  // kills the group if it still runs, and reaps it

  pid_t pid() const { return pid_; }
  bool alive();
  // SIGKILL to the worker's process group. `timed_out` marks the outcome as a timeout.
  void Kill(bool timed_out);
  // Waits up to `timeout` for the worker to exit (killing it after that), reaps it, and
  // returns the outcome with the output tails.
  v1::ProcessOutcome Finish(absl::Duration timeout);
  // The outcome so far (tails; exit details once it has exited).
  v1::ProcessOutcome Snapshot();
  int64_t peak_rss_bytes() const { return peak_rss_bytes_.load(); }
  // The worker's CPU time, read from the kernel's accounting around each of its calls: its
  // whole process (every thread it ever had, those that ended included), its main thread, and
  // the kernel's thread. WatchThread finds the worker (the keeper's child) and, by its NSpid,
  // its thread whose id in the worker's PID namespace is `local_tid` (the worker says which in
  // prepare, before kernel.py exists).
  struct CpuSample {
    int64_t process_ns = 0;
    int64_t main_thread_ns = 0;
    int64_t kernel_thread_ns = 0;  // -1 once that thread is gone (it lives as long as the worker)
  };
  absl::Status WatchThread(pid_t local_tid);
  CpuSample SampleCpu() const;  // zeros before WatchThread

 private:
  void Watch();
  bool ReapIfExited(bool block);
  void KillGroup();
  void OpenWakePipe();

  const pid_t pid_;
  const SupervisorOptions options_;
  // Read by the watcher thread, which closes each at its end of file; Finish closes what is
  // left after joining it.
  UniqueFd stdout_fd_;
  UniqueFd stderr_fd_;
  // Only for a process that is not our child (see the constructor); guarded by mutex_ with the
  // bytes of its status read so far.
  UniqueFd exit_status_fd_ ABSL_GUARDED_BY(mutex_);
  std::string exit_status_bytes_ ABSL_GUARDED_BY(mutex_);
  const bool foreign_;
  UniquePipe wake_;  // Finish writes a byte: the watcher's poll returns at once
  std::atomic<bool> finished_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> timed_out_{false};
  std::atomic<bool> out_of_memory_{false};
  std::atomic<int64_t> peak_rss_bytes_{0};
  pid_t watched_process_ = 0;  // WatchThread's: the worker and its thread, global ids
  pid_t watched_thread_ = 0;
  absl::Mutex mutex_;
  TailBuffer stdout_tail_ ABSL_GUARDED_BY(mutex_);
  TailBuffer stderr_tail_ ABSL_GUARDED_BY(mutex_);
  bool reaped_ ABSL_GUARDED_BY(mutex_) = false;
  int wait_status_ ABSL_GUARDED_BY(mutex_) = 0;
  std::thread watcher_;
};

// Resident set size of a process and every process below it, in bytes (0 when it is gone): the
// supervised child is the worker's keeper, the worker runs below it.
int64_t ResidentBytes(pid_t pid);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_PROCESS_SUPERVISOR_H_
