// The runtime audits of SPEC §3, from the GPU activity of the timed calls: a kernel written in
// the variant's DSL ran on every call; the share of GPU time in library / ATen kernels; no
// CUDA Graph launches; the same kernel set on every call; and no time below the problem's
// physical floor.
#ifndef LIBMKB_JUDGE_RUNTIME_AUDIT_H_
#define LIBMKB_JUDGE_RUNTIME_AUDIT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "mkb/v1/judge.pb.h"
#include "mkb/v1/problem.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

// Who wrote a kernel. On a GPU the launch monitor (cuda/launch_monitor.h) says who loaded each
// launched kernel's module, and that decides; by name alone (traces without it, tests), a kernel
// that is neither the judge's, ATen's nor a vendor library's counts as the candidate's.
enum class KernelOrigin { kDsl, kAten, kLibrary, kJudge, kRaw };
KernelOrigin ClassifyKernel(absl::string_view name);
// A record's origin: the launch monitor's (ActivityRecord.origin: who loaded the kernel's
// module) when present, else ClassifyKernel of its name.
KernelOrigin OriginOf(const v1::ActivityRecord& record);
const char* KernelOriginName(KernelOrigin origin);

struct RuntimeAuditOptions {
  bool require_dsl_kernel = true;    // every call must run one (GPU judging)
  double library_share_limit = 0.5;  // of kernel time, above which a finding is raised
  double floor_ms = 0;               // the physical floor; 0 = not checked
};

// Findings over the traces of the kernel's timed calls (not the eager baseline's).
std::vector<v1::AuditFinding> AuditKernelCalls(const std::vector<v1::CallTrace>& calls,
                                               const RuntimeAuditOptions& options);

// The DSL rule and the launch policy over the launch monitor's counts of one call (SPEC §2):
// kernels of a module the DSL's runtime did not load (runtime.raw_module), a CUDA Graph launch
// (runtime.cuda_graph), launches while no call ran (runtime.background_launch), and, where
// `require_dsl_kernel` and the call returned, no launch of the DSL's (runtime.no_dsl_kernel).
// Nothing for a call no monitor watched. Findings are violations of `phase`, before any policy.
std::vector<v1::AuditFinding> AuditLaunches(const v1::LaunchCounts& launches, v1::JudgePhase phase,
                                            bool call_returned, bool require_dsl_kernel);

// The knockout draw (SPEC §2): its DSL launches were replaced by a no-op, and outputs that
// still pass the correctness rule (`outputs_passed`) depend on nothing the DSL computed
// (runtime.dsl_result_unused). Nothing when no launch was knocked out (the every-call rule
// reports a missing DSL kernel) or no monitor watched the call.
std::optional<v1::AuditFinding> AuditKnockout(const v1::LaunchCounts& launches,
                                              bool outputs_passed);

// The judge's own GPU work (its draws, references, copies) ran out of device memory. The
// kernel's failure (runtime.gpu_memory_exhausted, a violation of `phase`) when kernel.py's import
// had begun and the memory held outside the judge (total - free - judge_bytes: the kernel's
// process, and any other on the GPU) exceeds the judge's own footprint (its inputs, references,
// float64 anchors and copies): a kernel that hoards the GPU would otherwise turn its evaluation
// into the judge's error, retried and never counted. Otherwise nullopt, the judge's failure (an
// infrastructure error): before the import nothing of the kernel's existed, and a judge that
// needs most of the GPU for itself ran out on a GPU too small for the problem, whatever an honest
// kernel beside it holds. Bytes as cudaMemGetInfo and the judge's allocators report them.
std::optional<v1::AuditFinding> AuditJudgeOutOfMemory(bool kernel_loaded, v1::JudgePhase phase,
                                                      double free_bytes, double total_bytes,
                                                      double judge_bytes, absl::string_view error);

// The least time the workload can take on this device: the larger of its minimum bytes over the
// copy bandwidth and its flops over the peak arithmetic rate, in ms. Bandwidth in bytes/s,
// rate in flop/s; the caller passes ceilings (measured copy bandwidth with a margin, the
// fastest tensor-core rate), so that an honest kernel can never land below the floor.
double PhysicalFloorMs(const v1::RooflineFacts& roofline, double bandwidth_bytes_per_s,
                       double peak_flops_per_s);

// The floor the judge applies on a GPU whose copy bandwidth it measured: PhysicalFloorMs with
// the measured bandwidth taken 25% higher and 10 PFLOP/s (above every tensor-core rate of current
// GPUs), so that only the impossible is rejected.
double JudgeFloorMs(const v1::RooflineFacts& roofline, double measured_bandwidth_bytes_per_s);

// Distinct kernel names of a trace, in first-launch order.
std::vector<std::string> KernelNames(const v1::CallTrace& call);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_RUNTIME_AUDIT_H_
