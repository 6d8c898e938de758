// The judge's correctness comparison (SPEC §3), on host or device memory.
//
// A floating-point output passes iff no element is NaN and
//   max|out - anchor| <= allowance_factor * max(max|expected - anchor|, eps_scale * eps(dtype) *
//   max|anchor|)
// where `expected` is the reference at the original dtypes and `anchor` the reference on inputs
// upcast to float64. Integer, bool and `exact` outputs must equal `expected` element for element.
// Empty outputs pass.
#ifndef LIBMKB_JUDGE_COMPARE_H_
#define LIBMKB_JUDGE_COMPARE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "libmkb/judge/tensor_ref.h"
#include "mkb/v1/problem.pb.h"

namespace mkb {

struct AnchorTolerance {
  double allowance_factor = 3.0;
  double eps_scale = 1.0;
};

// The problem's TolerancePolicy with the specification's defaults for zero fields.
AnchorTolerance ToleranceOf(const v1::TolerancePolicy& policy);

struct TensorComparison {
  bool passed = false;
  bool exact = false;
  int64_t numel = 0;
  double max_error = 0;        // float: max|out - anchor|; exact: max|out - expected|
  double reference_error = 0;  // max|expected - anchor| (float only)
  double max_abs_anchor = 0;   // over finite anchor elements
  double allowance = 0;        // the bound max_error is held to (0 for exact)
  int64_t count_over = 0;      // elements over the allowance / differing
  int64_t nan_count = 0;       // NaN elements of `out`
  int64_t worst_index = -1;    // row-major index of the largest error (first NaN when any)
  double worst_value = 0;      // out there
  double worst_anchor = 0;     // anchor (or expected, when exact) there
};

// Shape, dtype or device disagreements are InvalidArgumentError (the caller checks structure
// first); the comparison itself never fails on values.
absl::StatusOr<TensorComparison> CompareToAnchor(const TensorRef& out, const TensorRef& expected,
                                                 const TensorRef& anchor,
                                                 const AnchorTolerance& tolerance);
absl::StatusOr<TensorComparison> CompareExact(const TensorRef& out, const TensorRef& expected);

// Whether two tensors of the same shape and dtype hold the same bits in every element
// (the "inputs unmodified" check).
absl::StatusOr<bool> SameContents(const TensorRef& a, const TensorRef& b);

// Device implementations of the three operations. The CPU one is built in; the CUDA one lives in
// libmkb_cuda and registers itself (RegisterCudaTensorOps) when that library is loaded.
class DeviceTensorOps {
 public:
  virtual ~DeviceTensorOps() = default;
  virtual absl::StatusOr<TensorComparison> CompareToAnchor(const TensorRef& out,
                                                           const TensorRef& expected,
                                                           const TensorRef& anchor,
                                                           const AnchorTolerance& tolerance) = 0;
  virtual absl::StatusOr<TensorComparison> CompareExact(const TensorRef& out,
                                                        const TensorRef& expected) = 0;
  virtual absl::StatusOr<bool> SameContents(const TensorRef& a, const TensorRef& b) = 0;
};

// Installs the implementation used for CUDA tensors (not owned; must outlive every comparison).
void RegisterCudaTensorOps(DeviceTensorOps* ops);

// Element decoding shared by the CPU implementation and tests: the value of one element.
double DecodeElement(const void* element, v1::DType dtype);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_COMPARE_H_
