#include "libmkb/judge/detail/seccomp_filter.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace mkb::detail {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
#error "the worker's seccomp filter knows x86_64 and aarch64"
#endif

struct Denied {
  int nr;
  const char* name;
  int error;  // errno returned
};

#define MKB_DENY(call) {__NR_##call, #call, EPERM}

// Every entry exists on both architectures unless guarded.
constexpr Denied kDenied[] = {
    MKB_DENY(ptrace),
    MKB_DENY(process_vm_readv),
    MKB_DENY(process_vm_writev),
    MKB_DENY(unshare),
    MKB_DENY(setns),
    MKB_DENY(mount),
    MKB_DENY(umount2),
    MKB_DENY(pivot_root),
    MKB_DENY(chroot),
    MKB_DENY(move_mount),
    MKB_DENY(open_tree),
    MKB_DENY(fsopen),
    MKB_DENY(fsconfig),
    MKB_DENY(fsmount),
    MKB_DENY(fspick),
    MKB_DENY(mount_setattr),
    MKB_DENY(bpf),
    MKB_DENY(perf_event_open),
    MKB_DENY(keyctl),
    MKB_DENY(add_key),
    MKB_DENY(request_key),
    MKB_DENY(userfaultfd),
    MKB_DENY(io_uring_setup),
    MKB_DENY(io_uring_enter),
    MKB_DENY(io_uring_register),
    MKB_DENY(init_module),
    MKB_DENY(finit_module),
    MKB_DENY(delete_module),
    MKB_DENY(kexec_load),
    MKB_DENY(kexec_file_load),
    MKB_DENY(open_by_handle_at),
    MKB_DENY(name_to_handle_at),
    MKB_DENY(personality),
    MKB_DENY(pidfd_getfd),
    MKB_DENY(process_madvise),
    MKB_DENY(reboot),
    MKB_DENY(swapon),
    MKB_DENY(swapoff),
    MKB_DENY(syslog),
    MKB_DENY(acct),
    MKB_DENY(quotactl),
    {__NR_clone3, "clone3", ENOSYS},
};
#undef MKB_DENY

// clone's namespace flags (its first argument on both architectures).
constexpr uint32_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
                                     CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;

sock_filter Statement(uint16_t code, uint32_t k) { return BPF_STMT(code, k); }
sock_filter Jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) {
  return BPF_JUMP(code, k, jt, jf);
}

}  // namespace

absl::Status InstallWorkerSeccompFilter() {
  std::vector<sock_filter> program;
  // Only the native ABI: another architecture's numbers would bypass the table.
  program.push_back(Statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  program.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  program.push_back(Statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
  // x32 calls carry bit 30.
  program.push_back(Jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
  for (const Denied& d : kDenied) {
    program.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(d.nr), 0, 1));
    program.push_back(
        Statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<uint32_t>(d.error) & 0xffff)));
  }
  // clone(flags, ...): refuse namespace flags (the low 32 bits of the first argument).
  program.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4));
  program.push_back(Statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));
  program.push_back(Jump(BPF_JMP | BPF_JSET | BPF_K, kNamespaceFlags, 0, 1));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));

  sock_fprog fprog = {static_cast<unsigned short>(program.size()), program.data()};
  // SECCOMP_FILTER_FLAG_SPEC_ALLOW: on kernels whose speculation mitigations default to
  // "seccomp" (spec_store_bypass_disable=seccomp, the default before Linux 5.16, and
  // spectre_v2_user=seccomp), a filter installed without it also forces Speculative Store
  // Bypass Disable (and STIBP) on the worker, which slows every host-bound call the kernel makes
  // (the interpreter, torch's dispatch) against the published method's plain process. Those
  // mitigations protect the worker from code in its own address space or on its SMT sibling;
  // the worker holds nothing the verdict depends on, so they protect nothing of the judge's.
  // Kernels before 4.17 do not know the flag (EINVAL): the filter is installed without it.
  long installed =
      ::syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &fprog);
  if (installed != 0 && errno == EINVAL) {
    installed = ::syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog);
  }
  if (installed != 0 && errno == ENOSYS) {  // no seccomp(2): the prctl form
    installed = ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0);
  }
  if (installed != 0) {
    return absl::InternalError(
        absl::StrCat("installing the syscall filter: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

namespace {

// Installs `program` (after its first statement, which loads the syscall number) on every thread
// of the process at once (TSYNC: a BLAS or OpenMP pool already started included); threads
// started later inherit it. SPEC_ALLOW as for the worker's filter. `what` names it in errors.
absl::Status InstallOnEveryThread(std::vector<sock_filter> program, const char* what) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return absl::InternalError(absl::StrCat("no_new_privs: ", std::strerror(errno)));
  }
  sock_fprog fprog = {static_cast<unsigned short>(program.size()), program.data()};
  long installed = ::syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
                             SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_SPEC_ALLOW, &fprog);
  if (installed != 0 && errno == EINVAL) {
    installed = ::syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog);
  }
  if (installed != 0) {
    return absl::InternalError(
        absl::StrCat(what, ": ",
                     installed > 0 ? absl::StrCat("thread ", installed, " cannot take the filter")
                                   : std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SealCpuAffinity() {
  std::vector<sock_filter> program;
  program.push_back(Statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  program.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_setaffinity, 0, 1));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return InstallOnEveryThread(std::move(program), "sealing the CPU affinity");
}

absl::Status SealProcesses() {
  std::vector<sock_filter> program;
  program.push_back(Statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__NR_fork)
  program.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_fork, 0, 1));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
#endif
#if defined(__NR_vfork)
  program.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_vfork, 0, 1));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
#endif
  // clone(flags, ...) without CLONE_THREAD makes a process (CLONE_VM or not): refused. A thread
  // (CLONE_THREAD) is allowed; clone3 already answers ENOSYS (the worker's filter), so glibc
  // makes its threads with clone.
  program.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3));
  program.push_back(Statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));
  program.push_back(Jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
  program.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return InstallOnEveryThread(std::move(program), "sealing process creation");
}

std::vector<std::string> WorkerSeccompDeniedNames() {
  std::vector<std::string> names;
  for (const Denied& d : kDenied) names.emplace_back(d.name);
  names.emplace_back("clone (with CLONE_NEW* flags)");
  return names;
}

}  // namespace mkb::detail
