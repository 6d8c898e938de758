#include "bindings/dlpack_capsule.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "libmkb/model/names.h"

namespace mkb::python {
namespace {

namespace py = pybind11;

struct ByteTensor {
  DLManagedTensor managed;
  int64_t shape[1];
  std::function<void()> release;
};

void DeleteByteTensor(DLManagedTensor* self) {
  auto* owner = static_cast<ByteTensor*>(self->manager_ctx);
  if (owner->release) owner->release();
  delete owner;
}

void CapsuleDestructor(PyObject* capsule) {
  // Only an unconsumed capsule still owns its tensor.
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  }
}

}  // namespace

absl::StatusOr<TensorRef> TensorRefFromCapsule(py::handle capsule, const std::string& dtype,
                                               const std::string& what) {
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected an unconsumed DLPack capsule (tensor.__dlpack__())"));
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  auto parsed = ParseDType(dtype);
  if (!parsed.ok())
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", parsed.status().message()));
  return TensorRefFromDLPack(managed->dl_tensor, *parsed, what);
}

py::capsule ByteCapsule(void* data, int64_t bytes, DLDevice device, std::function<void()> release) {
  auto* owner = new ByteTensor();
  owner->shape[0] = bytes;
  owner->release = std::move(release);
  DLTensor& t = owner->managed.dl_tensor;
  t.data = data;
  t.device = device;
  t.ndim = 1;
  t.dtype = DLDataType{kDLUInt, 8, 1};
  t.shape = owner->shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  owner->managed.manager_ctx = owner;
  owner->managed.deleter = &DeleteByteTensor;
  return py::capsule(&owner->managed, "dltensor", &CapsuleDestructor);
}

}  // namespace mkb::python
