// metakernelbench._core.cuda: the judge's CUDA operations (present when libmkb was built with
// the CUDA Toolkit). Importing it installs the device comparisons of compare.h.
#include <pybind11/stl.h>

#include <string>
#include <utility>

#include "bindings/bindings.h"
#include "bindings/dlpack_capsule.h"
#include "bindings/proto_convert.h"
#include "bindings/status.h"
#include "libmkb/judge/call_trace.h"
#include "libmkb/judge/cuda/cupti_source.h"
#include "libmkb/judge/cuda/device.h"
#include "libmkb/judge/cuda/l2_flush.h"
#include "libmkb/judge/cuda/launch_monitor.h"
#include "libmkb/judge/cuda/nvml_sampler.h"

namespace mkb::python {

namespace py = pybind11;

void RegisterCuda(py::module_& parent) {
  cuda::RegisterDeviceTensorOps();
  py::module_ m = parent.def_submodule(
      "cuda", "CUDA IPC, synchronisation and device comparisons of the judge.");
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
      py::arg("device") = 0,
      "cudaDeviceSynchronize on `device` (all streams of this process). Blocks.");
  m.def(
      "ipc_export",
      [](uintptr_t ptr) {
        const cuda::IpcExport e = ValueOrThrow(cuda::ExportIpc(ptr));
        return py::make_tuple(py::bytes(e.handle), e.offset);
      },
      py::arg("ptr"),
      "(IPC handle bytes, byte offset) of the allocation holding device pointer ptr.");
  m.def(
      "ipc_open",
      [](const py::bytes& handle, int device) {
        return ValueOrThrow(cuda::OpenIpc(handle, device));
      },
      py::arg("handle"), py::arg("device") = 0,
      "Maps another process's allocation; returns its base address.");
  m.def("ipc_close", [](uintptr_t base) { ThrowIfError(cuda::CloseIpc(base)); }, py::arg("base"));
  m.def(
      "bytes_from", [](uintptr_t ptr) { return ValueOrThrow(cuda::BytesFrom(ptr)); },
      py::arg("ptr"),
      "The bytes of the allocation holding device pointer ptr (an IPC mapping's too) from ptr "
      "to its end: how far a handle may reach, whatever its sender claimed.");
  m.def(
      "device_capsule",
      [](uintptr_t ptr, int64_t nbytes, int device) {
        return ByteCapsule(reinterpret_cast<void*>(ptr), nbytes, DLDevice{kDLCUDA, device},
                           nullptr);
      },
      py::arg("ptr"), py::arg("nbytes"), py::arg("device") = 0,
      "A DLPack capsule of uint8[nbytes] at a device address (the memory is not owned).");
  m.def("driver_version", &cuda::DriverCudaVersion, "The driver's CUDA version, e.g. '13.0'.");

  // CallClock's halves, the GIL released while they synchronise: time() is start, fn, stop.
  auto start_clock = [](cuda::CallClock& clock) {
    absl::Status started;
    {
      py::gil_scoped_release release;
      started = clock.Start();
    }
    ThrowIfError(started);
  };
  auto stop_clock = [](cuda::CallClock& clock) {
    absl::StatusOr<double> ms;
    {
      py::gil_scoped_release release;
      ms = clock.Stop();
    }
    return ValueOrThrow(std::move(ms)) * 1e-3;
  };
  py::class_<cuda::CallClock>(
      m, "CallClock",
      "The published method's clock in the judge's own code (device.h): Python code in the "
      "process cannot replace it as it can replace torch.cuda.Event's methods.")
      .def(py::init([](int device) { return ValueOrThrow(cuda::CallClock::Create(device)); }),
           py::arg("device") = 0)
      .def(
          "time",
          [start_clock, stop_clock](cuda::CallClock& clock, const py::function& fn) {
            start_clock(clock);
            py::object out = fn();
            const double seconds = stop_clock(clock);
            return py::make_tuple(seconds, out);
          },
          py::arg("fn"),
          "(seconds, fn()): synchronise, start event, fn(), synchronise, end event, "
          "synchronise; the events' elapsed time. fn's exception propagates.")
      .def("start", start_clock,
           "time()'s first half, for a window that is not one Python call: synchronise, start "
           "event.")
      .def("stop", stop_clock,
           "time()'s second half: synchronise, end event, synchronise; seconds since start().");

  py::class_<cuda::DeviceBuffer>(
      m, "DeviceBuffer",
      "Device memory in an allocation of its own: its IPC handle maps nothing else.")
      .def(py::init([](int64_t bytes, int device) {
             return ValueOrThrow(cuda::DeviceBuffer::Allocate(bytes, device));
           }),
           py::arg("bytes"), py::arg("device") = 0)
      .def_property_readonly("ptr", &cuda::DeviceBuffer::ptr)
      .def_property_readonly("bytes", &cuda::DeviceBuffer::bytes)
      .def_property_readonly("device", &cuda::DeviceBuffer::device)
      .def("ipc_handle",
           [](const cuda::DeviceBuffer& b) { return py::bytes(ValueOrThrow(b.IpcHandle())); })
      .def(
          "capsule",
          [](const cuda::DeviceBuffer& b) {
            return ByteCapsule(reinterpret_cast<void*>(b.ptr()), b.bytes(),
                               DLDevice{kDLCUDA, b.device()}, nullptr);
          },
          "A DLPack capsule of uint8[bytes] over the buffer (valid while the buffer lives).");

  py::class_<cuda::LaunchMonitor, std::unique_ptr<cuda::LaunchMonitor, py::nodelete>>(
      m, "LaunchMonitor",
      "CUPTI callbacks attributing every kernel launch to its module's loader (the DSL, a raw "
      "driver-API module, the CUDA runtime's libraries, the judge); the knockout.")
      .def(py::init(
               [](std::vector<std::string> cupti_dirs, std::vector<std::string> dsl_native_dirs) {
                 return std::unique_ptr<cuda::LaunchMonitor, py::nodelete>(
                     ValueOrThrow(cuda::LaunchMonitor::Start(cupti_dirs, dsl_native_dirs)));
               }),
           py::arg("cupti_dirs") = std::vector<std::string>{},
           py::arg("dsl_native_dirs") = std::vector<std::string>{})
      .def(
          "begin_call",
          [](cuda::LaunchMonitor& m, bool knockout) { ThrowIfError(m.BeginCall(knockout)); },
          py::arg("knockout") = false)
      .def("end_call", [](cuda::LaunchMonitor& m) { return ViewOf(m.EndCall()); })
      .def(
          "set_enabled",
          [](cuda::LaunchMonitor& m, bool enabled) { ThrowIfError(m.SetEnabled(enabled)); },
          py::arg("enabled"))
      .def(
          "entry_runner",
          [](cuda::LaunchMonitor& monitor, py::object original) {
            cuda::LaunchMonitor* owner = &monitor;  // the process's one monitor, never deleted
            return py::cpp_function(
                [owner, original](const py::tuple& args, const py::dict& kwargs) {
                  owner->EnterDslLoader();
                  struct Leave {
                    cuda::LaunchMonitor* monitor;
                    ~Leave() { monitor->LeaveDslLoader(); }
                  } leave{owner};
                  return original(*args, **kwargs);
                });
          },
          py::arg("original"),
          "run(args, kwargs): original(*args, **kwargs) with the monitor told that what loads "
          "meanwhile is the DSL's. A C++ function: whoever reaches it (through the wrapper the "
          "worker puts in the DSL) finds neither the monitor nor the worker, and can only call "
          "`original` with it.")
      .def("enter_dsl_loader", &cuda::LaunchMonitor::EnterDslLoader)
      .def("leave_dsl_loader", &cuda::LaunchMonitor::LeaveDslLoader)
      .def("enter_judge", &cuda::LaunchMonitor::EnterJudge)
      .def("leave_judge", &cuda::LaunchMonitor::LeaveJudge)
      .def_property_readonly("background_launches", &cuda::LaunchMonitor::background_launches);

  py::class_<CallTracer>(m, "Tracer",
                         "CUPTI activity tracing of one call at a time (process-wide CUPTI).")
      .def(py::init([](std::vector<std::string> library_dirs) {
             ActivitySource* source = ValueOrThrow(cuda::CuptiActivitySource(library_dirs));
             ThrowIfError(source->Start());
             return std::make_unique<CallTracer>(source);
           }),
           py::arg("library_dirs") = std::vector<std::string>{},
           "Loads libcupti (searching library_dirs first) and starts kernel / memcpy / memset "
           "activity.\n"
           "FailedPreconditionError when another profiler holds CUPTI.")
      .def("begin", [](CallTracer& t) { ThrowIfError(t.Begin()); })
      .def(
          "end",
          [](CallTracer& t, cuda::LaunchMonitor* monitor) {
            absl::StatusOr<v1::CallTrace> trace;
            {
              py::gil_scoped_release release;
              trace = t.End();
            }
            v1::CallTrace value = ValueOrThrow(std::move(trace));
            if (monitor != nullptr) monitor->Annotate(&value);
            return ViewOf(value);
          },
          py::arg("monitor") = nullptr,
          "Drains the call's records; with a launch monitor, each record gets its origin.");

  py::class_<cuda::NvmlSampler>(m, "NvmlSampler",
                                "SM clock, temperature and throttle reasons of a GPU (NVML).")
      .def(py::init([](int device) { return ValueOrThrow(cuda::NvmlSampler::Open(device)); }),
           py::arg("device") = 0)
      .def_property_readonly("driver_version", &cuda::NvmlSampler::driver_version)
      .def_property_readonly("index", &cuda::NvmlSampler::index,
                             "The GPU's NVML index on its machine (-1: unknown).")
      .def_property_readonly("uuid", &cuda::NvmlSampler::uuid, "The GPU's UUID ('': unknown).")
      .def("sample", [](const cuda::NvmlSampler& s) {
        const cuda::GpuSample g = ValueOrThrow(s.Sample());
        py::dict d;
        d["sm_clock_mhz"] = g.sm_clock_mhz;
        d["mem_clock_mhz"] = g.mem_clock_mhz;
        d["temperature_c"] = g.temperature_c;
        d["throttle_reasons"] = g.throttle_reasons;
        d["throttled"] = g.throttled;
        return d;
      });

  py::class_<cuda::L2Flusher>(m, "L2Flusher",
                              "Evicts the L2 cache by writing a buffer twice its size.")
      .def(py::init([](int device) { return ValueOrThrow(cuda::L2Flusher::Create(device)); }),
           py::arg("device") = 0)
      .def_property_readonly("bytes", &cuda::L2Flusher::bytes)
      .def(
          "flush",
          [](const cuda::L2Flusher& f, uintptr_t stream) {
            absl::Status status;
            {
              py::gil_scoped_release release;
              status = f.Flush(stream);
            }
            ThrowIfError(status);
          },
          py::arg("stream") = 0, "Flushes on `stream` (a cudaStream_t as int) and waits.");
  m.def(
      "copy_bandwidth",
      [](int device) {
        absl::StatusOr<double> bandwidth;
        {
          py::gil_scoped_release release;
          bandwidth = cuda::MeasureCopyBandwidth(device);
        }
        return ValueOrThrow(std::move(bandwidth));
      },
      py::arg("device") = 0,
      "Device-to-device copy bandwidth, bytes/s (read + written), best of 5 copies of 1 GiB.");
}

}  // namespace mkb::python
