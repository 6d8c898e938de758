#include "libmkb/judge/runtime_audit.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "libmkb/core/utf8.h"

namespace mkb {
namespace {

// Substrings of vendor-library kernel names (cuBLAS / cuBLASLt, cuDNN, cuFFT, CUB, CUTLASS's
// prebuilt library kernels, PyTorch's bundled attention kernels).
constexpr absl::string_view kLibraryMarks[] = {
    "cublas",     "nvjet",        "xmma",          "cutlass::",  "_ZN7cutlass",
    "cutlass3x",  "cutlass_75",   "cutlass_80",    "cutlass_90", "cutlass_tensorop",
    "cudnn",      "cufft",        "regular_fft",   "vector_fft", "_ZN3cub",
    "cub::",      "splitKreduce", "gemv2",         "gemvx",      "gemmk1",
    "dot_kernel", "ampere_",      "volta_",        "turing_",    "sm80_",
    "sm90_",      "sm100_",       "pytorch_flash", "flash_fwd",  "flash_bwd",
    "fmha_",      "nccl",         "curand"};

// Substrings of ATen / c10 kernel names, mangled or not.
constexpr absl::string_view kAtenMarks[] = {"at::native",    "_ZN2at",     "at_cuda_detail",
                                            "c10::",         "_ZN3c10",    "elementwise_kernel",
                                            "reduce_kernel", "vectorized_"};

std::string Percent(double x) { return absl::StrFormat("%.1f%%", 100 * x); }

v1::AuditFinding Finding(const std::string& code, v1::FindingSeverity severity,
                         const std::string& message, const std::string& evidence) {
  v1::AuditFinding f;
  f.set_code(code);
  f.set_severity(severity);
  f.set_phase(v1::PHASE_TIMING);
  f.set_message(message);
  f.set_evidence(std::string(Utf8Prefix(ToValidUtf8(evidence), 600)));  // kernel names: any bytes
  return f;
}

v1::AuditFinding Violation(const std::string& code, v1::JudgePhase phase,
                           const std::string& message, const std::string& evidence = "") {
  v1::AuditFinding f = Finding(code, v1::SEVERITY_VIOLATION, message, evidence);
  f.set_phase(phase);
  return f;
}

}  // namespace

std::vector<v1::AuditFinding> AuditLaunches(const v1::LaunchCounts& launches, v1::JudgePhase phase,
                                            bool call_returned, bool require_dsl_kernel) {
  std::vector<v1::AuditFinding> out;
  if (!launches.monitored()) return out;
  if (launches.raw() > 0) {
    out.push_back(Violation(
        "runtime.raw_module", phase,
        "kernels of a module the DSL's runtime did not load ran (raw driver API, another "
        "compiler, a library loaded by hand)",
        std::string(Utf8Prefix(ToValidUtf8(absl::StrJoin(launches.raw_evidence(), "; ")), 400))));
  }
  if (launches.graph() > 0)
    out.push_back(Violation("runtime.cuda_graph", phase, "a CUDA Graph was launched"));
  if (launches.background() > 0) {
    out.push_back(Violation("runtime.background_launch", phase,
                            "kernels were launched while no call of solve was running",
                            absl::StrCat(launches.background(), " launch(es) outside calls")));
  }
  if (require_dsl_kernel && call_returned && launches.dsl() == 0) {
    out.push_back(Violation("runtime.no_dsl_kernel", phase,
                            "the call launched no kernel the variant's DSL runtime loaded"));
  }
  return out;
}

std::optional<v1::AuditFinding> AuditKnockout(const v1::LaunchCounts& launches,
                                              bool outputs_passed) {
  if (!launches.monitored() || launches.knocked_out() == 0 || !outputs_passed) return std::nullopt;
  return Violation(
      "runtime.dsl_result_unused", v1::PHASE_CORRECTNESS,
      "with the DSL's kernels replaced by a no-op, the outputs still passed: no returned output "
      "depends on what the DSL computed (the DSL rule, docs/judge.md)",
      absl::StrCat(launches.knocked_out(), " DSL launch(es) suppressed in a correctness draw"));
}

std::optional<v1::AuditFinding> AuditJudgeOutOfMemory(bool kernel_loaded, v1::JudgePhase phase,
                                                      double free_bytes, double total_bytes,
                                                      double judge_bytes, absl::string_view error) {
  const double others = std::max(0.0, total_bytes - free_bytes - judge_bytes);
  if (!kernel_loaded || others <= judge_bytes) return std::nullopt;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return Violation(
      "runtime.gpu_memory_exhausted", phase,
      absl::StrFormat(
          "the judge ran out of GPU memory for its own work (the problem's inputs, "
          "references and copies) while the kernel's process held more than the judge's "
          "whole footprint: %.2f GiB free of %.2f GiB, %.2f GiB the judge's, %.2f GiB "
          "the kernel's process (and any other on this GPU)",
          free_bytes / kGiB, total_bytes / kGiB, judge_bytes / kGiB, others / kGiB),
      std::string(error));
}

KernelOrigin OriginOf(const v1::ActivityRecord& record) {
  // The launch monitor's attribution (who loaded the module) when it ran; names otherwise.
  const std::string& o = record.origin();
  if (o == "dsl") return KernelOrigin::kDsl;
  if (o == "library") {
    return ClassifyKernel(record.name()) == KernelOrigin::kLibrary ? KernelOrigin::kLibrary
                                                                   : KernelOrigin::kAten;
  }
  if (o == "judge") return KernelOrigin::kJudge;
  if (o == "raw") return KernelOrigin::kRaw;
  return ClassifyKernel(record.name());
}

KernelOrigin ClassifyKernel(absl::string_view name) {
  if (absl::StrContains(name, "mkb_l2_flush") || absl::StartsWith(name, "_ZN3mkb"))
    return KernelOrigin::kJudge;
  if (absl::StartsWith(name, "kernel_cutlass_")) return KernelOrigin::kDsl;  // CuTe DSL
  for (absl::string_view mark : kLibraryMarks) {
    if (absl::StrContains(name, mark)) return KernelOrigin::kLibrary;
  }
  for (absl::string_view mark : kAtenMarks) {
    if (absl::StrContains(name, mark)) return KernelOrigin::kAten;
  }
  return KernelOrigin::kDsl;
}

const char* KernelOriginName(KernelOrigin origin) {
  switch (origin) {
    case KernelOrigin::kDsl:
      return "dsl";
    case KernelOrigin::kAten:
      return "aten";
    case KernelOrigin::kLibrary:
      return "library";
    case KernelOrigin::kJudge:
      return "judge";
    case KernelOrigin::kRaw:
      return "raw";
  }
  return "";
}

std::vector<std::string> KernelNames(const v1::CallTrace& call) {
  std::vector<std::string> names;
  for (const v1::ActivityRecord& r : call.records()) {
    if (r.kind() == v1::ActivityRecord::KERNEL &&
        std::find(names.begin(), names.end(), r.name()) == names.end()) {
      names.push_back(r.name());
    }
  }
  return names;
}

std::vector<v1::AuditFinding> AuditKernelCalls(const std::vector<v1::CallTrace>& calls,
                                               const RuntimeAuditOptions& options) {
  std::vector<v1::AuditFinding> findings;
  if (calls.empty()) return findings;
  int calls_without_dsl = 0;
  int raw_kernels = 0;
  std::string example_raw;
  std::string example_without_dsl;
  double library_ns = 0, kernel_ns = 0;
  std::set<uint32_t> graphs;
  std::set<std::set<std::string>> kernel_sets;
  uint64_t dropped = 0;
  for (const v1::CallTrace& call : calls) {
    bool dsl = false;
    std::set<std::string> names;
    for (const v1::ActivityRecord& r : call.records()) {
      if (r.graph_id() != 0) graphs.insert(r.graph_id());
      if (r.kind() != v1::ActivityRecord::KERNEL) continue;
      const KernelOrigin origin = OriginOf(r);
      if (origin == KernelOrigin::kJudge) continue;
      names.insert(r.name());
      const double ns = static_cast<double>(r.end_ns() - r.start_ns());
      kernel_ns += ns;
      if (origin == KernelOrigin::kDsl) dsl = true;
      if (origin == KernelOrigin::kRaw && raw_kernels++ == 0) example_raw = r.name();
      if (origin == KernelOrigin::kAten || origin == KernelOrigin::kLibrary) library_ns += ns;
    }
    kernel_sets.insert(names);
    dropped += call.dropped_records();
    if (!dsl) {
      if (calls_without_dsl++ == 0) {
        example_without_dsl = names.empty() ? "no kernels at all" : absl::StrJoin(names, ", ");
      }
    }
  }
  if (calls_without_dsl > 0) {
    findings.push_back(Finding(
        "runtime.no_dsl_kernel",
        options.require_dsl_kernel ? v1::SEVERITY_VIOLATION : v1::SEVERITY_WARNING,
        absl::StrCat(
            calls_without_dsl, " of ", calls.size(),
            " timed calls launched no kernel written in the variant's DSL (every call must)"),
        absl::StrCat("kernels of such a call: ", example_without_dsl)));
  }
  if (raw_kernels > 0) {
    findings.push_back(
        Finding("runtime.raw_module", v1::SEVERITY_VIOLATION,
                absl::StrCat(raw_kernels,
                             " kernel launches came from modules the DSL's runtime did not "
                             "load (raw driver API, another compiler, a hand-loaded library)"),
                absl::StrCat("e.g. ", example_raw)));
  }
  if (kernel_ns > 0 && library_ns / kernel_ns > options.library_share_limit) {
    findings.push_back(Finding(
        "runtime.library_share", v1::SEVERITY_WARNING,
        absl::StrCat("library / ATen kernels took ", Percent(library_ns / kernel_ns),
                     " of the kernel's GPU time (limit ", Percent(options.library_share_limit),
                     "): the main work must be the DSL's"),
        ""));
  }
  if (!graphs.empty()) {
    findings.push_back(Finding("runtime.cuda_graph", v1::SEVERITY_VIOLATION,
                               "work was launched from a CUDA Graph, which the contract forbids",
                               absl::StrCat(graphs.size(), " graph id(s) in the trace")));
  }
  if (kernel_sets.size() > 1) {
    findings.push_back(Finding(
        "runtime.kernel_set_changed", v1::SEVERITY_WARNING,
        absl::StrCat("the set of kernels differed between timed calls (", kernel_sets.size(),
                     " distinct sets); a kernel must do the same work on every call"),
        ""));
  }
  // A trace with holes vouches for nothing: the span, the kernel sum, the library share and the
  // kernel sets would be computed from the records CUPTI kept, which a kernel flooding launches
  // past the tracer's bounded buffers chooses. Honest kernels launch nowhere near that many.
  if (dropped > 0) {
    findings.push_back(Finding(
        "runtime.dropped_records", v1::SEVERITY_VIOLATION,
        absl::StrCat(dropped,
                     " activity records of the timed calls were dropped (more launches than the "
                     "tracer holds): the GPU's record of these calls is incomplete"),
        ""));
  }
  if (options.floor_ms > 0) {
    std::vector<double> spans;
    for (const v1::CallTrace& call : calls) spans.push_back(call.span_ms());
    std::nth_element(spans.begin(), spans.begin() + spans.size() / 2, spans.end());
    const double median = spans[spans.size() / 2];
    if (median <= 0) {
      findings.push_back(
          Finding("runtime.no_gpu_work", v1::SEVERITY_VIOLATION,
                  "the median GPU span is zero: the timed calls did no work the GPU recorded", ""));
    } else if (median < options.floor_ms) {
      findings.push_back(Finding(
          "runtime.below_physical_floor", v1::SEVERITY_VIOLATION,
          absl::StrFormat("the median GPU span %.4g ms is below the problem's physical floor "
                          "%.4g ms on this GPU: the work cannot have been done",
                          median, options.floor_ms),
          ""));
    }
  }
  return findings;
}

double PhysicalFloorMs(const v1::RooflineFacts& roofline, double bandwidth_bytes_per_s,
                       double peak_flops_per_s) {
  double floor_s = 0;
  if (bandwidth_bytes_per_s > 0)
    floor_s = std::max(floor_s, roofline.min_bytes() / bandwidth_bytes_per_s);
  if (peak_flops_per_s > 0) floor_s = std::max(floor_s, roofline.flops() / peak_flops_per_s);
  return floor_s * 1e3;
}

double JudgeFloorMs(const v1::RooflineFacts& roofline, double measured_bandwidth_bytes_per_s) {
  constexpr double kBandwidthMargin = 1.25;
  constexpr double kPeakFlopsCeiling = 1e16;
  if (measured_bandwidth_bytes_per_s <= 0) return 0;
  return PhysicalFloorMs(roofline, kBandwidthMargin * measured_bandwidth_bytes_per_s,
                         kPeakFlopsCeiling);
}

}  // namespace mkb
