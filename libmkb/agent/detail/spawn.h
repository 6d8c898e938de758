// Starting a child process with its stdout and stderr in one pipe, and running one to its end.
#ifndef LIBMKB_AGENT_DETAIL_SPAWN_H_
#define LIBMKB_AGENT_DETAIL_SPAWN_H_

#include <linux/filter.h>
#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libmkb/core/unique_fd.h"

namespace mkb::detail {

struct SpawnOptions {
  const cpu_set_t* cpus = nullptr;  // CPU affinity; nullptr: inherited
  int64_t max_file_bytes = -1;      // RLIMIT_FSIZE (0: no file data at all); -1: inherited
  bool new_session = false;         // setsid(), else a process group of its own
  std::string chdir_to;             // "": the caller's working directory
  // A seccomp program installed (with no_new_privs) before the exec; nullptr: none. A kernel
  // that refuses it fails the child (exit 126, the reason on its output).
  const std::vector<sock_filter>* seccomp = nullptr;
};

struct Spawned {
  pid_t pid = -1;
  UniqueFd output;  // the read end of the child's stdout and stderr
};

// Forks and execs `argv` (argv[0] a path) with exactly `envp`, stdin from /dev/null, stdout and
// stderr into one pipe, core dumps off, SIGKILL when this process dies, default SIGPIPE, and
// every other descriptor closed.
absl::StatusOr<Spawned> Spawn(std::vector<std::string> argv, std::vector<std::string> envp,
                              const SpawnOptions& options);

struct Finished {
  int exit_code = -1;  // -1 when it was killed by a signal
  std::string output;  // stdout and stderr, up to max_output_bytes
};

// Runs `argv` to its end and collects its output. DeadlineExceededError (the process group
// killed) when it runs past `timeout`.
absl::StatusOr<Finished> RunToEnd(std::vector<std::string> argv, std::vector<std::string> envp,
                                  absl::Duration timeout, size_t max_output_bytes = 1 << 20);

}  // namespace mkb::detail

#endif  // LIBMKB_AGENT_DETAIL_SPAWN_H_
