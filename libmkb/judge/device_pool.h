// The GPUs a judge may use, as slots: each evaluation holds one GPU for its whole duration, so
// no two timed evaluations ever share a device (two of them on one GPU corrupt each other's
// times). A slot is named as CUDA_VISIBLE_DEVICES names a device ("0", "1", "GPU-<uuid>"); the
// judge host of an evaluation is started with CUDA_VISIBLE_DEVICES set to its slot, so that the
// host (which times the eager baseline) and the worker it forks see that device only.
#ifndef LIBMKB_JUDGE_DEVICE_POOL_H_
#define LIBMKB_JUDGE_DEVICE_POOL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace mkb {

// The GPUs visible to a process whose environment is `environment` ("KEY=VALUE" entries):
// the entries of its CUDA_VISIBLE_DEVICES when set (split at commas; an empty value means no
// GPU, as for CUDA), else one slot per GPU the driver exposes ("0" .. "N-1", counted from the
// /dev/nvidia<N> device nodes under `dev_dir`). Empty on a machine without GPUs.
std::vector<std::string> VisibleGpus(const std::vector<std::string>& environment,
                                     const std::string& dev_dir = "/dev");

// "0,1" / "GPU-8f0e...,2" as given to --gpus: the slots, in order. InvalidArgumentError naming
// `option` for an empty entry, a repeated one, or a negative or malformed index.
absl::StatusOr<std::vector<std::string>> ParseGpuList(absl::string_view list,
                                                      absl::string_view option = "gpus");

// Thread-safe. Not movable: leases point into it.
class DevicePool {
 public:
  // Returns its slot on destruction. Move-only.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), slot_(other.slot_), waited_(other.waited_) {
      other.pool_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    int slot() const { return slot_; }                 // index into the pool's devices
    const std::string& device() const;                 // "" for the pool without GPUs
    absl::Duration waited() const { return waited_; }  // time spent queueing for it

   private:
    friend class DevicePool;
    Lease(DevicePool* pool, int slot, absl::Duration waited)
        : pool_(pool), slot_(slot), waited_(waited) {}
    DevicePool* pool_;
    int slot_;
    absl::Duration waited_;
  };

  // `devices` empty: one anonymous slot ("": the environment's CUDA_VISIBLE_DEVICES is left as
  // it is), so that evaluations still run one at a time.
  explicit DevicePool(std::vector<std::string> devices);
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  // Blocks until a slot is free and takes it: the free slot used least recently, so that work
  // spreads over every GPU.
  Lease Acquire();

  // The slots' device names; one "" for the anonymous slot.
  const std::vector<std::string>& devices() const { return devices_; }
  int size() const { return static_cast<int>(devices_.size()); }

 private:
  void Release(int slot);

  const std::vector<std::string> devices_;
  absl::Mutex mutex_;
  std::vector<int> free_ ABSL_GUARDED_BY(mutex_);  // free slots, least recently used first
};

}  // namespace mkb

#endif  // LIBMKB_JUDGE_DEVICE_POOL_H_
