// Clocks, temperature and throttle reasons of a GPU through NVML, loaded at run time from the
// driver (libnvidia-ml.so.1): no toolkit part is needed to build it.
#ifndef LIBMKB_JUDGE_CUDA_NVML_SAMPLER_H_
#define LIBMKB_JUDGE_CUDA_NVML_SAMPLER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace mkb::cuda {

struct GpuSample {
  int sm_clock_mhz = 0;
  int mem_clock_mhz = 0;
  int temperature_c = 0;
  uint64_t throttle_reasons = 0;  // NVML clocks-event reason bits
  bool throttled = false;         // a reason other than idle / application or display clocks
};

class NvmlSampler {
 public:
  // The NVML device of CUDA device `cuda_device` (matched by PCI bus id). UnavailableError
  // without a driver.
  static absl::StatusOr<NvmlSampler> Open(int cuda_device);
  absl::StatusOr<GpuSample> Sample() const;
  std::string driver_version() const { return driver_version_; }
  // The GPU's index on its machine (NVML's numbering, as nvidia-smi shows it, whatever
  // CUDA_VISIBLE_DEVICES says); -1 when NVML does not tell.
  int index() const { return index_; }
  std::string uuid() const { return uuid_; }  // "GPU-..."; "" when NVML does not tell

 private:
  void* device_ = nullptr;  // nvmlDevice_t, owned by NVML
  std::string driver_version_;
  int index_ = -1;
  std::string uuid_;
};

}  // namespace mkb::cuda

#endif  // LIBMKB_JUDGE_CUDA_NVML_SAMPLER_H_
