// What an attempt submits kernels to: mkb::Judge in production, a fake in tests.
#ifndef LIBMKB_AGENT_KERNEL_EVALUATOR_H_
#define LIBMKB_AGENT_KERNEL_EVALUATOR_H_

#include "absl/status/statusor.h"
#include "libmkb/judge/judge.h"
#include "mkb/v1/judge.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

// Contract of mkb::Judge::Evaluate: a kernel that fails is a Verdict; an error status means the
// evaluation could not be done (infrastructure). May be called from several threads.
class KernelEvaluator {
 public:
  virtual ~KernelEvaluator() = default;
  virtual absl::StatusOr<v1::Verdict> Evaluate(const v1::EvaluationRequest& request) = 0;
};

// Evaluates with an mkb::Judge (a fresh judge host process per evaluation).
class JudgeEvaluator : public KernelEvaluator {
 public:
  explicit JudgeEvaluator(JudgeOptions options) : judge_(std::move(options)) {}
  absl::StatusOr<v1::Verdict> Evaluate(const v1::EvaluationRequest& request) override {
    return judge_.Evaluate(request);
  }
  const Judge& judge() const { return judge_; }

 private:
  Judge judge_;
};

}  // namespace mkb

#endif  // LIBMKB_AGENT_KERNEL_EVALUATOR_H_
