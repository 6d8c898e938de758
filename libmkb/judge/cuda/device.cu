#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <cub/block/block_reduce.cuh>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "libmkb/judge/compare.h"
#include "libmkb/judge/cuda/cuda_call.h"
#include "libmkb/judge/cuda/device.h"
#include "libmkb/model/names.h"

namespace mkb::cuda {
namespace {

constexpr int kMaxDims = 8;
constexpr int kThreads = 256;

// Layout of one tensor as the kernels index it (strides in elements).
struct Layout {
  const unsigned char* data;
  int dtype;  // v1::DType
  int element_bytes;
  int ndim;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];
};

// Accumulators. Errors are non-negative doubles, whose bit patterns order like their values, so
// that atomicMax on the bits is a max on the values.
struct Results {
  unsigned long long max_abs_anchor;
  unsigned long long reference_error;
  unsigned long long max_error;
  unsigned long long nan_count;
  unsigned long long count_over;
  unsigned long long worst_index;
  unsigned long long first_nan;
  unsigned long long differs;
};

__device__ __forceinline__ int64_t OffsetOf(const Layout& t, int64_t flat) {
  int64_t offset = 0;
  for (int d = t.ndim - 1; d >= 0; --d) {
    const int64_t size = t.shape[d];
    offset += (flat % size) * t.strides[d];
    flat /= size;
  }
  return offset * t.element_bytes;
}

__device__ double DecodeE4M3(unsigned char b) {
  const int sign = b >> 7, exponent = (b >> 3) & 0xf, mantissa = b & 0x7;
  double v;
  if (exponent == 0xf && mantissa == 0x7) return nan("");
  if (exponent == 0) {
    v = ldexp(static_cast<double>(mantissa), -9);
  } else {
    v = ldexp(static_cast<double>(8 + mantissa), exponent - 10);
  }
  return sign ? -v : v;
}

__device__ double DecodeHalfBits(unsigned short h) {
  return static_cast<double>(__half2float(__ushort_as_half(h)));
}

__device__ double Load(const Layout& t, int64_t flat) {
  const unsigned char* p = t.data + OffsetOf(t, flat);
  switch (t.dtype) {
    case v1::FLOAT64:
      return *reinterpret_cast<const double*>(p);
    case v1::FLOAT32:
      return *reinterpret_cast<const float*>(p);
    case v1::FLOAT16:
      return DecodeHalfBits(*reinterpret_cast<const unsigned short*>(p));
    case v1::BFLOAT16:
      return static_cast<double>(__uint_as_float(
          static_cast<unsigned int>(*reinterpret_cast<const unsigned short*>(p)) << 16));
    case v1::FLOAT8_E4M3FN:
      return DecodeE4M3(*p);
    case v1::FLOAT8_E5M2:
      return DecodeHalfBits(static_cast<unsigned short>(*p) << 8);
    case v1::INT64:
      return static_cast<double>(*reinterpret_cast<const long long*>(p));
    case v1::INT32:
      return *reinterpret_cast<const int*>(p);
    case v1::INT16:
      return *reinterpret_cast<const short*>(p);
    case v1::INT8:
      return *reinterpret_cast<const signed char*>(p);
    case v1::UINT8:
      return *p;
    case v1::BOOL:
      return *p != 0 ? 1.0 : 0.0;
    default:
      return nan("");
  }
}

__device__ __forceinline__ double ErrorBetween(double x, double y) {
  if (isinf(x) || isinf(y)) return x == y ? 0.0 : INFINITY;
  return fabs(x - y);
}

__device__ __forceinline__ unsigned long long Bits(double v) {
  return static_cast<unsigned long long>(__double_as_longlong(v));
}

struct MaxOp {
  __device__ double operator()(double a, double b) const { return a > b ? a : b; }
};

// Pass 1 of the anchor rule: max |anchor|, max |expected - anchor|, max |out - anchor|, NaNs.
__global__ void AnchorStats(Layout out, Layout expected, Layout anchor, int64_t n, Results* r) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  double abs_anchor = 0, reference_error = 0, max_error = 0;
  unsigned long long nans = 0, first_nan = ~0ull;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double o = Load(out, i), e = Load(expected, i), a = Load(anchor, i);
    if (isfinite(a)) abs_anchor = fmax(abs_anchor, fabs(a));
    const double re = ErrorBetween(e, a);
    if (!isnan(re)) reference_error = fmax(reference_error, re);
    if (isnan(o)) {
      ++nans;
      first_nan = min(first_nan, static_cast<unsigned long long>(i));
      continue;
    }
    const double err = ErrorBetween(o, a);
    max_error = fmax(max_error, isnan(err) ? INFINITY : err);
  }
  const double block_anchor = Reduce(storage).Reduce(abs_anchor, MaxOp());
  __syncthreads();
  const double block_reference = Reduce(storage).Reduce(reference_error, MaxOp());
  __syncthreads();
  const double block_error = Reduce(storage).Reduce(max_error, MaxOp());
  if (threadIdx.x == 0) {
    atomicMax(&r->max_abs_anchor, Bits(block_anchor));
    atomicMax(&r->reference_error, Bits(block_reference));
    atomicMax(&r->max_error, Bits(block_error));
  }
  if (nans > 0) {
    atomicAdd(&r->nan_count, nans);
    atomicMin(&r->first_nan, first_nan);
  }
}

// Pass 2: elements over the allowance, and the first index of the largest error.
__global__ void AnchorCount(Layout out, Layout anchor, int64_t n, double allowance,
                            double max_error, Results* r) {
  unsigned long long over = 0, worst = ~0ull;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double o = Load(out, i), a = Load(anchor, i);
    const double err = ErrorBetween(o, a);
    if (isnan(o) || isnan(err) || err > allowance) ++over;
    const double comparable = isnan(err) ? INFINITY : err;
    if (!isnan(o) && comparable == max_error)
      worst = min(worst, static_cast<unsigned long long>(i));
  }
  if (over > 0) atomicAdd(&r->count_over, over);
  if (worst != ~0ull) atomicMin(&r->worst_index, worst);
}

// Exact comparison: bytes for integers and bools, values for floats (NaN equal to NaN).
__global__ void ExactStats(Layout out, Layout expected, int64_t n, bool floating, Results* r) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  double max_error = 0;
  unsigned long long differ = 0, nans = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    bool equal;
    const double o = Load(out, i), e = Load(expected, i);
    if (floating) {
      equal = o == e || (isnan(o) && isnan(e));
      if (isnan(o)) ++nans;
    } else {
      const unsigned char* po = out.data + OffsetOf(out, i);
      const unsigned char* pe = expected.data + OffsetOf(expected, i);
      equal = true;
      for (int b = 0; b < out.element_bytes; ++b) equal &= po[b] == pe[b];
    }
    if (!equal) {
      ++differ;
      max_error = fmax(max_error, (isnan(o) || isnan(e)) ? INFINITY : fabs(o - e));
    }
  }
  const double block_error = Reduce(storage).Reduce(max_error, MaxOp());
  if (threadIdx.x == 0) atomicMax(&r->max_error, Bits(block_error));
  if (differ > 0) atomicAdd(&r->count_over, differ);
  if (nans > 0) atomicAdd(&r->nan_count, nans);
}

__global__ void ExactWorst(Layout out, Layout expected, int64_t n, bool floating, double max_error,
                           Results* r) {
  unsigned long long worst = ~0ull;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double o = Load(out, i), e = Load(expected, i);
    bool equal;
    if (floating) {
      equal = o == e || (isnan(o) && isnan(e));
    } else {
      const unsigned char* po = out.data + OffsetOf(out, i);
      const unsigned char* pe = expected.data + OffsetOf(expected, i);
      equal = true;
      for (int b = 0; b < out.element_bytes; ++b) equal &= po[b] == pe[b];
    }
    if (equal) continue;
    const double err = (isnan(o) || isnan(e)) ? INFINITY : fabs(o - e);
    if (err == max_error) worst = min(worst, static_cast<unsigned long long>(i));
  }
  if (worst != ~0ull) atomicMin(&r->worst_index, worst);
}

__global__ void SameBytes(Layout a, Layout b, int64_t n, Results* r) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const unsigned char* pa = a.data + OffsetOf(a, i);
    const unsigned char* pb = b.data + OffsetOf(b, i);
    for (int k = 0; k < a.element_bytes; ++k) {
      if (pa[k] != pb[k]) {
        r->differs = 1;
        return;
      }
    }
  }
}

absl::StatusOr<Layout> LayoutOf(const TensorRef& t) {
  if (t.shape.size() > kMaxDims) {
    return absl::UnimplementedError(absl::StrCat("device comparison supports up to ", kMaxDims,
                                                 " dimensions, not ", t.shape.size()));
  }
  Layout layout{};
  layout.data = static_cast<const unsigned char*>(t.data);
  layout.dtype = t.dtype;
  layout.element_bytes = ElementBytes(t.dtype);
  layout.ndim = static_cast<int>(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d) {
    layout.shape[d] = t.shape[d];
    layout.strides[d] = t.strides[d];
  }
  return layout;
}

double FromBits(unsigned long long bits) {
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

int Blocks(int64_t n) {
  return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 4096));
}

// Device memory for one Results, freed on destruction. Not copyable: it owns the allocation.
class ResultsBuffer {
 public:
  ResultsBuffer() = default;
  ResultsBuffer(const ResultsBuffer&) = delete;
  ResultsBuffer& operator=(const ResultsBuffer&) = delete;
  ~ResultsBuffer() {
    if (device_ != nullptr) cudaFree(device_);
  }
  absl::Status Init(int device) {
    MKB_CUDA_CALL(cudaSetDevice(device));
    MKB_CUDA_CALL(cudaMalloc(&device_, sizeof(Results)));
    Results initial{};
    initial.worst_index = ~0ull;
    initial.first_nan = ~0ull;
    MKB_CUDA_CALL(cudaMemcpy(device_, &initial, sizeof(Results), cudaMemcpyHostToDevice));
    return absl::OkStatus();
  }
  absl::StatusOr<Results> Read() {
    Results host;
    MKB_CUDA_CALL(cudaMemcpy(&host, device_, sizeof(Results), cudaMemcpyDeviceToHost));
    return host;
  }
  Results* get() { return device_; }

 private:
  Results* device_ = nullptr;
};

class CudaTensorOps final : public DeviceTensorOps {
 public:
  absl::StatusOr<TensorComparison> CompareToAnchor(const TensorRef& out, const TensorRef& expected,
                                                   const TensorRef& anchor,
                                                   const AnchorTolerance& tolerance) override {
    auto lo = LayoutOf(out), le = LayoutOf(expected), la = LayoutOf(anchor);
    if (!lo.ok()) return lo.status();
    if (!le.ok()) return le.status();
    if (!la.ok()) return la.status();
    const int64_t n = out.numel();
    ResultsBuffer results;
    if (auto s = results.Init(out.device_id); !s.ok()) return s;
    MKB_CUDA_CALL(cudaDeviceSynchronize());
    AnchorStats<<<Blocks(n), kThreads>>>(*lo, *le, *la, n, results.get());
    MKB_CUDA_CALL(cudaGetLastError());
    auto first = results.Read();
    if (!first.ok()) return first.status();
    TensorComparison c;
    c.numel = n;
    c.max_abs_anchor = FromBits(first->max_abs_anchor);
    c.reference_error = FromBits(first->reference_error);
    const double max_error = FromBits(first->max_error);
    c.nan_count = static_cast<int64_t>(first->nan_count);
    c.allowance =
        tolerance.allowance_factor *
        std::max(c.reference_error, tolerance.eps_scale * Epsilon(out.dtype) * c.max_abs_anchor);
    AnchorCount<<<Blocks(n), kThreads>>>(*lo, *la, n, c.allowance, max_error, results.get());
    MKB_CUDA_CALL(cudaGetLastError());
    auto second = results.Read();
    if (!second.ok()) return second.status();
    c.count_over = static_cast<int64_t>(second->count_over);
    c.max_error = c.nan_count > 0 ? std::numeric_limits<double>::quiet_NaN() : max_error;
    const unsigned long long worst = c.nan_count > 0 ? second->first_nan : second->worst_index;
    c.worst_index = worst == ~0ull ? 0 : static_cast<int64_t>(worst);
    c.passed = c.count_over == 0;
    auto values = ValuesAt(out, anchor, c.worst_index);
    if (!values.ok()) return values.status();
    c.worst_value = values->first;
    c.worst_anchor = values->second;
    return c;
  }

  absl::StatusOr<TensorComparison> CompareExact(const TensorRef& out,
                                                const TensorRef& expected) override {
    auto lo = LayoutOf(out), le = LayoutOf(expected);
    if (!lo.ok()) return lo.status();
    if (!le.ok()) return le.status();
    const int64_t n = out.numel();
    const bool floating = IsFloatingPoint(out.dtype);
    ResultsBuffer results;
    if (auto s = results.Init(out.device_id); !s.ok()) return s;
    MKB_CUDA_CALL(cudaDeviceSynchronize());
    ExactStats<<<Blocks(n), kThreads>>>(*lo, *le, n, floating, results.get());
    MKB_CUDA_CALL(cudaGetLastError());
    auto first = results.Read();
    if (!first.ok()) return first.status();
    TensorComparison c;
    c.exact = true;
    c.numel = n;
    c.count_over = static_cast<int64_t>(first->count_over);
    c.nan_count = static_cast<int64_t>(first->nan_count);
    c.max_error = FromBits(first->max_error);
    c.passed = c.count_over == 0;
    if (!c.passed) {
      ExactWorst<<<Blocks(n), kThreads>>>(*lo, *le, n, floating, c.max_error, results.get());
      MKB_CUDA_CALL(cudaGetLastError());
      auto second = results.Read();
      if (!second.ok()) return second.status();
      c.worst_index = second->worst_index == ~0ull ? 0 : static_cast<int64_t>(second->worst_index);
      auto values = ValuesAt(out, expected, c.worst_index);
      if (!values.ok()) return values.status();
      c.worst_value = values->first;
      c.worst_anchor = values->second;
    }
    return c;
  }

  absl::StatusOr<bool> SameContents(const TensorRef& a, const TensorRef& b) override {
    auto la = LayoutOf(a), lb = LayoutOf(b);
    if (!la.ok()) return la.status();
    if (!lb.ok()) return lb.status();
    ResultsBuffer results;
    if (auto s = results.Init(a.device_id); !s.ok()) return s;
    MKB_CUDA_CALL(cudaDeviceSynchronize());
    SameBytes<<<Blocks(a.numel()), kThreads>>>(*la, *lb, a.numel(), results.get());
    MKB_CUDA_CALL(cudaGetLastError());
    auto r = results.Read();
    if (!r.ok()) return r.status();
    return r->differs == 0;
  }

 private:
  // The two tensors' values at a flat index, copied to the host and decoded there.
  static absl::StatusOr<std::pair<double, double>> ValuesAt(const TensorRef& x, const TensorRef& y,
                                                            int64_t index) {
    unsigned char bx[8] = {}, by[8] = {};
    MKB_CUDA_CALL(cudaMemcpy(bx, static_cast<const char*>(x.data) + x.ByteOffsetOf(index),
                             ElementBytes(x.dtype), cudaMemcpyDeviceToHost));
    MKB_CUDA_CALL(cudaMemcpy(by, static_cast<const char*>(y.data) + y.ByteOffsetOf(index),
                             ElementBytes(y.dtype), cudaMemcpyDeviceToHost));
    return std::make_pair(DecodeElement(bx, x.dtype), DecodeElement(by, y.dtype));
  }
};

using MemGetAddressRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);

absl::StatusOr<MemGetAddressRange> AddressRangeFunction() {
  static MemGetAddressRange function = nullptr;
  if (function != nullptr) return function;
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found;
  MKB_CUDA_CALL(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &entry, 12000,
                                                 cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || entry == nullptr) {
    return absl::UnavailableError("the driver has no cuMemGetAddressRange");
  }
  function = reinterpret_cast<MemGetAddressRange>(entry);
  return function;
}

}  // namespace

void RegisterDeviceTensorOps() {
  static CudaTensorOps ops;
  RegisterCudaTensorOps(&ops);
}

int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

absl::Status SynchronizeDevice(int device) {
  MKB_CUDA_CALL(cudaSetDevice(device));
  MKB_CUDA_CALL(cudaDeviceSynchronize());
  return absl::OkStatus();
}

absl::StatusOr<CallClock> CallClock::Create(int device) {
  MKB_CUDA_CALL(cudaSetDevice(device));
  cudaEvent_t start = nullptr;
  cudaEvent_t end = nullptr;
  MKB_CUDA_CALL(cudaEventCreate(&start));
  if (const cudaError_t error = cudaEventCreate(&end); error != cudaSuccess) {
    cudaEventDestroy(start);
    return CudaStatus(error, "cudaEventCreate(&end)", __FILE__, __LINE__);
  }
  return CallClock(device, start, end);
}

CallClock::CallClock(CallClock&& other) noexcept
    : device_(other.device_),
      start_(std::exchange(other.start_, nullptr)),
      end_(std::exchange(other.end_, nullptr)) {}

CallClock& CallClock::operator=(CallClock&& other) noexcept {
  if (this != &other) {
    Destroy();
    device_ = other.device_;
    start_ = std::exchange(other.start_, nullptr);
    end_ = std::exchange(other.end_, nullptr);
  }
  return *this;
}

CallClock::~CallClock() { Destroy(); }

void CallClock::Destroy() {
  if (start_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  if (end_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(end_));
  start_ = end_ = nullptr;
}

absl::Status CallClock::Start() {
  if (start_ == nullptr) return absl::FailedPreconditionError("a moved-from CallClock");
  MKB_CUDA_CALL(cudaSetDevice(device_));
  MKB_CUDA_CALL(cudaDeviceSynchronize());
  MKB_CUDA_CALL(cudaEventRecord(static_cast<cudaEvent_t>(start_), cudaStreamLegacy));
  return absl::OkStatus();
}

absl::StatusOr<double> CallClock::Stop() {
  if (end_ == nullptr) return absl::FailedPreconditionError("a moved-from CallClock");
  MKB_CUDA_CALL(cudaSetDevice(device_));
  MKB_CUDA_CALL(cudaDeviceSynchronize());
  MKB_CUDA_CALL(cudaEventRecord(static_cast<cudaEvent_t>(end_), cudaStreamLegacy));
  MKB_CUDA_CALL(cudaDeviceSynchronize());
  float ms = 0;
  MKB_CUDA_CALL(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(end_)));
  return static_cast<double>(ms);
}

absl::StatusOr<IpcExport> ExportIpc(uintptr_t ptr) {
  auto range = AddressRangeFunction();
  if (!range.ok()) return range.status();
  CUdeviceptr base = 0;
  size_t size = 0;
  if ((*range)(&base, &size, static_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) {
    return absl::InvalidArgumentError("not a device pointer of this process");
  }
  cudaIpcMemHandle_t handle;
  if (const cudaError_t e = cudaIpcGetMemHandle(&handle, reinterpret_cast<void*>(base));
      e != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it, or the next launch check would report it
    return absl::InvalidArgumentError(absl::StrCat(
        "cudaIpcGetMemHandle: ", cudaGetErrorString(e),
        " (memory this process opened from another's handle cannot be exported again)"));
  }
  IpcExport out;
  out.handle.assign(reinterpret_cast<const char*>(&handle), sizeof(handle));
  out.offset = static_cast<int64_t>(ptr - base);
  return out;
}

absl::StatusOr<uintptr_t> OpenIpc(const std::string& handle, int device) {
  if (handle.size() != sizeof(cudaIpcMemHandle_t)) {
    return absl::InvalidArgumentError(absl::StrCat("an IPC handle has ", sizeof(cudaIpcMemHandle_t),
                                                   " bytes, not ", handle.size()));
  }
  cudaIpcMemHandle_t h;
  std::memcpy(&h, handle.data(), sizeof(h));
  MKB_CUDA_CALL(cudaSetDevice(device));
  void* base = nullptr;
  MKB_CUDA_CALL(cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess));
  return reinterpret_cast<uintptr_t>(base);
}

absl::StatusOr<int64_t> BytesFrom(uintptr_t ptr) {
  auto range = AddressRangeFunction();
  if (!range.ok()) return range.status();
  CUdeviceptr base = 0;
  size_t size = 0;
  if ((*range)(&base, &size, static_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) {
    return absl::InvalidArgumentError("not a device pointer mapped in this process");
  }
  return static_cast<int64_t>(base + size - static_cast<CUdeviceptr>(ptr));
}

absl::Status CloseIpc(uintptr_t base) {
  MKB_CUDA_CALL(cudaIpcCloseMemHandle(reinterpret_cast<void*>(base)));
  return absl::OkStatus();
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(int64_t bytes, int device) {
  if (bytes <= 0) return absl::InvalidArgumentError("a device buffer needs at least one byte");
  MKB_CUDA_CALL(cudaSetDevice(device));
  void* ptr = nullptr;
  MKB_CUDA_CALL(cudaMalloc(&ptr, static_cast<size_t>(bytes)));
  return DeviceBuffer(ptr, bytes, device);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(other.device_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Free();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = other.device_;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { Free(); }

void DeviceBuffer::Free() {
  if (ptr_ == nullptr) return;
  int current = 0;
  cudaGetDevice(&current);
  cudaSetDevice(device_);
  cudaFree(ptr_);  // a destructor cannot report; a failure here leaves the memory to the context
  cudaSetDevice(current);
  ptr_ = nullptr;
}

absl::StatusOr<std::string> DeviceBuffer::IpcHandle() const {
  cudaIpcMemHandle_t handle;
  MKB_CUDA_CALL(cudaIpcGetMemHandle(&handle, ptr_));
  return std::string(reinterpret_cast<const char*>(&handle), sizeof(handle));
}

std::string DriverCudaVersion() {
  int version = 0;
  if (cudaDriverGetVersion(&version) != cudaSuccess || version == 0) return "";
  return absl::StrCat(version / 1000, ".", (version % 1000) / 10);
}

}  // namespace mkb::cuda
