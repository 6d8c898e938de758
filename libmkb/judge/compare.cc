#include "libmkb/judge/compare.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "libmkb/model/names.h"

namespace mkb {
namespace {

std::atomic<DeviceTensorOps*> cuda_ops{nullptr};

float FloatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

double DecodeHalf(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double value;
  if (exponent == 0) {
    value = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    value = mantissa ? std::numeric_limits<double>::quiet_NaN()
                     : std::numeric_limits<double>::infinity();
  } else {
    value = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return sign ? -value : value;
}

// float8 e4m3fn: bias 7, no infinities, NaN = S.1111.111.
double DecodeE4M3(uint8_t b) {
  const int sign = b >> 7;
  const int exponent = (b >> 3) & 0xf;
  const int mantissa = b & 0x7;
  double value;
  if (exponent == 0xf && mantissa == 0x7) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    value = std::ldexp(mantissa, -9);
  } else {
    value = std::ldexp(8 + mantissa, exponent - 10);
  }
  return sign ? -value : value;
}

// float8 e5m2: bias 15, IEEE-style infinities and NaNs.
double DecodeE5M2(uint8_t b) { return DecodeHalf(static_cast<uint16_t>(b) << 8); }

absl::Status SameLayoutCheck(const TensorRef& a, const TensorRef& b, const char* what) {
  if (a.shape != b.shape) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shapes differ: ", a.Describe(), " vs ", b.Describe()));
  }
  if (a.device_type != b.device_type || a.device_id != b.device_id) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": tensors are on different devices"));
  }
  return absl::OkStatus();
}

DeviceTensorOps* OpsFor(const TensorRef& t) {
  return t.device_type == kDLCUDA ? cuda_ops.load() : nullptr;
}

absl::Status NoCuda() {
  return absl::FailedPreconditionError(
      "CUDA tensors cannot be compared: libmkb was built without CUDA, or the CUDA module "
      "(metakernelbench._cuda) is not loaded");
}

class CpuTensorOps final : public DeviceTensorOps {
 public:
  absl::StatusOr<TensorComparison> CompareToAnchor(const TensorRef& out, const TensorRef& expected,
                                                   const TensorRef& anchor,
                                                   const AnchorTolerance& tolerance) override {
    TensorComparison r;
    r.numel = out.numel();
    const char* o = static_cast<const char*>(out.data);
    const char* e = static_cast<const char*>(expected.data);
    const char* a = static_cast<const char*>(anchor.data);
    double worst = -1;
    for (int64_t i = 0; i < r.numel; ++i) {
      const double ov = DecodeElement(o + out.ByteOffsetOf(i), out.dtype);
      const double ev = DecodeElement(e + expected.ByteOffsetOf(i), expected.dtype);
      const double av = DecodeElement(a + anchor.ByteOffsetOf(i), anchor.dtype);
      if (std::isfinite(av)) r.max_abs_anchor = std::max(r.max_abs_anchor, std::fabs(av));
      const double ref_err = ErrorBetween(ev, av);
      if (!std::isnan(ref_err)) r.reference_error = std::max(r.reference_error, ref_err);
      if (std::isnan(ov)) {
        if (r.nan_count++ == 0) {
          worst = std::numeric_limits<double>::infinity();
          r.worst_index = i;
          r.worst_value = ov;
          r.worst_anchor = av;
        }
        continue;
      }
      const double err = ErrorBetween(ov, av);
      if (r.nan_count == 0 && err > worst) {
        worst = err;
        r.worst_index = i;
        r.worst_value = ov;
        r.worst_anchor = av;
      }
      r.max_error =
          std::max(r.max_error, std::isnan(err) ? std::numeric_limits<double>::infinity() : err);
    }
    r.allowance =
        tolerance.allowance_factor *
        std::max(r.reference_error, tolerance.eps_scale * Epsilon(out.dtype) * r.max_abs_anchor);
    if (r.nan_count > 0) r.max_error = std::numeric_limits<double>::quiet_NaN();
    for (int64_t i = 0; i < r.numel; ++i) {
      const double ov = DecodeElement(o + out.ByteOffsetOf(i), out.dtype);
      const double av = DecodeElement(a + anchor.ByteOffsetOf(i), anchor.dtype);
      const double err = ErrorBetween(ov, av);
      if (std::isnan(ov) || std::isnan(err) || err > r.allowance) ++r.count_over;
    }
    r.passed = r.count_over == 0;
    return r;
  }

  absl::StatusOr<TensorComparison> CompareExact(const TensorRef& out,
                                                const TensorRef& expected) override {
    TensorComparison r;
    r.exact = true;
    r.numel = out.numel();
    const char* o = static_cast<const char*>(out.data);
    const char* e = static_cast<const char*>(expected.data);
    const bool is_float = IsFloatingPoint(out.dtype);
    const int bytes = ElementBytes(out.dtype);
    for (int64_t i = 0; i < r.numel; ++i) {
      const char* op = o + out.ByteOffsetOf(i);
      const char* ep = e + expected.ByteOffsetOf(i);
      bool equal;
      double ov, ev;
      if (is_float) {
        ov = DecodeElement(op, out.dtype);
        ev = DecodeElement(ep, expected.dtype);
        equal = ov == ev || (std::isnan(ov) && std::isnan(ev));
        if (std::isnan(ov)) ++r.nan_count;
      } else {
        equal = std::memcmp(op, ep, bytes) == 0;
        ov = DecodeElement(op, out.dtype);
        ev = DecodeElement(ep, expected.dtype);
      }
      if (!equal) {
        const double err = std::isnan(ov) || std::isnan(ev)
                               ? std::numeric_limits<double>::infinity()
                               : std::fabs(ov - ev);
        if (r.count_over++ == 0 || err > r.max_error) {
          r.worst_index = i;
          r.worst_value = ov;
          r.worst_anchor = ev;
        }
        r.max_error = std::max(r.max_error, err);
      }
    }
    r.passed = r.count_over == 0;
    return r;
  }

  absl::StatusOr<bool> SameContents(const TensorRef& a, const TensorRef& b) override {
    const char* pa = static_cast<const char*>(a.data);
    const char* pb = static_cast<const char*>(b.data);
    const int bytes = ElementBytes(a.dtype);
    if (a.is_contiguous() && b.is_contiguous()) return std::memcmp(pa, pb, a.numel() * bytes) == 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      if (std::memcmp(pa + a.ByteOffsetOf(i), pb + b.ByteOffsetOf(i), bytes) != 0) return false;
    }
    return true;
  }

 private:
  // |x - y| with matching infinities counted as equal.
  static double ErrorBetween(double x, double y) {
    if (std::isinf(x) || std::isinf(y))
      return x == y ? 0.0 : std::numeric_limits<double>::infinity();
    return std::fabs(x - y);
  }
};

CpuTensorOps& CpuOps() {
  static CpuTensorOps ops;
  return ops;
}

}  // namespace

AnchorTolerance ToleranceOf(const v1::TolerancePolicy& policy) {
  AnchorTolerance tolerance;
  if (policy.allowance_factor() > 0) tolerance.allowance_factor = policy.allowance_factor();
  if (policy.eps_scale() > 0) tolerance.eps_scale = policy.eps_scale();
  return tolerance;
}

double DecodeElement(const void* element, v1::DType dtype) {
  const auto* p = static_cast<const unsigned char*>(element);
  switch (dtype) {
    case v1::FLOAT64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case v1::FLOAT32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case v1::FLOAT16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return DecodeHalf(h);
    }
    case v1::BFLOAT16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return FloatFromBits(static_cast<uint32_t>(h) << 16);
    }
    case v1::FLOAT8_E4M3FN:
      return DecodeE4M3(p[0]);
    case v1::FLOAT8_E5M2:
      return DecodeE5M2(p[0]);
    case v1::INT64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case v1::INT32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case v1::INT16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case v1::INT8:
      return static_cast<int8_t>(p[0]);
    case v1::UINT8:
      return p[0];
    case v1::BOOL:
      return p[0] != 0 ? 1.0 : 0.0;
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

void RegisterCudaTensorOps(DeviceTensorOps* ops) { cuda_ops.store(ops); }

absl::StatusOr<TensorComparison> CompareToAnchor(const TensorRef& out, const TensorRef& expected,
                                                 const TensorRef& anchor,
                                                 const AnchorTolerance& tolerance) {
  if (auto s = SameLayoutCheck(out, expected, "out vs expected"); !s.ok()) return s;
  if (auto s = SameLayoutCheck(out, anchor, "out vs anchor"); !s.ok()) return s;
  if (!IsFloatingPoint(out.dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("out: ", DTypeName(out.dtype), " is not floating point; compare it exactly"));
  }
  if (out.numel() == 0) {
    TensorComparison empty;
    empty.passed = true;
    return empty;
  }
  if (out.device_type == kDLCUDA) {
    DeviceTensorOps* ops = OpsFor(out);
    if (ops == nullptr) return NoCuda();
    return ops->CompareToAnchor(out, expected, anchor, tolerance);
  }
  return CpuOps().CompareToAnchor(out, expected, anchor, tolerance);
}

absl::StatusOr<TensorComparison> CompareExact(const TensorRef& out, const TensorRef& expected) {
  if (auto s = SameLayoutCheck(out, expected, "out vs expected"); !s.ok()) return s;
  if (out.dtype != expected.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "out vs expected: dtypes differ: ", out.Describe(), " vs ", expected.Describe()));
  }
  if (out.numel() == 0) {
    TensorComparison empty;
    empty.passed = true;
    empty.exact = true;
    return empty;
  }
  if (out.device_type == kDLCUDA) {
    DeviceTensorOps* ops = OpsFor(out);
    if (ops == nullptr) return NoCuda();
    return ops->CompareExact(out, expected);
  }
  return CpuOps().CompareExact(out, expected);
}

absl::StatusOr<bool> SameContents(const TensorRef& a, const TensorRef& b) {
  if (auto s = SameLayoutCheck(a, b, "same-contents check"); !s.ok()) return s;
  if (ElementBytes(a.dtype) != ElementBytes(b.dtype)) {
    return absl::InvalidArgumentError("same-contents check: element sizes differ");
  }
  if (a.numel() == 0) return true;
  if (a.device_type == kDLCUDA) {
    DeviceTensorOps* ops = OpsFor(a);
    if (ops == nullptr) return NoCuda();
    return ops->SameContents(a, b);
  }
  return CpuOps().SameContents(a, b);
}

}  // namespace mkb
