// The agent's shell's syscall filter (docs/agent.md, "The shell"): what no command needs and a
// command could use to harm the host through the files it leaves in the workspace.
#ifndef LIBMKB_AGENT_DETAIL_SHELL_SECCOMP_H_
#define LIBMKB_AGENT_DETAIL_SHELL_SECCOMP_H_

#include <linux/filter.h>

#include <vector>

namespace mkb::detail {

// A classic-BPF seccomp program, made before the fork and installed between fork and exec
// (InstallShellFilter, async-signal-safe), so that bubblewrap and every process of the command
// run under it. Refused:
//  - a set-user-ID or set-group-ID mode bit anywhere a file's mode is given (chmod, fchmod,
//    fchmodat, fchmodat2, creat, open, openat, mknod, mknodat: EPERM), and openat2 (ENOSYS, so
//    libc falls back to openat). The workspace is a folder of the host's: where the harness runs
//    as root, the sandbox's root is the host's, and a set-user-ID copy of a shell left there
//    ran as root for any user of the host (red team, 2026-12-06);
//  - fallocate (EOPNOTSUPP: posix_fallocate writes instead), which reserves a file's blocks
//    without writing them: a command filled gigabytes of the host's disk in an instant. Written
//    bytes are bounded by the workspace's limit (ShellSandboxOptions::workspace_bytes);
//  - io_uring (ENOSYS), whose requests open, change modes and allocate without these calls;
//  - memfd_create, shmget and mq_open (ENOSYS): memory that is in no process's resident set, so
//    the memory watcher never counts it;
//  - calls of another ABI (x32, 32-bit: ENOSYS), whose numbers would bypass the table.
std::vector<sock_filter> ShellFilterProgram();

// Sets no_new_privs and installs `program` on the calling thread. Only system calls: safe
// between fork and exec. Returns false when the kernel refused it.
bool InstallShellFilter(const std::vector<sock_filter>& program);

}  // namespace mkb::detail

#endif  // LIBMKB_AGENT_DETAIL_SHELL_SECCOMP_H_
