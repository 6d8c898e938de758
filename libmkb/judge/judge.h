// mkb::Judge: evaluates a kernel.py on a problem (SPEC §3) and returns its Verdict.
//
// Each evaluation runs in a fresh judge host process (`python -m metakernelbench.judge.host`):
// the host runs the reference and decides, with this library's comparisons and verdict rules;
// it forks the sandboxed worker that runs the kernel. A kernel that fails is a Verdict; an
// error status means the judge itself could not evaluate (the host could not start, died, or
// ran past its deadline).
#ifndef LIBMKB_JUDGE_JUDGE_H_
#define LIBMKB_JUDGE_JUDGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
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
};

class Judge {
 public:
  explicit Judge(JudgeOptions options = {}) : options_(std::move(options)) {}

  // Blocks until the verdict is in. InvalidArgumentError for a malformed request (field named).
  absl::StatusOr<v1::Verdict> Evaluate(const v1::EvaluationRequest& request) const;

  const JudgeOptions& options() const { return options_; }

 private:
  JudgeOptions options_;
};

}  // namespace mkb

#endif  // LIBMKB_JUDGE_JUDGE_H_
