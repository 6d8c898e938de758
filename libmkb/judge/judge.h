// mkb::Judge: evaluates a kernel.py on a problem (SPEC §3) and returns its Verdict.
//
// Each evaluation runs in a fresh judge host process (`python -m metakernelbench.judge.host`):
// the host runs the reference and decides, with this library's comparisons and verdict rules;
// it forks the sandboxed worker that runs the kernel. A kernel that fails is a Verdict; an
// error status means the judge itself could not evaluate (the host could not start, died, or
// ran past its deadline).
//
// A started host spends most of its start importing torch and the variant's DSL (about 10 s
// on the H200 machine). With host_template, each host is forked instead from a template per
// DSL that did those imports once (python/metakernelbench/judge/template.py): ready in
// milliseconds. With keep_warm_host alone, the judge starts the next host for the same DSL as
// soon as one is taken. Either way each host serves one evaluation only.
//
// GPUs are slots (device_pool.h): an evaluation waits for a free GPU of JudgeOptions::devices
// and holds it until its verdict is in; its host is started with CUDA_VISIBLE_DEVICES naming
// that GPU alone (a forked host sets it before CUDA is touched), and warm hosts are kept per
// (DSL, GPU), templates per DSL. The time spent waiting is the verdict's phase_times.queue_s;
// the GPU that judged it is in its environment.
//
// The request travels to the host as a length-prefixed frame on its stdin, followed by a frame
// holding a fresh random key; the verdict comes back as one length-prefixed frame on a private
// pipe, tagged with HMAC-SHA256 under that key. The caller accepts exactly that one frame. The
// host reads the key only after it has forked the kernel's worker (whose stdin is /dev/null),
// so no code of the kernel's can tag a verdict. The host's environment holds only the
// variables of HostEnvironmentAllowed (API keys and other secrets never reach it).
#ifndef LIBMKB_JUDGE_JUDGE_H_
#define LIBMKB_JUDGE_JUDGE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libmkb/judge/device_pool.h"
#include "mkb/v1/judge.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

struct JudgeOptions {
  // An interpreter that can import metakernelbench (and torch).
  std::string python = "python3";
  // Environment entries for the host, "KEY=VALUE" (e.g. PYTHONPATH, CUDA_VISIBLE_DEVICES),
  // added to this process's environment, or the whole environment when inherit_environment is
  // false (the Python binding passes os.environ so: a module loaded with RTLD_DEEPBIND must not
  // read libc's `environ` directly). Either way only the names HostEnvironmentAllowed accepts
  // reach the host.
  std::vector<std::string> environment;
  bool inherit_environment = true;
  // Time the host may take beyond the request's total_timeout_s before it is killed.
  absl::Duration deadline_margin = absl::Seconds(120);
  // Keep one started host waiting for the next evaluation (it holds an interpreter with torch
  // imported, ~0.5 GB of host memory, until used or the Judge is destroyed).
  bool keep_warm_host = false;
  // Fork each evaluation's host from a host template, one per DSL: an interpreter that has
  // imported torch and the DSL once and never touches CUDA (python/metakernelbench/judge/
  // template.py). A host is then ready in milliseconds instead of seconds. The template runs
  // nothing of any evaluation, so a forked host is as fresh as a started one. Takes the place
  // of keep_warm_host's spare hosts; a template that fails is retired, and that evaluation
  // starts its own host.
  bool host_template = false;
  // The GPUs evaluations may use, as CUDA_VISIBLE_DEVICES names them ("0", "1", "GPU-..."):
  // one evaluation per GPU at a time. Empty: every GPU the host's environment makes visible
  // (VisibleGpus); none visible (a CPU machine): one slot, CUDA_VISIBLE_DEVICES left alone.
  std::vector<std::string> devices;
};

// Whether an environment variable may reach the judge host (and so the worker forked from it):
// the interpreter's and the libraries' own settings (PATH, PYTHON*, LD_LIBRARY_PATH, CUDA_*,
// NVIDIA_*, TORCH_*, PYTORCH_*, TVM_*, CUTE_DSL_*, MKB_*, locale, ...). Credentials (API keys,
// tokens) and everything else are dropped.
bool HostEnvironmentAllowed(absl::string_view name);

// The frame of the host protocol: "MKB1", a little-endian uint32 length, the bytes, and (for
// the verdict) the 32-byte HMAC-SHA256 tag of the bytes under the evaluation's key.
std::string EncodeHostFrame(absl::string_view payload, absl::string_view key);

class HostProcess;
class HostTemplate;

// Thread-safe: concurrent evaluations each get their own host. Not copyable or movable (it may
// own a waiting host process).
class Judge {
 public:
  explicit Judge(JudgeOptions options = {});
  Judge(const Judge&) = delete;
  Judge& operator=(const Judge&) = delete;
  ~Judge();  // ends a waiting host

  // Blocks until the verdict is in. InvalidArgumentError for a malformed request (field named).
  absl::StatusOr<v1::Verdict> Evaluate(const v1::EvaluationRequest& request) const;

  const JudgeOptions& options() const { return options_; }
  // The GPU slots evaluations are spread over (options().devices, or the visible GPUs).
  const std::vector<std::string>& devices() const { return pool_.devices(); }
  // With host_template: starts the DSL's template now (its imports take seconds), so that the
  // first evaluation does not wait for all of them. Nothing otherwise.
  void Prewarm(v1::Dsl dsl) const;

 private:
  // A host for `dsl` whose CUDA_VISIBLE_DEVICES is the lease's GPU.
  absl::StatusOr<std::unique_ptr<HostProcess>> TakeHost(v1::Dsl dsl,
                                                        const DevicePool::Lease& gpu) const;

  // A host forked from the DSL's template (started on first use).
  absl::StatusOr<std::unique_ptr<HostProcess>> ForkHost(v1::Dsl dsl, const std::string& gpu) const;

  JudgeOptions options_;
  mutable DevicePool pool_;
  mutable absl::Mutex mutex_;
  // One started host per (DSL, GPU slot) (it has imported that DSL), waiting for its request.
  mutable std::map<std::pair<int, int>, std::unique_ptr<HostProcess>> spares_
      ABSL_GUARDED_BY(mutex_);
  // One host template per DSL, with host_template.
  mutable std::map<int, std::shared_ptr<HostTemplate>> templates_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mkb

#endif  // LIBMKB_JUDGE_JUDGE_H_
