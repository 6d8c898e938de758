// The one place where absl::Status becomes a Python exception (see status.cc for the mapping).
#ifndef BINDINGS_STATUS_H_
#define BINDINGS_STATUS_H_

#include <pybind11/pybind11.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mkb::python {

// Creates the exception classes on `module`; call once at import.
void RegisterExceptions(pybind11::module_& module);

// Throws the Python exception that stands for `status` (no-op when OK).
void ThrowIfError(const absl::Status& status);

template <typename T>
T ValueOrThrow(absl::StatusOr<T> status_or) {
  ThrowIfError(status_or.status());
  return std::move(status_or).value();
}

}  // namespace mkb::python

#endif  // BINDINGS_STATUS_H_
