// Isolation of the worker process that runs an untrusted kernel (docs/judge.md, "Processes").
//
// The host forks a child before it initialises CUDA or draws any seed; the child calls
// EnterSandbox first thing. EnterSandbox puts the child in fresh mount, PID, network, IPC and
// UTS namespaces (inside an unprivileged user namespace when the judge is not root), builds a
// filesystem view that holds only what the worker needs, and forks again: the grandchild is the
// worker, PID 1 of its own PID namespace (so nothing it starts outlives it), and the child stays
// behind as its keeper, which waits for it and exits as it did. The worker then drops to an
// unprivileged user with no capabilities, sets no_new_privs and installs a syscall filter.
#ifndef LIBMKB_JUDGE_SANDBOX_H_
#define LIBMKB_JUDGE_SANDBOX_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mkb {

struct SandboxOptions {
  std::vector<int> keep_fds;  // descriptors that stay open (1 and 2 always stay; 0 is /dev/null)
  // RLIMIT_AS above the address space already mapped at entry (imported libraries reserve
  // gigabytes); 0 = unlimited. CUDA reserves vast address space: use on the CPU only.
  int64_t address_space_bytes = 0;
  int64_t cpu_seconds = 0;                    // RLIMIT_CPU; 0 = unlimited
  int64_t max_file_bytes = int64_t{1} << 30;  // RLIMIT_FSIZE
  bool isolate_network = true;                // a fresh network namespace: no interfaces

  // The filesystem view. When `view_root` is set (an empty directory the caller owns), the
  // worker's root becomes a fresh tmpfs holding only: `read_only_paths` and `writable_paths`
  // bound at their own paths, the basic /dev nodes plus `device_paths`, a private /tmp and
  // /dev/shm, and a /proc of its own PID namespace. `hidden_paths` are masked (an empty,
  // read-only directory or /dev/null) wherever they fall inside a bound path. Empty view_root:
  // the worker keeps the host's view (namespaces and the rest still apply).
  std::string view_root;
  std::vector<std::string> read_only_paths;
  std::vector<std::string> writable_paths;
  std::vector<std::string> hidden_paths;
  std::vector<std::string> device_paths;
  int64_t tmp_bytes = int64_t{256} << 20;  // size of the private /tmp
  // Each writable directory (the workspace) is, in the view, a tmpfs of this size holding a copy
  // of what it held at entry, not a bind of the host's directory: what the worker writes never
  // reaches the host's disk (a kernel writing file after file of RLIMIT_FSIZE filled it) and
  // goes with the worker. 0: a writable bind, as other writable paths.
  int64_t writable_bytes = int64_t{1} << 30;

  // Who the worker runs as when the judge is root (nobody by default). Not root, ever: a root
  // judge that cannot switch users fails the sandbox. A non-root judge's worker keeps its uid,
  // without capabilities, in a user namespace of its own.
  uid_t uid = 65534;
  gid_t gid = 65534;
  bool seccomp = true;  // the syscall filter of SeccompDeniedSyscalls()
};

// What EnterSandbox achieved, for the verdict's findings.
struct SandboxReport {
  bool own_process_group = false;
  bool own_pid_namespace = false;  // the worker is PID 1 of a fresh PID namespace
  bool own_mount_namespace = false;
  bool filesystem_view = false;  // the restricted view of SandboxOptions::view_root
  bool network_isolated = false;
  bool privileges_dropped = false;  // not root, no capabilities
  bool no_new_privileges = false;
  bool syscall_filter = false;
  bool dies_with_host = false;
  uid_t uid = 0;
  std::vector<std::string> notes;  // what could not be done, and why
};

// Called in the forked child. Returns in the worker only; the keeper never returns (it exits
// with the worker's exit code, or dies of the worker's signal). An error means the worker could
// not be isolated as required (no namespaces where they are needed, no way to drop root): the
// caller must not run a kernel then.
absl::StatusOr<SandboxReport> EnterSandbox(const SandboxOptions& options);

// Makes the calling (host) process non-dumpable: its /proc/<pid>/mem and ptrace are closed to
// processes of the same user without CAP_SYS_PTRACE.
absl::Status ProtectHost();

// The system calls the worker's filter refuses (EPERM; clone3 gets ENOSYS so that libc falls
// back to clone, whose namespace flags the filter can see), by name, for docs and tests.
std::vector<std::string> SeccompDeniedSyscalls();

// Worker side, after it pinned itself to one CPU: refuses sched_setaffinity to every thread of
// the process from now on (a further seccomp filter), so that kernel.py cannot widen its share
// of the CPU beyond the eager baseline's.
absl::Status SealCpuAffinity();

// The CPU judge's worker, once prepared: no new process from any of its threads (fork, vfork,
// clone without CLONE_THREAD refused by a seccomp filter, TSYNC), so that all the CPU its calls
// use is its own process's, which the host reads (red team round 10: a process cloned with
// CLONE_VM from the kernel's thread did a call's work where the host's CPU reading never looked,
// passed at 4.8-6x).
absl::Status SealProcesses();

}  // namespace mkb

#endif  // LIBMKB_JUDGE_SANDBOX_H_
