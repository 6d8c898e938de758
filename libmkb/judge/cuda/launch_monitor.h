// The worker's launch monitor (SPEC §3 "Runtime audits", docs/judge.md): CUPTI callbacks on the
// CUDA driver and runtime APIs that record who loaded every module, attribute every kernel
// launch to an origin, count launches per call (and outside calls), and, for the knockout draw,
// replace the launches of the variant's DSL kernels with a no-op kernel.
//
// Origins of a module: the DSL's runtime (the harness marks the DSL's own loader calls with
// DslLoaderScope, or the loading code is a native library of the DSL's toolchain), the CUDA
// runtime (ATen and vendor libraries load their kernels through it), the judge itself, or
// anything else: a raw driver-API module (cuModuleLoadData from the kernel's code, a library
// loaded by ctypes), which the DSL rule forbids.
#ifndef LIBMKB_JUDGE_CUDA_LAUNCH_MONITOR_H_
#define LIBMKB_JUDGE_CUDA_LAUNCH_MONITOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mkb/v1/judge.pb.h"

namespace mkb::cuda {

enum class LaunchOrigin { kDsl, kRaw, kLibrary, kJudge };
const char* LaunchOriginName(LaunchOrigin origin);

// The process-wide monitor. Methods are thread-safe; BeginCall / EndCall bracket one call of
// solve on the harness's thread.
class LaunchMonitor {
 public:
  // Subscribes to CUPTI's callbacks (the one subscriber a process may have) the first time; the
  // calling thread is the harness's (its launches between calls are the judge's own).
  // `cupti_dirs` as for CuptiActivitySource; `dsl_native_dirs`: directories whose shared
  // libraries are the DSL's own runtime (their module loads are the DSL's).
  // FailedPreconditionError when another tool holds CUPTI's callbacks.
  static absl::StatusOr<LaunchMonitor*> Start(const std::vector<std::string>& cupti_dirs,
                                              const std::vector<std::string>& dsl_native_dirs);

  // Starts counting one call; with `knockout`, the DSL's launches in it run a no-op kernel
  // instead (loaded on first use, in the calling thread's current context).
  absl::Status BeginCall(bool knockout);
  v1::LaunchCounts EndCall();

  // Marks the calling thread's work as the DSL loader's / the judge's until the matching Leave.
  void EnterDslLoader();
  void LeaveDslLoader();
  void EnterJudge();
  void LeaveJudge();

  // Turns the callbacks off (the parity pass: nothing between the kernel and its timing) and on
  // again. While off, EndCall's counts say monitored = false.
  absl::Status SetEnabled(bool enabled);

  // Launches outside any call from threads other than the harness's, since Start.
  int64_t background_launches() const;

  // Sets each record's origin from the launch it came from (its correlation id).
  void Annotate(v1::CallTrace* trace) const;

 private:
  LaunchMonitor() = default;  // the one instance lives as long as the process (CUPTI calls back
                              // until exit)
};

}  // namespace mkb::cuda

#endif  // LIBMKB_JUDGE_CUDA_LAUNCH_MONITOR_H_
