#include "libmkb/judge/cuda/nvml_sampler.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace mkb::cuda {
namespace {

// The NVML C API's stable ABI, as documented in the NVML reference: return codes are ints
// (0 = success), devices opaque pointers.
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;
// Reasons that are not throttling: GPU idle, application clocks setting, display clocks setting.
constexpr uint64_t kBenignReasons = 0x1 | 0x2 | 0x100;

struct NvmlApi {
  NvmlReturn (*Init)() = nullptr;
  NvmlReturn (*DeviceGetHandleByPciBusId)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*DeviceGetClockInfo)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*DeviceGetTemperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*DeviceGetClocksEventReasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*SystemGetDriverVersion)(char*, unsigned) = nullptr;
  NvmlReturn (*DeviceGetIndex)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*DeviceGetUUID)(NvmlDevice, char*, unsigned) = nullptr;
  const char* (*ErrorString)(NvmlReturn) = nullptr;  // optional: messages only
  bool ready = false;
};

// A failed NVML call as a Status naming the call, its file:line and NVML's error.
absl::Status NvmlStatus(const NvmlApi& api, NvmlReturn result, const char* call, const char* file,
                        int line) {
  if (result == 0) return absl::OkStatus();
  const char* text = api.ErrorString != nullptr ? api.ErrorString(result) : nullptr;
  return absl::UnavailableError(absl::StrCat(call, " failed at ", file, ":", line, ": ",
                                             text != nullptr ? text : "unknown error",
                                             " (NVML error ", result, ")"));
}

// Evaluates an NVML call of `api`; returns its failure from the enclosing function as a Status.
#define MKB_NVML_CALL(api, expr)                                                                \
  do {                                                                                          \
    if (::absl::Status mkb_nvml_status_ = NvmlStatus((api), (expr), #expr, __FILE__, __LINE__); \
        !mkb_nvml_status_.ok()) {                                                               \
      return mkb_nvml_status_;                                                                  \
    }                                                                                           \
  } while (false)

absl::StatusOr<const NvmlApi*> Api() {
  static NvmlApi api;
  static absl::Status status = [] {
    void* handle = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
      return absl::UnavailableError(absl::StrCat("cannot load NVML: ", ::dlerror()));
    auto resolve = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle, name));
    };
    resolve(api.Init, "nvmlInit_v2");
    resolve(api.DeviceGetHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2");
    resolve(api.DeviceGetClockInfo, "nvmlDeviceGetClockInfo");
    resolve(api.DeviceGetTemperature, "nvmlDeviceGetTemperature");
    resolve(api.DeviceGetClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (api.DeviceGetClocksEventReasons == nullptr) {
      resolve(api.DeviceGetClocksEventReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    }
    resolve(api.SystemGetDriverVersion, "nvmlSystemGetDriverVersion");
    resolve(api.DeviceGetIndex, "nvmlDeviceGetIndex");
    resolve(api.DeviceGetUUID, "nvmlDeviceGetUUID");
    resolve(api.ErrorString, "nvmlErrorString");
    if (api.Init == nullptr || api.DeviceGetHandleByPciBusId == nullptr ||
        api.DeviceGetClockInfo == nullptr) {
      return absl::UnavailableError("NVML lacks an entry point the judge needs");
    }
    MKB_NVML_CALL(api, api.Init());
    api.ready = true;
    return absl::OkStatus();
  }();
  if (!status.ok()) return status;
  return &api;
}

}  // namespace

absl::StatusOr<NvmlSampler> NvmlSampler::Open(int cuda_device) {
  auto api = Api();
  if (!api.ok()) return api.status();
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), cuda_device) != cudaSuccess) {
    cudaGetLastError();
    return absl::UnavailableError(absl::StrCat("no PCI bus id for CUDA device ", cuda_device));
  }
  NvmlSampler sampler;
  if (absl::Status found =
          NvmlStatus(**api, (*api)->DeviceGetHandleByPciBusId(bus, &sampler.device_),
                     "nvmlDeviceGetHandleByPciBusId", __FILE__, __LINE__);
      !found.ok()) {
    return absl::UnavailableError(
        absl::StrCat("NVML does not know the GPU at ", bus, ": ", found.message()));
  }
  char version[96] = {};
  if ((*api)->SystemGetDriverVersion != nullptr &&
      (*api)->SystemGetDriverVersion(version, sizeof(version)) == 0) {
    sampler.driver_version_ = version;
  }
  unsigned index = 0;
  if ((*api)->DeviceGetIndex != nullptr && (*api)->DeviceGetIndex(sampler.device_, &index) == 0) {
    sampler.index_ = static_cast<int>(index);
  }
  char uuid[96] = {};  // NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96
  if ((*api)->DeviceGetUUID != nullptr &&
      (*api)->DeviceGetUUID(sampler.device_, uuid, sizeof(uuid)) == 0) {
    sampler.uuid_ = uuid;
  }
  return sampler;
}

absl::StatusOr<GpuSample> NvmlSampler::Sample() const {
  auto api = Api();
  if (!api.ok()) return api.status();
  GpuSample sample;
  unsigned value = 0;
  if ((*api)->DeviceGetClockInfo(device_, kClockSm, &value) == 0)
    sample.sm_clock_mhz = static_cast<int>(value);
  if ((*api)->DeviceGetClockInfo(device_, kClockMem, &value) == 0)
    sample.mem_clock_mhz = static_cast<int>(value);
  if ((*api)->DeviceGetTemperature != nullptr &&
      (*api)->DeviceGetTemperature(device_, kTemperatureGpu, &value) == 0) {
    sample.temperature_c = static_cast<int>(value);
  }
  unsigned long long reasons = 0;
  if ((*api)->DeviceGetClocksEventReasons != nullptr &&
      (*api)->DeviceGetClocksEventReasons(device_, &reasons) == 0) {
    sample.throttle_reasons = reasons;
    sample.throttled = (reasons & ~kBenignReasons) != 0;
  }
  return sample;
}

}  // namespace mkb::cuda

#undef MKB_NVML_CALL
