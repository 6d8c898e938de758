#include "libmkb/agent/detail/shell_seccomp.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace mkb::detail {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
#error "the shell's seccomp filter knows x86_64 and aarch64"
#endif

// fchmodat2 (Linux 6.6) is missing from older headers; its number is the same on both.
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

constexpr uint32_t kSetIdBits = S_ISUID | S_ISGID;

sock_filter Statement(uint16_t code, uint32_t k) { return BPF_STMT(code, k); }
sock_filter Jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) {
  return BPF_JUMP(code, k, jt, jf);
}
uint32_t Errno(int error) { return SECCOMP_RET_ERRNO | (static_cast<uint32_t>(error) & 0xffff); }

// nr refused with `error`. Expects the number in A; leaves it there.
void Refuse(std::vector<sock_filter>* p, int nr, int error) {
  p->push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1));
  p->push_back(Statement(BPF_RET | BPF_K, Errno(error)));
}

// nr refused (EPERM) when its argument `mode_arg` has a set-ID bit. Expects the number in A and
// loads it back. A mode is an int: its low 32 bits (the first word of the 64-bit argument on
// these little-endian ABIs).
void RefuseSetIdMode(std::vector<sock_filter>* p, int nr, int mode_arg) {
  p->push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 4));
  p->push_back(Statement(BPF_LD | BPF_W | BPF_ABS,
                         static_cast<uint32_t>(offsetof(seccomp_data, args) +
                                               sizeof(uint64_t) * static_cast<size_t>(mode_arg))));
  p->push_back(Jump(BPF_JMP | BPF_JSET | BPF_K, kSetIdBits, 0, 1));
  p->push_back(Statement(BPF_RET | BPF_K, Errno(EPERM)));
  p->push_back(Statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
}

}  // namespace

std::vector<sock_filter> ShellFilterProgram() {
  std::vector<sock_filter> p;
  p.push_back(Statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  p.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  p.push_back(Statement(BPF_RET | BPF_K, Errno(ENOSYS)));
  p.push_back(Statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
  p.push_back(Jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // x32: bit 30
  p.push_back(Statement(BPF_RET | BPF_K, Errno(ENOSYS)));
#endif
  Refuse(&p, __NR_fallocate, EOPNOTSUPP);
  Refuse(&p, __NR_openat2, ENOSYS);
  Refuse(&p, __NR_io_uring_setup, ENOSYS);
  Refuse(&p, __NR_io_uring_enter, ENOSYS);
  Refuse(&p, __NR_io_uring_register, ENOSYS);
  // Memory no watcher counts: a memfd written, not mapped; SysV segments filled and detached; a
  // POSIX message queue (2 GiB each under a 256 MiB cap from the first two; red team,
  // 2026-12-06).
  Refuse(&p, __NR_memfd_create, ENOSYS);
  Refuse(&p, __NR_shmget, ENOSYS);
  Refuse(&p, __NR_mq_open, ENOSYS);
#if defined(__NR_chmod)
  RefuseSetIdMode(&p, __NR_chmod, 1);
#endif
  RefuseSetIdMode(&p, __NR_fchmod, 1);
  RefuseSetIdMode(&p, __NR_fchmodat, 2);
  RefuseSetIdMode(&p, __NR_fchmodat2, 2);
#if defined(__NR_creat)
  RefuseSetIdMode(&p, __NR_creat, 1);
#endif
#if defined(__NR_open)
  // The mode is read only with O_CREAT or O_TMPFILE; libc passes 0 otherwise, so a set-ID bit
  // there is refused whatever the flags.
  RefuseSetIdMode(&p, __NR_open, 2);
#endif
  RefuseSetIdMode(&p, __NR_openat, 3);
#if defined(__NR_mknod)
  RefuseSetIdMode(&p, __NR_mknod, 1);
#endif
  RefuseSetIdMode(&p, __NR_mknodat, 2);
  p.push_back(Statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return p;
}

bool InstallShellFilter(const std::vector<sock_filter>& program) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  sock_fprog fprog = {static_cast<unsigned short>(program.size()),
                      const_cast<sock_filter*>(program.data())};
  return ::syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0;
}

}  // namespace mkb::detail
