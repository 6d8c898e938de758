#include "libmkb/judge/tensor_ref.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libmkb/model/names.h"

namespace mkb {

int64_t TensorRef::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool TensorRef::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

int64_t TensorRef::ByteOffsetOf(int64_t flat_index) const {
  int64_t offset = 0;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) return 0;
    offset += (flat_index % shape[i]) * strides[i];
    flat_index /= shape[i];
  }
  return offset * ElementBytes(dtype);
}

std::vector<int64_t> TensorRef::Unravel(int64_t flat_index) const {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) break;
    index[i] = flat_index % shape[i];
    flat_index /= shape[i];
  }
  return index;
}

std::string TensorRef::Describe() const {
  return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<TensorRef> TensorRefFromDLPack(const DLTensor& tensor, v1::DType dtype,
                                              const std::string& what) {
  TensorRef ref;
  ref.dtype = dtype;
  const int element_bytes = ElementBytes(dtype);
  if (element_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": unsupported dtype"));
  }
  if (tensor.dtype.lanes != 1 || tensor.dtype.bits != 8 * element_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": DLPack element of ", tensor.dtype.bits,
                                                   " bits does not hold a ", DTypeName(dtype)));
  }
  if (tensor.device.device_type != kDLCPU && tensor.device.device_type != kDLCUDA) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": tensors must be on the CPU or a CUDA device"));
  }
  if (tensor.ndim < 0) return absl::InvalidArgumentError(absl::StrCat(what, ": negative ndim"));
  ref.device_type = tensor.device.device_type;
  ref.device_id = tensor.device.device_id;
  ref.shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  if (tensor.strides != nullptr) {
    ref.strides.assign(tensor.strides, tensor.strides + tensor.ndim);
  } else {
    ref.strides.resize(tensor.ndim);
    int64_t stride = 1;
    for (int i = tensor.ndim; i-- > 0;) {
      ref.strides[i] = stride;
      stride *= tensor.shape[i];
    }
  }
  for (int i = 0; i < tensor.ndim; ++i) {
    if (ref.shape[i] < 0)
      return absl::InvalidArgumentError(absl::StrCat(what, ": negative dimension"));
  }
  ref.data = static_cast<const char*>(tensor.data) + tensor.byte_offset;
  return ref;
}

}  // namespace mkb
