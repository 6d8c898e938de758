// A move-only owner of a file descriptor.
#ifndef LIBMKB_AGENT_DETAIL_FD_H_
#define LIBMKB_AGENT_DETAIL_FD_H_

#include <unistd.h>

namespace mkb::detail {

// Owns a file descriptor: closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = other.fd_;
      other.fd_ = -1;
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace mkb::detail

#endif  // LIBMKB_AGENT_DETAIL_FD_H_
