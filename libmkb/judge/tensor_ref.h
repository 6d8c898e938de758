// A non-owning view of a tensor's memory, as the judge's comparisons read it: where the data is,
// its element type (our DType: DLPack 0.6 has no float8 codes, so the caller states the type and
// the DLPack header supplies pointer, shape, strides and device), and its layout.
#ifndef LIBMKB_JUDGE_TENSOR_REF_H_
#define LIBMKB_JUDGE_TENSOR_REF_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mkb/v1/common.pb.h"

namespace mkb {

struct TensorRef {
  const void* data = nullptr;  // address of element 0 (DLTensor data + byte_offset)
  v1::DType dtype = v1::DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements
  DLDeviceType device_type = kDLCPU;
  int device_id = 0;

  int64_t numel() const;
  bool is_contiguous() const;  // row-major, no gaps
  // Byte offset of the element with this row-major flat index.
  int64_t ByteOffsetOf(int64_t flat_index) const;
  // Row-major multi-index of a flat index.
  std::vector<int64_t> Unravel(int64_t flat_index) const;
  std::string Describe() const;  // "bfloat16[4, 5]"
};

// Views a DLPack tensor as `dtype`. InvalidArgumentError when the element size differs from the
// DLPack bit width or the device is neither CPU nor CUDA. `what` names the tensor in errors.
absl::StatusOr<TensorRef> TensorRefFromDLPack(const DLTensor& tensor, v1::DType dtype,
                                              const std::string& what);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_TENSOR_REF_H_
