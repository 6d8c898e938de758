// Shared memory for CPU tensors crossing between the judge host and its worker: an anonymous
// memfd mapped MAP_SHARED, passed to the other process as a file descriptor.
#ifndef LIBMKB_JUDGE_SHARED_SEGMENT_H_
#define LIBMKB_JUDGE_SHARED_SEGMENT_H_

#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "libmkb/core/unique_fd.h"

namespace mkb {

// Owns a mapping and its file descriptor. Move-only: the mapping is unmapped and the descriptor
// closed on destruction.
class SharedSegment {
 public:
  // A new zero-filled segment of `bytes` (at least 1 page), its size sealed (no process can
  // shrink or grow it).
  static absl::StatusOr<SharedSegment> Create(size_t bytes);
  // Maps a segment received from the other process; takes ownership of `fd` and closes it once
  // mapped (fd() is then -1). The size is the file's size, which must be sealed (Create's);
  // `writable` maps it read-write, else read-only.
  static absl::StatusOr<SharedSegment> Map(int fd, bool writable);

  SharedSegment(SharedSegment&& other) noexcept;
  SharedSegment& operator=(SharedSegment&& other) noexcept;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment();

  char* data() const { return static_cast<char*>(address_); }
  size_t size() const { return size_; }
  int fd() const { return fd_.get(); }

 private:
  SharedSegment(void* address, size_t size, UniqueFd fd)
      : address_(address), size_(size), fd_(std::move(fd)) {}
  void Reset();

  void* address_ = nullptr;
  size_t size_ = 0;
  UniqueFd fd_;
};

// Bytes at which the next tensor is placed: `offset` rounded up to 64.
inline int64_t AlignTensorOffset(int64_t offset) { return (offset + 63) / 64 * 64; }

}  // namespace mkb

#endif  // LIBMKB_JUDGE_SHARED_SEGMENT_H_
