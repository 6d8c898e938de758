// The worker's syscall filter (docs/judge.md, "Processes"): a classic-BPF seccomp program that
// refuses what a kernel under test could use to reach other processes or leave its sandbox.
#ifndef LIBMKB_JUDGE_DETAIL_SECCOMP_FILTER_H_
#define LIBMKB_JUDGE_DETAIL_SECCOMP_FILTER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace mkb::detail {

// Installs the filter on the calling thread (and threads it starts later). Requires
// no_new_privs or CAP_SYS_ADMIN. Refused: ptrace, process_vm_readv/writev, namespace creation
// and entry (unshare, setns, clone with CLONE_NEW* flags; clone3 answers ENOSYS so that libc
// falls back to clone), mounts and root changes, BPF, perf events, kernel keyrings, io_uring,
// userfaultfd, module loading, kexec, open_by_handle_at, personality; calls of another ABI
// (x32, 32-bit) kill the process.
absl::Status InstallWorkerSeccompFilter();

// Refuses sched_setaffinity (EPERM) to every thread of the calling process, now and later
// (seccomp's TSYNC; sets no_new_privs): the CPU judge's worker, once pinned to one CPU, stays
// there whatever kernel.py calls (a red team widened it through psutil's C extension, which
// raises no audit event).
absl::Status SealCpuAffinity();
// Refuses new processes to every thread of this process (fork, vfork, clone without
// CLONE_THREAD: EPERM); threads are still made.
absl::Status SealProcesses();

// The refused system calls by name.
std::vector<std::string> WorkerSeccompDeniedNames();

}  // namespace mkb::detail

#endif  // LIBMKB_JUDGE_DETAIL_SECCOMP_FILTER_H_
