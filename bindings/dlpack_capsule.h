// DLPack capsules at the binding edge: reading torch tensors' memory without copying, and
// handing memory we own (shared segments, IPC-opened device memory) to torch.
#ifndef BINDINGS_DLPACK_CAPSULE_H_
#define BINDINGS_DLPACK_CAPSULE_H_

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libmkb/judge/tensor_ref.h"

namespace mkb::python {

// Views a "dltensor" capsule (e.g. tensor.__dlpack__()) as `dtype` ("bfloat16", ...), without
// consuming it: the capsule must stay alive while the TensorRef is used.
absl::StatusOr<TensorRef> TensorRefFromCapsule(pybind11::handle capsule, const std::string& dtype,
                                               const std::string& what);

// A capsule of a 1-D uint8 tensor over [data, data + bytes) on `device`. `release` runs when
// the consumer (torch) frees the tensor, or when the capsule is dropped unconsumed.
pybind11::capsule ByteCapsule(void* data, int64_t bytes, DLDevice device,
                              std::function<void()> release);

}  // namespace mkb::python

#endif  // BINDINGS_DLPACK_CAPSULE_H_
