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
      bytes_(other.bytes_) {}

L2Flusher& L2Flusher::operator=(L2Flusher&& other) noexcept {
  if (this != &other) {
    if (buffer_ != nullptr) cudaFree(buffer_);
    device_ = other.device_;
    buffer_ = std::exchange(other.buffer_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

L2Flusher::~L2Flusher() {
  if (buffer_ != nullptr) cudaFree(buffer_);
}

absl::Status L2Flusher::Flush(uintptr_t stream) const {
  static uint32_t salt = 1;
  MKB_CUDA_CALL(cudaSetDevice(device_));
  const int64_t count = bytes_ / static_cast<int64_t>(sizeof(uint4));
  auto s = reinterpret_cast<cudaStream_t>(stream);
  mkb_l2_flush<<<1024, 256, 0, s>>>(static_cast<uint4*>(buffer_), count, salt++);
  MKB_CUDA_CALL(cudaGetLastError());
  MKB_CUDA_CALL(cudaStreamSynchronize(s));
  return absl::OkStatus();
}

absl::StatusOr<double> MeasureCopyBandwidth(int device, int64_t bytes, int repeats) {
  MKB_CUDA_CALL(cudaSetDevice(device));
  void* a = nullptr;
  void* b = nullptr;
  MKB_CUDA_CALL(cudaMalloc(&a, bytes));
  if (cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaFree(a);
    return absl::ResourceExhaustedError("no room for the bandwidth measurement");
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best_ms = 0;
  absl::Status status;
  for (int i = 0; i <= repeats && status.ok(); ++i) {  // the first copy warms up
    cudaEventRecord(start);
    cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(stop);
    status = CudaStatus(cudaEventSynchronize(stop), "cudaEventSynchronize", __FILE__, __LINE__);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (i > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  if (!status.ok()) return status;
  return 2.0 * static_cast<double>(bytes) / (best_ms * 1e-3);
}

}  // namespace mkb::cuda
