// Every CUDA runtime call goes through MKB_CUDA_CALL, which turns a failure into an
// absl::Status naming the call, its file:line and the CUDA error.
#ifndef LIBMKB_JUDGE_CUDA_CUDA_CALL_H_
#define LIBMKB_JUDGE_CUDA_CUDA_CALL_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace mkb::cuda {

inline absl::Status CudaStatus(cudaError_t error, const char* call, const char* file, int line) {
  if (error == cudaSuccess) return absl::OkStatus();
  const std::string message =
      absl::StrCat(call, " failed at ", file, ":", line, ": ", cudaGetErrorName(error), " (",
                   cudaGetErrorString(error), ")");
  switch (error) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
      return absl::UnavailableError(message);
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidResourceHandle:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace mkb::cuda

// Evaluates a CUDA runtime call; returns its failure from the enclosing function as a Status.
#define MKB_CUDA_CALL(expr)                                                                       \
  do {                                                                                            \
    ::absl::Status mkb_cuda_status_ = ::mkb::cuda::CudaStatus((expr), #expr, __FILE__, __LINE__); \
    if (!mkb_cuda_status_.ok()) return mkb_cuda_status_;                                          \
  } while (false)

#endif  // LIBMKB_JUDGE_CUDA_CUDA_CALL_H_
