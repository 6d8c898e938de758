// metakernelbench._core: the C++ core (libmkb) as a Python extension. Python code imports
// `metakernelbench`, which re-exports what users need from here.
#include <pybind11/pybind11.h>

#include "bindings/bindings.h"
#include "bindings/proto_convert.h"
#include "bindings/status.h"
#include "libmkb/core/version.h"

PYBIND11_MODULE(_core, module) {
  module.doc() = "The C++ core of MetaKernelBench (libmkb).";
  module.attr("__version__") = mkb::kVersion;
#ifdef MKB_HAVE_CUDA
  module.attr("built_with_cuda") = true;
#else
  module.attr("built_with_cuda") = false;
#endif
  mkb::python::RegisterExceptions(module);
  mkb::python::RegisterMessages(module);
  mkb::python::RegisterSuite(module);
  mkb::python::RegisterJudge(module);
  mkb::python::RegisterRuntimeAuditHook(module);
  mkb::python::RegisterSequenceHold(module);
  mkb::python::RegisterKernelThread(module);
#ifdef MKB_HAVE_CUDA
  mkb::python::RegisterCuda(module);
#endif
  mkb::python::RegisterStats(module);
  mkb::python::RegisterStore(module);
  mkb::python::RegisterProtocol(module);
  mkb::python::RegisterAgent(module);
}
