// Evicting the L2 cache before a timed sample, and the copy bandwidth of the device (the
// physical floor's denominator).
#ifndef LIBMKB_JUDGE_CUDA_L2_FLUSH_H_
#define LIBMKB_JUDGE_CUDA_L2_FLUSH_H_

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"

namespace mkb::cuda {

// Owns a device buffer twice the size of the L2 cache. Move-only: it frees the buffer.
class L2Flusher {
 public:
  static absl::StatusOr<L2Flusher> Create(int device);
  L2Flusher(L2Flusher&& other) noexcept;
  L2Flusher& operator=(L2Flusher&& other) noexcept;
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  ~L2Flusher();

  // Writes the whole buffer with a kernel (mkb_l2_flush) on `stream` and waits for it.
  absl::Status Flush(uintptr_t stream) const;
  int64_t bytes() const { return bytes_; }

 private:
  L2Flusher(int device, void* buffer, int64_t bytes)
      : device_(device), buffer_(buffer), bytes_(bytes) {}
  int device_ = 0;
  void* buffer_ = nullptr;
  int64_t bytes_ = 0;
  // What the next flush writes (it differs on every flush, so no write is a no-op). Logically
  // const: a flush changes no observable state of the flusher.
  mutable std::atomic<uint32_t> salt_{1};
};

// Device-to-device copy bandwidth in bytes per second (bytes read plus bytes written), the best
// of `repeats` copies of `bytes`.
absl::StatusOr<double> MeasureCopyBandwidth(int device, int64_t bytes = int64_t{1} << 30,
                                            int repeats = 5);

}  // namespace mkb::cuda

#endif  // LIBMKB_JUDGE_CUDA_L2_FLUSH_H_
