#include "libmkb/judge/compare.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#ifdef MKB_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "libmkb/judge/cuda/device.h"
#endif

namespace {

using mkb::TensorRef;
using mkb::v1::DType;

template <typename T>
TensorRef Ref(const std::vector<T>& data, DType dtype, std::vector<int64_t> shape = {}) {
  TensorRef t;
  t.data = data.data();
  t.dtype = dtype;
  t.shape = shape.empty() ? std::vector<int64_t>{static_cast<int64_t>(data.size())} : shape;
  t.strides.resize(t.shape.size());
  int64_t stride = 1;
  for (size_t i = t.shape.size(); i-- > 0;) {
    t.strides[i] = stride;
    stride *= t.shape[i];
  }
  return t;
}

uint16_t Bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace

TEST_CASE("the allowance is 3 x max(reference error, eps x max|anchor|)") {
  // anchor max |a| = 4, bf16 eps 2^-7: eps term 0.03125; reference error 0.01 -> allowance 0.09375.
  std::vector<double> anchor = {1.0, -4.0, 2.0, 0.5};
  std::vector<float> expected = {1.01f, -4.0f, 2.0f, 0.5f};
  std::vector<uint16_t> out = {Bf16(1.0f), Bf16(-4.0f), Bf16(2.0f), Bf16(0.5f)};
  auto r = mkb::CompareToAnchor(Ref(out, mkb::v1::BFLOAT16), Ref(expected, mkb::v1::FLOAT32),
                                Ref(anchor, mkb::v1::FLOAT64), mkb::AnchorTolerance{});
  REQUIRE(r.ok());
  CHECK(r->passed);
  CHECK_THAT(r->allowance, Catch::Matchers::WithinRel(3 * 4.0 * 0.0078125, 1e-12));
  CHECK_THAT(r->reference_error, Catch::Matchers::WithinAbs(0.01, 1e-6));

  // 1.125 is 0.125 from the anchor: over the allowance.
  out[0] = Bf16(1.125f);
  r = mkb::CompareToAnchor(Ref(out, mkb::v1::BFLOAT16), Ref(expected, mkb::v1::FLOAT32),
                           Ref(anchor, mkb::v1::FLOAT64), mkb::AnchorTolerance{});
  REQUIRE(r.ok());
  CHECK_FALSE(r->passed);
  CHECK(r->count_over == 1);
  CHECK(r->worst_index == 0);
  CHECK(r->max_error == 0.125);
}

TEST_CASE("a larger reference error widens the allowance") {
  std::vector<double> anchor = {1.0, 1.0};
  std::vector<float> expected = {1.5f, 1.0f};  // the reference itself is 0.5 off
  std::vector<float> out = {2.4f, 1.0f};       // 1.4 off: within 3 x 0.5
  auto r = mkb::CompareToAnchor(Ref(out, mkb::v1::FLOAT32), Ref(expected, mkb::v1::FLOAT32),
                                Ref(anchor, mkb::v1::FLOAT64), mkb::AnchorTolerance{});
  REQUIRE(r.ok());
  CHECK(r->passed);
  CHECK_THAT(r->allowance, Catch::Matchers::WithinAbs(1.5, 1e-9));
}

TEST_CASE("any NaN fails, and an empty tensor passes") {
  std::vector<double> anchor = {1.0, 2.0};
  std::vector<float> expected = {1.0f, 2.0f};
  std::vector<float> out = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  auto r = mkb::CompareToAnchor(Ref(out, mkb::v1::FLOAT32), Ref(expected, mkb::v1::FLOAT32),
                                Ref(anchor, mkb::v1::FLOAT64), mkb::AnchorTolerance{});
  REQUIRE(r.ok());
  CHECK_FALSE(r->passed);
  CHECK(r->nan_count == 1);
  CHECK(r->worst_index == 1);
  std::vector<float> none;
  auto empty = mkb::CompareToAnchor(
      Ref(none, mkb::v1::FLOAT32, {0, 4}), Ref(none, mkb::v1::FLOAT32, {0, 4}),
      Ref(std::vector<double>{}, mkb::v1::FLOAT64, {0, 4}), mkb::AnchorTolerance{});
  REQUIRE(empty.ok());
  CHECK(empty->passed);
}

TEST_CASE("integers are compared exactly") {
  std::vector<int32_t> expected = {1, 2, 3, 4};
  std::vector<int32_t> out = {1, 2, 3, 4};
  auto r = mkb::CompareExact(Ref(out, mkb::v1::INT32), Ref(expected, mkb::v1::INT32));
  REQUIRE(r.ok());
  CHECK(r->passed);
  out[2] = 5;
  r = mkb::CompareExact(Ref(out, mkb::v1::INT32), Ref(expected, mkb::v1::INT32));
  REQUIRE(r.ok());
  CHECK_FALSE(r->passed);
  CHECK(r->count_over == 1);
  CHECK(r->worst_index == 2);
  CHECK(r->worst_value == 5);
  CHECK(r->worst_anchor == 3);
}

TEST_CASE("fp8 and half decode as torch does") {
  const uint8_t e4m3_one = 0x38, e4m3_max = 0x7e, e4m3_nan = 0x7f, e4m3_min_subnormal = 0x01;
  CHECK(mkb::DecodeElement(&e4m3_one, mkb::v1::FLOAT8_E4M3FN) == 1.0);
  CHECK(mkb::DecodeElement(&e4m3_max, mkb::v1::FLOAT8_E4M3FN) == 448.0);
  CHECK(std::isnan(mkb::DecodeElement(&e4m3_nan, mkb::v1::FLOAT8_E4M3FN)));
  CHECK(mkb::DecodeElement(&e4m3_min_subnormal, mkb::v1::FLOAT8_E4M3FN) == std::ldexp(1.0, -9));
  const uint8_t e5m2_two = 0x40;
  CHECK(mkb::DecodeElement(&e5m2_two, mkb::v1::FLOAT8_E5M2) == 2.0);
  const uint16_t half_third = 0x3555;
  CHECK_THAT(mkb::DecodeElement(&half_third, mkb::v1::FLOAT16),
             Catch::Matchers::WithinAbs(0.33325195, 1e-7));
}

TEST_CASE("strided views compare element by element") {
  std::vector<float> base = {1, 100, 2, 100, 3, 100};  // every other element is padding
  TensorRef strided = Ref(base, mkb::v1::FLOAT32, {3});
  strided.strides = {2};
  std::vector<float> contiguous = {1, 2, 3};
  auto same = mkb::SameContents(strided, Ref(contiguous, mkb::v1::FLOAT32));
  REQUIRE(same.ok());
  CHECK(*same);
  contiguous[1] = 7;
  CHECK_FALSE(*mkb::SameContents(strided, Ref(contiguous, mkb::v1::FLOAT32)));
}

TEST_CASE("mismatched shapes are an argument error, not a verdict") {
  std::vector<float> a = {1, 2}, b = {1, 2, 3};
  auto r = mkb::CompareExact(Ref(a, mkb::v1::FLOAT32), Ref(b, mkb::v1::FLOAT32));
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
}

#ifdef MKB_HAVE_CUDA
TEST_CASE("device comparisons agree with the host's", "[gpu]") {
  if (mkb::cuda::DeviceCount() == 0) SKIP("no CUDA device");
  mkb::cuda::RegisterDeviceTensorOps();
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  const int64_t n = 1 << 20;
  std::vector<double> anchor(n);
  std::vector<float> expected(n);
  std::vector<uint16_t> out(n);
  for (int64_t i = 0; i < n; ++i) {
    anchor[i] = 4 * normal(rng);
    expected[i] = static_cast<float>(anchor[i]);
    out[i] = Bf16(static_cast<float>(anchor[i] + (i == 12345 ? 1.0 : 0.0)));
  }
  out[777] = Bf16(std::numeric_limits<float>::quiet_NaN());
  auto upload = [](const void* host, size_t bytes) {
    void* device = nullptr;
    REQUIRE(cudaMalloc(&device, bytes) == cudaSuccess);
    REQUIRE(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    return device;
  };
  void* d_out = upload(out.data(), n * 2);
  void* d_expected = upload(expected.data(), n * 4);
  void* d_anchor = upload(anchor.data(), n * 8);
  auto on_device = [](TensorRef t, void* data) {
    t.data = data;
    t.device_type = kDLCUDA;
    return t;
  };
  const TensorRef ho = Ref(out, mkb::v1::BFLOAT16), he = Ref(expected, mkb::v1::FLOAT32),
                  ha = Ref(anchor, mkb::v1::FLOAT64);
  auto host = mkb::CompareToAnchor(ho, he, ha, mkb::AnchorTolerance{});
  auto device = mkb::CompareToAnchor(on_device(ho, d_out), on_device(he, d_expected),
                                     on_device(ha, d_anchor), mkb::AnchorTolerance{});
  REQUIRE(host.ok());
  REQUIRE(device.ok());
  CHECK(device->passed == host->passed);
  CHECK(device->nan_count == host->nan_count);
  CHECK(device->count_over == host->count_over);
  CHECK(device->worst_index == host->worst_index);
  CHECK(device->allowance == host->allowance);
  CHECK(device->reference_error == host->reference_error);
  auto same = mkb::SameContents(on_device(ho, d_out), on_device(ho, d_out));
  REQUIRE(same.ok());
  CHECK(*same);
  cudaFree(d_out);
  cudaFree(d_expected);
  cudaFree(d_anchor);
}
#endif
