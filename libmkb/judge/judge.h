// mkb::Judge: evaluates a kernel.py on a problem (SPEC §3) and returns its Verdict.
//
// Each evaluation runs in a fresh judge host process (`python -m metakernelbench.judge.host`):
// the host runs the reference and decides, with this library's comparisons and verdict rules;
// it forks the sandboxed worker that runs the kernel. A kernel that fails is a Verdict; an
// error status means the judge itself could not evaluate (the host could not start, died, or
// ran past its deadline).
//
// A host spends most of its start importing torch (3 s on the H200 machine). With
// keep_warm_host, the judge starts the next host as soon as one is taken, so that a sequence
// of evaluations (an agent's submissions) does not wait for it; each host still serves one
// evaluation only.
#ifndef LIBMKB_JUDGE_JUDGE_H_
#define LIBMKB_JUDGE_JUDGE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "mkb/v1/judge.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

struct JudgeOptions {
  // An interpreter that can import metakernelbench (and torch).
  std::string python = "python3";
  // Environment entries for the host, "KEY=VALUE" (e.g. PYTHONPATH, CUDA_VISIBLE_DEVICES),
  // added to this process's environment, or the whole environment when inherit_environment is
  // false (the Python binding passes os.environ so: a module loaded with RTLD_DEEPBIND must not
  // read libc's `environ` directly).
  std::vector<std::string> environment;
  bool inherit_environment = true;
  // Time the host may take beyond the request's total_timeout_s before it is killed.
  absl::Duration deadline_margin = absl::Seconds(120);
  // Keep one started host waiting for the next evaluation (it holds an interpreter with torch
  // imported, ~0.5 GB of host memory, until used or the Judge is destroyed).
  bool keep_warm_host = false;
};

class HostProcess;

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

 private:
  absl::StatusOr<std::unique_ptr<HostProcess>> TakeHost() const;

  JudgeOptions options_;
  mutable absl::Mutex mutex_;
  mutable std::unique_ptr<HostProcess> spare_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mkb

#endif  // LIBMKB_JUDGE_JUDGE_H_
