#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings/bindings.h"
#include "bindings/proto_convert.h"
#include "bindings/status.h"
#include "libmkb/core/sha256.h"
#include "libmkb/model/defaults.h"
#include "libmkb/model/names.h"
#include "libmkb/model/published_outcome.h"
#include "libmkb/suite/suite.h"

namespace mkb::python {
namespace {

namespace py = pybind11;

py::list Views(const std::vector<const v1::Problem*>& problems) {
  py::list out;
  for (const v1::Problem* problem : problems) out.append(ViewOf(*problem));
  return out;
}

}  // namespace

void RegisterSuite(py::module_& module) {
  py::class_<Suite, std::shared_ptr<Suite>>(module, "Suite", "A loaded, immutable problem suite.")
      .def_static(
          "load",
          [](const std::string& root) {
            absl::StatusOr<Suite> suite;
            {
              py::gil_scoped_release release;  // reads and hashes every problem file
              suite = Suite::Load(root);
            }
            return std::make_shared<Suite>(ValueOrThrow(std::move(suite)));
          },
          py::arg("root"),
          "Loads and validates every problem under root/<family>/<NN>_<slug>/. Raises\n"
          "InvalidArgumentError with file:line for a malformed problem.textproto.")
      .def_property_readonly("root", &Suite::root)
      .def("__len__", &Suite::size)
      .def_property_readonly("problems",
                             [](const Suite& suite) {
                               py::list out;
                               for (const v1::Problem& problem : suite.problems())
                                 out.append(ViewOf(problem));
                               return out;
                             })
      .def(
          "find",
          [](const Suite& suite, const std::string& key) {
            return ViewOf(*ValueOrThrow(suite.Find(key)));
          },
          py::arg("slug_or_number"),
          "The problem with this slug or number; NotFoundError suggests near names.")
      .def(
          "in_family",
          [](const Suite& suite, const std::string& family) {
            return Views(suite.InFamily(ValueOrThrow(ParseFamily(family))));
          },
          py::arg("family"))
      .def(
          "matching",
          [](const Suite& suite, const std::string& glob) { return Views(suite.Matching(glob)); },
          py::arg("glob"), "Problems whose slug matches a shell-style glob.");

  module.def(
      "load_problem", [](const std::string& dir) { return ViewOf(ValueOrThrow(LoadProblem(dir))); },
      py::arg("problem_dir"), "Loads and validates one problem folder.");
  module.def(
      "parse_problem",
      [](const std::string& text, const std::string& filename) {
        return ViewOf(ValueOrThrow(ParseProblem(text, filename)));
      },
      py::arg("text"), py::arg("filename") = "<text>",
      "Parses and validates problem.textproto text.");
  module.def(
      "families",
      [] {
        py::list out;
        for (v1::Family family : AllFamilies()) out.append(FamilyName(family));
        return out;
      },
      "The six family names, in PROBLEMS.md order.");
  module.def(
      "default_toolchain",
      [](const std::string& dsl) {
        py::list out;
        for (const v1::PackagePin& pin : DefaultToolchain(ValueOrThrow(ParseDsl(dsl))))
          out.append(ViewOf(pin));
        return out;
      },
      py::arg("dsl"), "The pinned packages of the published runs for 'cutedsl' or 'tirx'.");
  module.def(
      "default_budget", [] { return ViewOf(WithDefaults(v1::Budget())); },
      "The per-attempt budget of SPEC §4.");
  module.def(
      "status_of_published_outcome",
      [](bool has_rewards, bool imported, bool correct, bool passed, bool error, bool mismatch) {
        return VerdictStatusName(StatusOfPublishedOutcome(
            PublishedOutcome{has_rewards, imported, correct, passed, error, mismatch}));
      },
      py::kw_only(), py::arg("has_rewards"), py::arg("imported"), py::arg("correct"),
      py::arg("passed"), py::arg("error"), py::arg("mismatch"),
      "The verdict status of the published harness's final rewards (published_outcome.h).");
  module.def(
      "status_of_published_submission",
      [](bool counted, bool passed) {
        return VerdictStatusName(StatusOfPublishedSubmission(counted, passed));
      },
      py::kw_only(), py::arg("counted"), py::arg("passed"),
      "The verdict status of one entry of the published harness's submission log.");
  module.def(
      "standard_arms",
      [] {
        py::list out;
        for (const v1::ArmSpec& arm : StandardArms()) out.append(ViewOf(arm));
        return out;
      },
      "The four arms of the published protocol.");
  module.def(
      "control_arms",
      [] {
        py::list out;
        for (const v1::ArmSpec& arm : ControlArms()) out.append(ViewOf(arm));
        return out;
      },
      "The second solos of the regression-to-the-mean control.");
  module.def(
      "python_scalar_type",
      [](const std::string& dtype) {
        return PythonScalarTypeName(ValueOrThrow(ParseDType(dtype)));
      },
      py::arg("dtype"),
      "The Python type a scalar input of this dtype is passed as: 'float' (float64), 'int' "
      "(int64), 'bool' (bool); '' for a dtype no scalar has.");
  module.def(
      "python_scalar_literal",
      [](const std::string& dtype, double value) {
        return PythonScalarLiteral(ValueOrThrow(ParseDType(dtype)), value);
      },
      py::arg("dtype"), py::arg("value"),
      "A scalar input's value as a Python literal of its type ('0.08838834764831843', '32', "
      "'True').");
  module.def(
      "sha256_hex", [](py::bytes data) { return Sha256Hex(std::string(data)); }, py::arg("data"),
      "Lower-case hex SHA-256 of bytes.");
}

}  // namespace mkb::python
