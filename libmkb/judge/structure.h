// Structural checks of what solve returned against what the reference returned: container
// types, lengths, nesting, tensor type (plain torch.Tensor), shape, dtype and device.
#ifndef LIBMKB_JUDGE_STRUCTURE_H_
#define LIBMKB_JUDGE_STRUCTURE_H_

#include <optional>
#include <string>
#include <vector>

#include "mkb/v1/judge.pb.h"
#include "mkb/v1/problem.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

// The first structural difference, as a Mismatch (phase and draw left for the caller), or
// nullopt when `actual` has exactly the structure of `expected`. `root` names the top level.
std::optional<v1::Mismatch> CompareStructure(const v1::ValueNode& expected,
                                             const v1::ValueNode& actual,
                                             const std::string& root = "out");

// Tensor leaves in order, with their paths ("out[0]", "out[1][2]").
std::vector<std::pair<std::string, const v1::ValueNode*>> TensorLeaves(
    const v1::ValueNode& node, const std::string& root = "out");

// The paths of the tensor outputs a problem declares (`outputs` in its `output_container`):
// {"out"} for a single tensor, {"out[0]", "out[1]", ...} for a tuple or list, as TensorLeaves
// names the leaves of the reference's structure.
std::vector<std::string> OutputPaths(const v1::Problem& problem, const std::string& root = "out");

// "tuple of 2", "bfloat16[4, 5] on cuda:0", "dict", for messages.
std::string DescribeNode(const v1::ValueNode& node);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_STRUCTURE_H_
