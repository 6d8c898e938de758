#include "libmkb/judge/structure.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libmkb/model/names.h"

namespace mkb {
namespace {

std::string ShapeText(const v1::TensorMeta& meta) {
  return absl::StrCat("(", absl::StrJoin(meta.shape(), ", "), ")");
}

std::string DTypeText(const v1::TensorMeta& meta) {
  return meta.dtype() != v1::DTYPE_UNSPECIFIED ? DTypeName(meta.dtype()) : meta.torch_dtype();
}

v1::Mismatch Difference(const std::string& path, v1::MismatchKind kind, const std::string& expected,
                        const std::string& actual, const std::string& what) {
  v1::Mismatch m;
  m.set_output_path(path);
  m.set_kind(kind);
  m.set_expected(expected);
  m.set_actual(actual);
  m.set_message(absl::StrCat(path, ": ", what, ": expected ", expected, ", got ", actual));
  return m;
}

std::string ContainerName(v1::ValueNode::Kind kind) {
  switch (kind) {
    case v1::ValueNode::TENSOR:
      return "torch.Tensor";
    case v1::ValueNode::TUPLE:
      return "tuple";
    case v1::ValueNode::LIST:
      return "list";
    case v1::ValueNode::NONE:
      return "None";
    default:
      return "other";
  }
}

}  // namespace

std::string DescribeNode(const v1::ValueNode& node) {
  switch (node.kind()) {
    case v1::ValueNode::TENSOR:
      return absl::StrCat(DTypeText(node.tensor().meta()), "[",
                          absl::StrJoin(node.tensor().meta().shape(), ", "), "] on ",
                          node.tensor().meta().device());
    case v1::ValueNode::TUPLE:
    case v1::ValueNode::LIST:
      return absl::StrCat(ContainerName(node.kind()), " of ", node.items_size());
    case v1::ValueNode::NONE:
      return "None";
    default:
      return node.type_name().empty() ? "an object" : node.type_name();
  }
}

std::optional<v1::Mismatch> CompareStructure(const v1::ValueNode& expected,
                                             const v1::ValueNode& actual, const std::string& root) {
  if (expected.kind() != actual.kind()) {
    const bool tensor_subclass = expected.kind() == v1::ValueNode::TENSOR &&
                                 actual.kind() == v1::ValueNode::OTHER &&
                                 !actual.type_name().empty();
    return Difference(
        root, tensor_subclass ? v1::MISMATCH_TYPE : v1::MISMATCH_STRUCTURE,
        ContainerName(expected.kind()),
        actual.type_name().empty() ? ContainerName(actual.kind()) : actual.type_name(),
        "wrong type");
  }
  switch (expected.kind()) {
    case v1::ValueNode::TUPLE:
    case v1::ValueNode::LIST:
      if (expected.items_size() != actual.items_size()) {
        return Difference(root, v1::MISMATCH_STRUCTURE, DescribeNode(expected),
                          DescribeNode(actual), "wrong length");
      }
      for (int i = 0; i < expected.items_size(); ++i) {
        if (auto m = CompareStructure(expected.items(i), actual.items(i),
                                      absl::StrCat(root, "[", i, "]")))
          return m;
      }
      return std::nullopt;
    case v1::ValueNode::TENSOR: {
      const v1::TensorMeta& e = expected.tensor().meta();
      const v1::TensorMeta& a = actual.tensor().meta();
      if (!a.plain()) {
        return Difference(root, v1::MISMATCH_TYPE, "torch.Tensor",
                          actual.type_name().empty() ? "a tensor subclass" : actual.type_name(),
                          "not a plain torch.Tensor");
      }
      if (e.dtype() != a.dtype() ||
          (e.dtype() == v1::DTYPE_UNSPECIFIED && e.torch_dtype() != a.torch_dtype())) {
        return Difference(root, v1::MISMATCH_DTYPE, DTypeText(e), DTypeText(a), "wrong dtype");
      }
      if (e.shape_size() != a.shape_size() ||
          !std::equal(e.shape().begin(), e.shape().end(), a.shape().begin())) {
        return Difference(root, v1::MISMATCH_SHAPE, ShapeText(e), ShapeText(a), "wrong shape");
      }
      if (e.device() != a.device()) {
        return Difference(root, v1::MISMATCH_DEVICE, e.device(), a.device(), "wrong device");
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::vector<std::pair<std::string, const v1::ValueNode*>> TensorLeaves(const v1::ValueNode& node,
                                                                       const std::string& root) {
  std::vector<std::pair<std::string, const v1::ValueNode*>> leaves;
  if (node.kind() == v1::ValueNode::TENSOR) {
    leaves.emplace_back(root, &node);
  } else if (node.kind() == v1::ValueNode::TUPLE || node.kind() == v1::ValueNode::LIST) {
    for (int i = 0; i < node.items_size(); ++i) {
      auto inner = TensorLeaves(node.items(i), absl::StrCat(root, "[", i, "]"));
      leaves.insert(leaves.end(), inner.begin(), inner.end());
    }
  }
  return leaves;
}

std::vector<std::string> OutputPaths(const v1::Problem& problem, const std::string& root) {
  v1::ValueNode declared;
  if (problem.output_container() == v1::SINGLE_TENSOR) {
    declared.set_kind(v1::ValueNode::TENSOR);
  } else {
    declared.set_kind(problem.output_container() == v1::LIST ? v1::ValueNode::LIST
                                                             : v1::ValueNode::TUPLE);
    for (int i = 0; i < problem.outputs_size(); ++i)
      declared.add_items()->set_kind(v1::ValueNode::TENSOR);
  }
  std::vector<std::string> paths;
  for (const auto& [path, node] : TensorLeaves(declared, root)) paths.push_back(path);
  return paths;
}

}  // namespace mkb
