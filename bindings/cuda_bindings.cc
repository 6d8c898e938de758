// metakernelbench._core.cuda: the judge's CUDA operations (present when libmkb was built with
// the CUDA Toolkit). Importing it installs the device comparisons of compare.h.
#include <string>

#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "bindings/dlpack_capsule.h"
#include "bindings/status.h"
#include "libmkb/judge/cuda/device.h"

namespace mkb::python {

namespace py = pybind11;

void RegisterCuda(py::module_& parent) {
  cuda::RegisterDeviceTensorOps();
  py::module_ m = parent.def_submodule("cuda", "CUDA IPC, synchronisation and device comparisons of the judge.");
  m.def("device_count", &cuda::DeviceCount, "Visible CUDA devices (0 without a driver).");
  m.def(
      "device_synchronize",
      [](int device) {
        absl::Status status;
        {
          py::gil_scoped_release release;
          status = cuda::SynchronizeDevice(device);
        }
        ThrowIfError(status);
      },
      py::arg("device") = 0, "cudaDeviceSynchronize on `device` (all streams of this process). Blocks.");
  m.def(
      "ipc_export",
      [](uintptr_t ptr) {
        const cuda::IpcExport e = ValueOrThrow(cuda::ExportIpc(ptr));
        return py::make_tuple(py::bytes(e.handle), e.offset);
      },
      py::arg("ptr"), "(IPC handle bytes, byte offset) of the allocation holding device pointer ptr.");
  m.def(
      "ipc_open", [](const py::bytes& handle, int device) { return ValueOrThrow(cuda::OpenIpc(handle, device)); },
      py::arg("handle"), py::arg("device") = 0, "Maps another process's allocation; returns its base address.");
  m.def(
      "ipc_close", [](uintptr_t base) { ThrowIfError(cuda::CloseIpc(base)); }, py::arg("base"));
  m.def(
      "device_capsule",
      [](uintptr_t ptr, int64_t nbytes, int device) {
        return ByteCapsule(reinterpret_cast<void*>(ptr), nbytes, DLDevice{kDLCUDA, device}, nullptr);
      },
      py::arg("ptr"), py::arg("nbytes"), py::arg("device") = 0,
      "A DLPack capsule of uint8[nbytes] at a device address (the memory is not owned).");
  m.def("driver_version", &cuda::DriverCudaVersion, "The driver's CUDA version, e.g. '13.0'.");
}

}  // namespace mkb::python
