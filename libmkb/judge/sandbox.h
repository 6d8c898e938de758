// Isolation of the worker process that runs an untrusted kernel (docs/judge.md).
//
// The host forks the worker before it initialises CUDA or draws any seed; the child calls
// EnterSandbox first thing. The host calls ProtectHost so that a worker running as the same
// user cannot read the host's memory through /proc or ptrace.
#ifndef LIBMKB_JUDGE_SANDBOX_H_
#define LIBMKB_JUDGE_SANDBOX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mkb {

struct SandboxOptions {
  std::vector<int> keep_fds;  // descriptors that stay open (0, 1, 2 always stay)
  // RLIMIT_AS above the address space already mapped at entry (imported libraries reserve
  // gigabytes); 0 = unlimited. CUDA reserves vast address space: use on the CPU only.
  int64_t address_space_bytes = 0;
  int64_t cpu_seconds = 0;                    // RLIMIT_CPU; 0 = unlimited
  int64_t max_processes = 0;                  // RLIMIT_NPROC; 0 = unchanged (not enforced for root)
  int64_t max_file_bytes = int64_t{1} << 30;  // RLIMIT_FSIZE
  bool isolate_network = true;   // a fresh network namespace: no interfaces, no network
  bool drop_privileges = false;  // when root: become nobody (65534)
};

// What EnterSandbox achieved, for the verdict's findings.
struct SandboxReport {
  bool own_process_group = false;
  bool network_isolated = false;
  bool privileges_dropped = false;
  bool no_new_privileges = false;
  bool dies_with_host = false;
  std::vector<std::string> notes;  // what could not be done, and why
};

// Called in the forked worker. Puts the process in its own session and process group, asks
// for SIGKILL when the host dies, applies the limits, closes every other descriptor, enters a
// new network namespace (root, or an unprivileged user namespace) and sets no_new_privs.
// Failures of the optional steps are reported, not fatal.
absl::StatusOr<SandboxReport> EnterSandbox(const SandboxOptions& options);

// Makes the calling (host) process non-dumpable: its /proc/<pid>/mem and ptrace are closed to
// processes of the same user without CAP_SYS_PTRACE.
absl::Status ProtectHost();

}  // namespace mkb

#endif  // LIBMKB_JUDGE_SANDBOX_H_
