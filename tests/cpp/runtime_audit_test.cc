#include "libmkb/judge/runtime_audit.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <string>
#include <vector>

#include "libmkb/core/utf8.h"
#include "libmkb/judge/call_trace.h"

namespace {

mkb::v1::ActivityRecord Kernel(const std::string& name, uint64_t start, uint64_t end,
                               uint32_t graph = 0) {
  mkb::v1::ActivityRecord r;
  r.set_kind(mkb::v1::ActivityRecord::KERNEL);
  r.set_name(name);
  r.set_start_ns(start);
  r.set_end_ns(end);
  r.set_graph_id(graph);
  return r;
}

mkb::v1::CallTrace Call(std::vector<mkb::v1::ActivityRecord> records) {
  return mkb::SummarizeCall(records, 0);
}

bool Has(const std::vector<mkb::v1::AuditFinding>& findings, const std::string& code,
         mkb::v1::FindingSeverity severity) {
  for (const auto& f : findings) {
    if (f.code() == code && f.severity() == severity) return true;
  }
  return false;
}

// Replays scripted records as if the GPU had produced them.
class ReplayedActivity : public mkb::ActivitySource {
 public:
  absl::Status Start() override { return absl::OkStatus(); }
  absl::StatusOr<uint64_t> Now() override { return now; }
  absl::StatusOr<std::vector<mkb::v1::ActivityRecord>> Drain() override {
    std::vector<mkb::v1::ActivityRecord> out;
    out.swap(pending);
    return out;
  }
  uint64_t dropped_records() override { return dropped; }

  uint64_t now = 0;
  uint64_t dropped = 0;
  std::vector<mkb::v1::ActivityRecord> pending;
};

}  // namespace

TEST_CASE("kernel names tell who wrote a kernel") {
  CHECK(mkb::ClassifyKernel("kernel_cutlass_rmsnorm_0") == mkb::KernelOrigin::kDsl);
  CHECK(mkb::ClassifyKernel("default_function_kernel") == mkb::KernelOrigin::kDsl);
  CHECK(mkb::ClassifyKernel("fused_add_rmsnorm_kernel") == mkb::KernelOrigin::kDsl);
  CHECK(mkb::ClassifyKernel(
            "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEE") ==
        mkb::KernelOrigin::kAten);
  CHECK(mkb::ClassifyKernel("nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_TNT") ==
        mkb::KernelOrigin::kLibrary);
  CHECK(mkb::ClassifyKernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64") ==
        mkb::KernelOrigin::kLibrary);
  CHECK(mkb::ClassifyKernel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>") ==
        mkb::KernelOrigin::kLibrary);
  CHECK(mkb::ClassifyKernel("_ZN3mkb4cuda12_GLOBAL__N_112mkb_l2_flushEP5uint4lj") ==
        mkb::KernelOrigin::kJudge);
}

TEST_CASE("a call's span covers every stream; earlier records are left out") {
  std::vector<mkb::v1::ActivityRecord> records = {Kernel("mkb_l2_flush", 10, 90),
                                                  Kernel("a", 100, 200), Kernel("b", 150, 400)};
  records.back().set_stream(7);
  mkb::v1::ActivityRecord copy;
  copy.set_kind(mkb::v1::ActivityRecord::MEMCPY);
  copy.set_start_ns(400);
  copy.set_end_ns(500);
  records.push_back(copy);
  auto trace = mkb::SummarizeCall(records, 100);
  CHECK(trace.records_size() == 3);
  CHECK_THAT(trace.span_ms(), Catch::Matchers::WithinAbs(400e-6, 1e-12));
  CHECK_THAT(trace.kernel_sum_ms(), Catch::Matchers::WithinAbs(350e-6, 1e-12));
}

TEST_CASE("the tracer brackets a call and counts dropped records") {
  ReplayedActivity gpu;
  mkb::CallTracer tracer(&gpu);
  gpu.pending = {Kernel("stale", 1, 2)};
  gpu.now = 1000;
  REQUIRE(tracer.Begin().ok());
  gpu.pending = {Kernel("kernel_cutlass_x", 1100, 1600)};
  gpu.dropped = 3;
  auto trace = tracer.End();
  REQUIRE(trace.ok());
  CHECK(trace->records_size() == 1);
  CHECK(trace->dropped_records() == 3);
  CHECK_THAT(trace->span_ms(), Catch::Matchers::WithinAbs(500e-6, 1e-12));
}

TEST_CASE("runtime audits") {
  const auto dsl = Call(
      {Kernel("kernel_cutlass_main", 0, 900), Kernel("_ZN2at6native13reduce_kernel", 900, 1000)});
  const auto aten_only = Call({Kernel("_ZN2at6native13reduce_kernel", 0, 1000)});
  mkb::RuntimeAuditOptions options;

  SECTION("an honest DSL kernel raises nothing") {
    CHECK(mkb::AuditKernelCalls({dsl, dsl}, options).empty());
  }
  SECTION("a call without a DSL kernel is a violation") {
    auto findings = mkb::AuditKernelCalls({dsl, aten_only}, options);
    CHECK(Has(findings, "runtime.no_dsl_kernel", mkb::v1::SEVERITY_VIOLATION));
    CHECK(Has(findings, "runtime.kernel_set_changed", mkb::v1::SEVERITY_WARNING));
  }
  SECTION("library share over the limit") {
    auto findings = mkb::AuditKernelCalls({aten_only}, options);
    CHECK(Has(findings, "runtime.library_share", mkb::v1::SEVERITY_WARNING));
  }
  SECTION("graphs") {
    auto graph = Call({Kernel("kernel_cutlass_main", 0, 900, /*graph=*/4)});
    CHECK(Has(mkb::AuditKernelCalls({graph}, options), "runtime.cuda_graph",
              mkb::v1::SEVERITY_VIOLATION));
  }
  SECTION("a call whose records were dropped is a violation: its trace is incomplete") {
    // A launch flood past the tracer's buffers leaves only the records CUPTI kept; an audit
    // that used them (span, kernel sum, library share) would judge what the kernel chose.
    auto flooded = dsl;
    flooded.set_dropped_records(1);
    CHECK_FALSE(Has(mkb::AuditKernelCalls({dsl, dsl}, options), "runtime.dropped_records",
                    mkb::v1::SEVERITY_VIOLATION));
    CHECK(Has(mkb::AuditKernelCalls({dsl, flooded}, options), "runtime.dropped_records",
              mkb::v1::SEVERITY_VIOLATION));
  }
  SECTION("evidence quoting kernel names is valid UTF-8, cut where a character starts") {
    // A kernel's name is the bytes its module holds; the evidence keeps its first 600 bytes.
    std::string accents = "_ZN2at6native1x";  // an ATen name: no DSL kernel, listed as evidence
    for (int i = 0; i < 400; ++i) accents += "\xc3\xa9";
    for (const std::string& name : {accents, std::string("_ZN2at6native\xff\xfename")}) {
      auto findings = mkb::AuditKernelCalls({Call({Kernel(name, 0, 1000)})}, options);
      REQUIRE(Has(findings, "runtime.no_dsl_kernel", mkb::v1::SEVERITY_VIOLATION));
      for (const auto& f : findings) {
        INFO(f.code());
        CHECK_FALSE(mkb::FirstInvalidUtf8(f.evidence()).has_value());
        CHECK(f.evidence().size() <= 600);
      }
    }
  }
  SECTION("below the physical floor") {
    options.floor_ms = 0.01;  // 10 us; the calls take 1 us
    CHECK(Has(mkb::AuditKernelCalls({dsl}, options), "runtime.below_physical_floor",
              mkb::v1::SEVERITY_VIOLATION));
  }
}

TEST_CASE("the physical floor is the larger of bytes and flops over their ceilings") {
  mkb::v1::RooflineFacts roofline;
  roofline.set_min_bytes(4e9);
  roofline.set_flops(1e12);
  CHECK_THAT(mkb::PhysicalFloorMs(roofline, 4e12, 1e16), Catch::Matchers::WithinRel(1.0, 1e-12));
  roofline.set_flops(1e14);
  CHECK_THAT(mkb::PhysicalFloorMs(roofline, 4e12, 1e16), Catch::Matchers::WithinRel(10.0, 1e-12));
}

TEST_CASE("a call's launch counts decide the DSL rule and the launch policy") {
  auto codes = [](const std::vector<mkb::v1::AuditFinding>& findings) {
    std::vector<std::string> out;
    for (const auto& f : findings) {
      CHECK(f.severity() == mkb::v1::SEVERITY_VIOLATION);
      CHECK(f.phase() == mkb::v1::PHASE_TIMING);
      out.push_back(f.code());
    }
    return out;
  };
  mkb::v1::LaunchCounts honest;
  honest.set_monitored(true);
  honest.set_dsl(1);
  honest.set_library(3);  // ATen around the DSL kernel: allowed
  CHECK(mkb::AuditLaunches(honest, mkb::v1::PHASE_TIMING, true, true).empty());

  mkb::v1::LaunchCounts none = honest;
  none.set_dsl(0);
  CHECK(codes(mkb::AuditLaunches(none, mkb::v1::PHASE_TIMING, true, true)) ==
        std::vector<std::string>{"runtime.no_dsl_kernel"});
  CHECK(mkb::AuditLaunches(none, mkb::v1::PHASE_TIMING, true, false).empty());  // rule waived
  CHECK(mkb::AuditLaunches(none, mkb::v1::PHASE_TIMING, false, true).empty());  // it raised

  mkb::v1::LaunchCounts raw = honest;
  raw.set_raw(2);
  raw.add_raw_evidence("cuModuleLoadData called from /tmp/x.so");
  raw.set_graph(1);
  raw.set_background(4);
  const auto findings = mkb::AuditLaunches(raw, mkb::v1::PHASE_TIMING, true, true);
  CHECK(codes(findings) == std::vector<std::string>{"runtime.raw_module", "runtime.cuda_graph",
                                                    "runtime.background_launch"});
  CHECK_THAT(findings[0].evidence(), Catch::Matchers::ContainsSubstring("cuModuleLoadData"));
  CHECK_THAT(findings[2].evidence(), Catch::Matchers::ContainsSubstring("4 launch(es)"));

  mkb::v1::LaunchCounts unwatched = raw;
  unwatched.set_monitored(false);  // the CPU judge, or no CUPTI: nothing to decide from
  CHECK(mkb::AuditLaunches(unwatched, mkb::v1::PHASE_TIMING, true, true).empty());
  const auto in_correctness = mkb::AuditLaunches(none, mkb::v1::PHASE_CORRECTNESS, true, true);
  REQUIRE(in_correctness.size() == 1);
  CHECK(in_correctness[0].phase() == mkb::v1::PHASE_CORRECTNESS);
}

TEST_CASE("a knockout draw whose outputs still pass breaks the DSL rule") {
  mkb::v1::LaunchCounts knocked;
  knocked.set_monitored(true);
  knocked.set_dsl(2);
  knocked.set_knocked_out(2);
  auto f = mkb::AuditKnockout(knocked, /*outputs_passed=*/true);
  REQUIRE(f.has_value());
  CHECK(f->code() == "runtime.dsl_result_unused");
  CHECK(f->severity() == mkb::v1::SEVERITY_VIOLATION);
  CHECK(f->phase() == mkb::v1::PHASE_CORRECTNESS);
  CHECK_THAT(f->evidence(), Catch::Matchers::ContainsSubstring("2 DSL launch(es)"));
  CHECK_FALSE(mkb::AuditKnockout(knocked, /*outputs_passed=*/false).has_value());  // as it must
  mkb::v1::LaunchCounts nothing = knocked;
  nothing.set_knocked_out(0);  // no DSL launch: the every-call rule's to report
  CHECK_FALSE(mkb::AuditKnockout(nothing, true).has_value());
  mkb::v1::LaunchCounts unwatched = knocked;
  unwatched.set_monitored(false);
  CHECK_FALSE(mkb::AuditKnockout(unwatched, true).has_value());
}

TEST_CASE("the judge's own GPU work out of memory is the kernel's once its import began",
          "[runtime_audit]") {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  // Before kernel.py's import nothing of the kernel's exists: the judge's own failure.
  CHECK_FALSE(mkb::AuditJudgeOutOfMemory(false, mkb::v1::PHASE_STARTUP, 0.1 * kGiB, 140 * kGiB,
                                         2 * kGiB, "OutOfMemoryError")
                  .has_value());
  auto f = mkb::AuditJudgeOutOfMemory(true, mkb::v1::PHASE_CORRECTNESS, 0.06 * kGiB, 140 * kGiB,
                                      2 * kGiB, "OutOfMemoryError: CUDA out of memory");
  REQUIRE(f.has_value());
  CHECK(f->code() == "runtime.gpu_memory_exhausted");
  CHECK(f->severity() == mkb::v1::SEVERITY_VIOLATION);
  CHECK(f->phase() == mkb::v1::PHASE_CORRECTNESS);
  // The numbers: what was free, the judge's share, and the rest (the kernel's process).
  CHECK_THAT(f->message(), Catch::Matchers::ContainsSubstring("0.06 GiB free of 140.00 GiB"));
  CHECK_THAT(f->message(), Catch::Matchers::ContainsSubstring("2.00 GiB the judge's"));
  CHECK_THAT(f->message(), Catch::Matchers::ContainsSubstring("137.94 GiB the kernel's process"));
  CHECK_THAT(f->evidence(), Catch::Matchers::ContainsSubstring("CUDA out of memory"));
  // A judge that needs most of the GPU for itself (a GPU too small for the problem) ran out
  // beside a kernel holding less than the judge's footprint: the judge's failure, not the kernel's.
  CHECK_FALSE(mkb::AuditJudgeOutOfMemory(true, mkb::v1::PHASE_CORRECTNESS, 0.06 * kGiB, 80 * kGiB,
                                         73 * kGiB, "OutOfMemoryError")
                  .has_value());
  CHECK(mkb::AuditJudgeOutOfMemory(true, mkb::v1::PHASE_TIMING, 0.06 * kGiB, 80 * kGiB, 30 * kGiB,
                                   "OutOfMemoryError")
            .has_value());  // 49.94 GiB outside the judge's 30
}
