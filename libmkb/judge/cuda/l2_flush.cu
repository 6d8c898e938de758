#include <cuda_runtime_api.h>

#include <utility>

#include "libmkb/judge/cuda/cuda_call.h"
#include "libmkb/judge/cuda/l2_flush.h"

namespace mkb::cuda {
namespace {

__global__ void mkb_l2_flush(uint4* buffer, int64_t count, uint32_t salt) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    buffer[i] = make_uint4(salt, salt ^ 0x9e3779b9u, static_cast<uint32_t>(i), salt + 1);
  }
}

// A device allocation freed when it goes out of scope.
struct DeviceMemory {
  void* pointer = nullptr;
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() {
    if (pointer != nullptr) cudaFree(pointer);
  }
};

// An event destroyed when it goes out of scope.
struct Event {
  cudaEvent_t event = nullptr;
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (event != nullptr) cudaEventDestroy(event);
  }
};

}  // namespace

absl::StatusOr<L2Flusher> L2Flusher::Create(int device) {
  MKB_CUDA_CALL(cudaSetDevice(device));
  int l2 = 0;
  MKB_CUDA_CALL(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  const int64_t bytes = std::max<int64_t>(int64_t{2} * l2, 8 << 20);
  void* buffer = nullptr;
  MKB_CUDA_CALL(cudaMalloc(&buffer, bytes));
  return L2Flusher(device, buffer, bytes);
}

L2Flusher::L2Flusher(L2Flusher&& other) noexcept
    : device_(other.device_),
      buffer_(std::exchange(other.buffer_, nullptr)),
      bytes_(other.bytes_),
      salt_(other.salt_.load()) {}

L2Flusher& L2Flusher::operator=(L2Flusher&& other) noexcept {
  if (this != &other) {
    if (buffer_ != nullptr) cudaFree(buffer_);
    device_ = other.device_;
    buffer_ = std::exchange(other.buffer_, nullptr);
    bytes_ = other.bytes_;
    salt_ = other.salt_.load();
  }
  return *this;
}

L2Flusher::~L2Flusher() {
  if (buffer_ != nullptr) cudaFree(buffer_);
}

absl::Status L2Flusher::Flush(uintptr_t stream) const {
  const uint32_t salt = salt_.fetch_add(1);
  MKB_CUDA_CALL(cudaSetDevice(device_));
  const int64_t count = bytes_ / static_cast<int64_t>(sizeof(uint4));
  auto s = reinterpret_cast<cudaStream_t>(stream);
  mkb_l2_flush<<<1024, 256, 0, s>>>(static_cast<uint4*>(buffer_), count, salt);
  MKB_CUDA_CALL(cudaGetLastError());
  MKB_CUDA_CALL(cudaStreamSynchronize(s));
  return absl::OkStatus();
}

absl::StatusOr<double> MeasureCopyBandwidth(int device, int64_t bytes, int repeats) {
  MKB_CUDA_CALL(cudaSetDevice(device));
  DeviceMemory a, b;
  MKB_CUDA_CALL(cudaMalloc(&a.pointer, bytes));
  if (cudaMalloc(&b.pointer, bytes) != cudaSuccess) {
    cudaGetLastError();  // the failed allocation is this measurement's, not the next call's
    return absl::ResourceExhaustedError("no room for the bandwidth measurement");
  }
  Event start, stop;
  MKB_CUDA_CALL(cudaEventCreate(&start.event));
  MKB_CUDA_CALL(cudaEventCreate(&stop.event));
  float best_ms = 0;
  for (int i = 0; i <= repeats; ++i) {  // the first copy warms up
    MKB_CUDA_CALL(cudaEventRecord(start.event));
    MKB_CUDA_CALL(cudaMemcpyAsync(b.pointer, a.pointer, bytes, cudaMemcpyDeviceToDevice));
    MKB_CUDA_CALL(cudaEventRecord(stop.event));
    MKB_CUDA_CALL(cudaEventSynchronize(stop.event));
    float ms = 0;
    MKB_CUDA_CALL(cudaEventElapsedTime(&ms, start.event, stop.event));
    if (i > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
  }
  if (best_ms <= 0) return absl::InternalError("the bandwidth measurement timed no copy");
  return 2.0 * static_cast<double>(bytes) / (best_ms * 1e-3);
}

}  // namespace mkb::cuda
