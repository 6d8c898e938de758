#include "bindings/python_ast.h"

#include <pybind11/pybind11.h>

#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mkb::python {
namespace {

namespace py = pybind11;
using Kind = PyValue::Kind;

struct TooDeep {};

class Converter {
 public:
  Converter() : ast_node_type_(py::module_::import("ast").attr("AST")) {}

  std::unique_ptr<PyNode> Node(py::handle node, int depth) {
    if (depth > kMaxPySyntaxDepth) throw TooDeep{};
    auto out = std::make_unique<PyNode>();
    PyTypeObject* type = Py_TYPE(node.ptr());
    out->type = type->tp_name;
    if (py::hasattr(node, "lineno")) {
      py::object line = node.attr("lineno");
      if (PyLong_Check(line.ptr())) out->line = line.cast<int>();
    }
    for (const py::object& field : Fields(type, node)) {
      py::object value = py::getattr(node, field, py::none());
      out->fields.emplace_back(field.cast<std::string>(), Value(value, depth + 1));
    }
    return out;
  }

 private:
  const std::vector<py::object>& Fields(PyTypeObject* type, py::handle node) {
    auto it = fields_.find(type);
    if (it != fields_.end()) return it->second;
    std::vector<py::object> names;
    for (py::handle name : node.attr("_fields"))
      names.push_back(py::reinterpret_borrow<py::object>(name));
    return fields_.emplace(type, std::move(names)).first->second;
  }

  PyValue Value(py::handle value, int depth) {
    PyObject* v = value.ptr();
    if (v == Py_None) return PyValue();
    if (v == Py_Ellipsis) return PyValue::Constant(Kind::kEllipsis);
    if (PyBool_Check(v)) return PyValue::Constant(Kind::kBool, v == Py_True ? "True" : "False");
    if (PyLong_Check(v)) return PyValue::Constant(Kind::kInt, IntegerText(value));
    if (PyFloat_Check(v)) {
      return PyValue::Constant(Kind::kFloat, absl::StrFormat("%.17g", PyFloat_AsDouble(v)));
    }
    if (PyComplex_Check(v)) {
      return PyValue::Constant(
          Kind::kComplex,
          absl::StrFormat("%.17g%+.17gj", PyComplex_RealAsDouble(v), PyComplex_ImagAsDouble(v)));
    }
    if (PyUnicode_Check(v)) {
      py::object bytes =
          py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(v, "utf-8", "surrogatepass"));
      if (!bytes) throw py::error_already_set();
      return PyValue::Str(
          std::string(PyBytes_AS_STRING(bytes.ptr()), PyBytes_GET_SIZE(bytes.ptr())));
    }
    if (PyBytes_Check(v)) {
      return PyValue::Constant(Kind::kBytes,
                               std::string(PyBytes_AS_STRING(v), PyBytes_GET_SIZE(v)));
    }
    if (PyList_Check(v) || PyTuple_Check(v)) {
      std::vector<PyValue> items;
      for (py::handle item : value) items.push_back(Value(item, depth));
      return PyValue::List(std::move(items));
    }
    if (PyObject_IsInstance(v, ast_node_type_.ptr()) == 1) return PyValue::Node(Node(value, depth));
    // Nothing else comes out of ast.parse; keep its repr rather than fail.
    return PyValue::Str(py::repr(value).cast<std::string>());
  }

  // As python_parser.cc writes ints: decimal when |v| < 2^64, else 0x + hex.
  static std::string IntegerText(py::handle value) {
    int overflow = 0;
    const long long small = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow == 0) return absl::StrCat(small);
    const bool negative = overflow < 0;
    py::object magnitude = py::reinterpret_steal<py::object>(PyNumber_Absolute(value.ptr()));
    unsigned long long unsigned_value = PyLong_AsUnsignedLongLong(magnitude.ptr());
    if (!PyErr_Occurred()) return absl::StrCat(negative ? "-" : "", unsigned_value);
    PyErr_Clear();
    const std::string hex =
        py::module_::import("builtins").attr("format")(magnitude, "x").cast<std::string>();
    return absl::StrCat(negative ? "-" : "", "0x", hex);
  }

  py::object ast_node_type_;
  std::unordered_map<PyTypeObject*, std::vector<py::object>> fields_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PyNode>> CPythonSyntaxTree(const std::string& source) {
  py::object tree;
  try {
    tree = py::module_::import("ast").attr("parse")(py::str(source));
  } catch (py::error_already_set& error) {
    return absl::InvalidArgumentError(absl::StrCat("ast.parse: ", error.what()));
  }
  try {
    return Converter().Node(tree, 1);
  } catch (const TooDeep&) {
    return absl::InvalidArgumentError(
        absl::StrCat("the syntax tree nests deeper than ", kMaxPySyntaxDepth, " nodes"));
  }
}

}  // namespace mkb::python
