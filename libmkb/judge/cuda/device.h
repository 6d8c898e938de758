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
// The bytes of the allocation holding device pointer `ptr` from `ptr` to its end (an IPC
// mapping's too): how far a handle's offset and size may reach, whatever its sender claimed.
absl::StatusOr<int64_t> BytesFrom(uintptr_t ptr);
absl::Status CloseIpc(uintptr_t base);

// Device memory in an allocation of its own (cudaMalloc, outside any caching allocator), so
// that its IPC handle maps nothing but this buffer into another process: what the host hands
// the worker. Move-only; frees the memory on destruction.
class DeviceBuffer {
 public:
  static absl::StatusOr<DeviceBuffer> Allocate(int64_t bytes, int device);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  uintptr_t ptr() const { return reinterpret_cast<uintptr_t>(ptr_); }
  int64_t bytes() const { return bytes_; }
  int device() const { return device_; }
  // The 64-byte cudaIpcMemHandle_t of the buffer (its offset in the allocation is 0).
  absl::StatusOr<std::string> IpcHandle() const;

 private:
  DeviceBuffer(void* ptr, int64_t bytes, int device) : ptr_(ptr), bytes_(bytes), device_(device) {}
  void Free();

  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
  int device_ = 0;
};

// The published method's clock, held by the judge's own code: synchronise the device, record
// a start event, the call, synchronise, record an end event, synchronise; the events' elapsed
// time. The worker times kernel.py's calls with it rather than with torch.cuda.Event, whose
// methods are Python attributes that code in the same interpreter can replace. Events are on
// the legacy default stream, where torch's current stream is unless a caller changed it; the
// device-wide synchronisations make the window cover work on every stream. Move-only.
class CallClock {
 public:
  static absl::StatusOr<CallClock> Create(int device);
  CallClock(CallClock&& other) noexcept;
  CallClock& operator=(CallClock&& other) noexcept;
  CallClock(const CallClock&) = delete;
  CallClock& operator=(const CallClock&) = delete;
  ~CallClock();

  // Synchronises the device and records the start event.
  absl::Status Start();
  // Synchronises, records the end event, synchronises; milliseconds since Start's event.
  absl::StatusOr<double> Stop();

 private:
  CallClock(int device, void* start, void* end) : device_(device), start_(start), end_(end) {}
  void Destroy();

  int device_ = 0;
  void* start_ = nullptr;  // cudaEvent_t
  void* end_ = nullptr;
};

// "13.0" for the driver's CUDA version.
std::string DriverCudaVersion();

}  // namespace mkb::cuda

#endif  // LIBMKB_JUDGE_CUDA_DEVICE_H_
