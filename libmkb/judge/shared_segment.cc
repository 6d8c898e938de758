#include "libmkb/judge/shared_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace mkb {
namespace {

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<SharedSegment> SharedSegment::Create(size_t bytes) {
  const size_t size = bytes == 0 ? 1 : bytes;
  const int fd = ::memfd_create("mkb-tensors", MFD_CLOEXEC);
  if (fd < 0) return Errno("memfd_create");
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const absl::Status status = Errno("ftruncate of a shared segment");
    ::close(fd);
    return status;
  }
  void* address = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (address == MAP_FAILED) {
    const absl::Status status = Errno("mmap of a shared segment");
    ::close(fd);
    return status;
  }
  return SharedSegment(address, size, fd);
}

absl::StatusOr<SharedSegment> SharedSegment::Map(int fd, bool writable) {
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    const absl::Status status = Errno("fstat of a received segment");
    ::close(fd);
    return status;
  }
  if (info.st_size <= 0) {
    ::close(fd);
    return absl::InvalidArgumentError("received an empty segment");
  }
  const size_t size = static_cast<size_t>(info.st_size);
  void* address =
      ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (address == MAP_FAILED) {
    const absl::Status status = Errno("mmap of a received segment");
    ::close(fd);
    return status;
  }
  return SharedSegment(address, size, fd);
}

SharedSegment::SharedSegment(SharedSegment&& other) noexcept
    : address_(std::exchange(other.address_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      fd_(std::exchange(other.fd_, -1)) {}

SharedSegment& SharedSegment::operator=(SharedSegment&& other) noexcept {
  if (this != &other) {
    Reset();
    address_ = std::exchange(other.address_, nullptr);
    size_ = std::exchange(other.size_, 0);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

SharedSegment::~SharedSegment() { Reset(); }

void SharedSegment::Reset() {
  if (address_ != nullptr) ::munmap(address_, size_);
  if (fd_ >= 0) ::close(fd_);
  address_ = nullptr;
  fd_ = -1;
  size_ = 0;
}

}  // namespace mkb
