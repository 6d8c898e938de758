// Registration functions of the _core module's parts, one per subsystem.
#ifndef BINDINGS_BINDINGS_H_
#define BINDINGS_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace mkb::python {

void RegisterSuite(pybind11::module_& module);
void RegisterJudge(pybind11::module_& module);
void RegisterRuntimeAuditHook(pybind11::module_& module);
void RegisterCuda(pybind11::module_& module);
void RegisterStats(pybind11::module_& module);
void RegisterStore(pybind11::module_& module);
void RegisterProtocol(pybind11::module_& module);
void RegisterAgent(pybind11::module_& module);

}  // namespace mkb::python

#endif  // BINDINGS_BINDINGS_H_
