#include "bindings/status.h"

#include <string>

namespace mkb::python {
namespace {

namespace py = pybind11;

// Exception classes, created at import. Each derives from metakernelbench.Error and from the
// builtin a Python user would catch for it (ValueError, LookupError, ...).
struct ExceptionClasses {
  py::object base;
  py::object invalid_argument;
  py::object not_found;
  py::object already_exists;
  py::object failed_precondition;
  py::object permission_denied;
  py::object deadline_exceeded;
  py::object unavailable;
  py::object resource_exhausted;
  py::object cancelled;
  py::object internal;
};

ExceptionClasses& Classes() {
  // Leaked on purpose: Python owns the classes, and they outlive any use at interpreter exit.
  static auto* classes = new ExceptionClasses();
  return *classes;
}

py::object MakeClass(py::module_& module, const char* name, py::tuple bases, const char* doc) {
  py::object type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type));
  py::dict namespace_;
  namespace_["__doc__"] = doc;
  namespace_["__module__"] = "metakernelbench";
  py::object cls = type(name, bases, namespace_);
  module.attr(name) = cls;
  return cls;
}

}  // namespace

void RegisterExceptions(py::module_& module) {
  ExceptionClasses& c = Classes();
  py::object exception = py::reinterpret_borrow<py::object>(PyExc_Exception);
  c.base = MakeClass(module, "Error", py::make_tuple(exception),
                     "Base class of every error raised by metakernelbench.");
  auto derived = [&](const char* name, PyObject* builtin, const char* doc) {
    return MakeClass(module, name,
                     py::make_tuple(c.base, py::reinterpret_borrow<py::object>(builtin)), doc);
  };
  c.invalid_argument = derived("InvalidArgumentError", PyExc_ValueError,
                               "An argument, file or field is malformed; the message names it.");
  c.not_found =
      derived("NotFoundError", PyExc_LookupError, "A file, problem or record does not exist.");
  c.already_exists =
      derived("AlreadyExistsError", PyExc_ValueError, "A name or record is already taken.");
  c.failed_precondition =
      derived("FailedPreconditionError", PyExc_RuntimeError,
              "The system is not in a state the call needs (e.g. a stale trial).");
  c.permission_denied =
      derived("PermissionDeniedError", PyExc_PermissionError, "Access was refused.");
  c.deadline_exceeded =
      derived("DeadlineExceededError", PyExc_TimeoutError, "A time limit ran out.");
  c.unavailable = derived("UnavailableError", PyExc_ConnectionError,
                          "A service (GPU, model API) is unavailable; retrying may help.");
  c.resource_exhausted = derived("ResourceExhaustedError", PyExc_RuntimeError,
                                 "A budget, quota or memory limit was exhausted.");
  c.cancelled = derived("CancelledError", PyExc_RuntimeError, "The operation was cancelled.");
  c.internal =
      derived("InternalError", PyExc_RuntimeError, "A bug or an unexpected system failure.");
}

void ThrowIfError(const absl::Status& status) {
  if (status.ok()) return;
  const ExceptionClasses& c = Classes();
  py::object cls;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      cls = c.invalid_argument;
      break;
    case absl::StatusCode::kNotFound:
      cls = c.not_found;
      break;
    case absl::StatusCode::kAlreadyExists:
      cls = c.already_exists;
      break;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      cls = c.failed_precondition;
      break;
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      cls = c.permission_denied;
      break;
    case absl::StatusCode::kDeadlineExceeded:
      cls = c.deadline_exceeded;
      break;
    case absl::StatusCode::kUnavailable:
      cls = c.unavailable;
      break;
    case absl::StatusCode::kResourceExhausted:
      cls = c.resource_exhausted;
      break;
    case absl::StatusCode::kCancelled:
      cls = c.cancelled;
      break;
    default:
      cls = c.internal;
      break;
  }
  PyErr_SetString(cls.ptr(), std::string(status.message()).c_str());
  throw py::error_already_set();
}

}  // namespace mkb::python
