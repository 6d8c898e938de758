// The judge's CUDA side: comparisons on device memory (registered with compare.h), CUDA IPC
// of tensor memory between the host and the worker, and device synchronisation.
#ifndef LIBMKB_JUDGE_CUDA_DEVICE_H_
#define LIBMKB_JUDGE_CUDA_DEVICE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace mkb::cuda {

// Installs the CUDA implementation of compare.h's operations. Idempotent.
void RegisterDeviceTensorOps();

// Number of visible CUDA devices (0 when there is no driver or device).
int DeviceCount();

// Blocks until all work on `device` in this process is done (cudaDeviceSynchronize).
absl::Status SynchronizeDevice(int device);

// The IPC handle (64 bytes) of the allocation holding device pointer `ptr`, and the byte
// offset of `ptr` in it.
struct IpcExport {
  std::string handle;
  int64_t offset = 0;
};
absl::StatusOr<IpcExport> ExportIpc(uintptr_t ptr);

// Maps another process's allocation; returns its base address here. Close with CloseIpc.
absl::StatusOr<uintptr_t> OpenIpc(const std::string& handle, int device);
absl::Status CloseIpc(uintptr_t base);

// "13.0" for the driver's CUDA version.
std::string DriverCudaVersion();

}  // namespace mkb::cuda

#endif  // LIBMKB_JUDGE_CUDA_DEVICE_H_
