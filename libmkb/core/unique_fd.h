// The one owner of a file descriptor in libmkb: move-only, closes what it holds.
#ifndef LIBMKB_CORE_UNIQUE_FD_H_
#define LIBMKB_CORE_UNIQUE_FD_H_

#include <unistd.h>

#include <utility>

namespace mkb {

// Owns a file descriptor (or none: -1) and closes it on destruction or reset. `release()` hands
// it on without closing it.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Closes the descriptor held (if any) and holds `fd` instead.
  void reset(int fd = -1) {
    if (fd_ >= 0 && fd_ != fd) ::close(fd_);
    fd_ = fd;
  }
  // Gives up ownership: the caller closes the descriptor returned.
  [[nodiscard]] int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// Both ends of a pipe, owned.
struct UniquePipe {
  UniqueFd read;
  UniqueFd write;
};

}  // namespace mkb

#endif  // LIBMKB_CORE_UNIQUE_FD_H_
