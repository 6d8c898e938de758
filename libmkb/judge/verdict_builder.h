// Assembles a Verdict from what an evaluation observed and decides its status (SPEC §3).
//
// The host feeds it in order: the submission checks, static findings, the import result, each
// draw (with the comparisons it made), runtime findings, timing samples, and the worker's
// outcome. Finish() applies the rules:
//   invalid submission > policy violation > import error > timeout / crash (the worker was lost)
//   > the first failing draw (exception, mismatch; a failing re-check draw is a divergence)
//   > passed (correct on every draw and timed) / correct (timing not requested).
#ifndef LIBMKB_JUDGE_VERDICT_BUILDER_H_
#define LIBMKB_JUDGE_VERDICT_BUILDER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "libmkb/judge/compare.h"
#include "libmkb/judge/measurement_plan.h"  // WithDefaults(JudgeConfig)
#include "mkb/v1/judge.pb.h"
#include "mkb/v1/problem.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

// Turns one tensor comparison into the draw's TensorCheck and, when it failed, a Mismatch.
v1::TensorCheck TensorCheckOf(const std::string& path, const TensorComparison& comparison);
v1::Mismatch MismatchOf(v1::JudgePhase phase, int draw_index, const std::string& path,
                        const TensorRef& out, const TensorComparison& comparison);

class VerdictBuilder {
 public:
  VerdictBuilder(const v1::Problem& problem, v1::Dsl dsl, const std::string& workload,
                 const v1::JudgeConfig& config);

  // Size, emptiness and UTF-8 of the source; sets the kernel's hash and size. False when the
  // submission is invalid (the evaluation stops there).
  bool CheckSubmission(absl::string_view source);
  void SetUnparseable(int line, absl::string_view message);
  void AddFindings(const std::vector<v1::AuditFinding>& findings);
  bool HasViolation() const;
  void SetEnvironment(const v1::Environment& environment);
  v1::PhaseTimes* mutable_phase_times() { return verdict_.mutable_phase_times(); }
  void SetImport(bool ok, absl::string_view error_type, absl::string_view error);
  void SetKernelNames(const std::vector<std::string>& names);

  // A finished draw: its checks, and the first mismatch found in it, if any. A draw marked
  // passed passes only when its tensor checks cover every output the problem declares, in order
  // (OutputPaths); one that left an output out is recorded as a mismatch naming it. Returns
  // whether the draw passed as recorded.
  bool RecordDraw(const v1::DrawCheck& draw, const std::optional<v1::Mismatch>& mismatch);
  // solve (or the worker's handling of the call) raised.
  void RecordCallError(v1::JudgePhase phase, int draw_index, absl::string_view error_type,
                       absl::string_view error);
  // The worker died or hung during `phase`; the evaluation ends.
  void RecordWorkerLost(v1::JudgePhase phase, int draw_index, absl::string_view what);
  // Samples of the synchronised end-to-end times (ms), kernel and eager baseline. `method`:
  // "parity_e2e" on a GPU, "host_clock" on the CPU.
  void SetParityTiming(const std::vector<double>& kernel_ms, const std::vector<double>& eager_ms,
                       const std::string& method, const std::vector<bool>& kernel_throttled = {},
                       const std::vector<bool>& eager_throttled = {});
  // The stricter metric: GPU spans of every traced sample ("cupti_span", or "cuda_events" when
  // CUPTI was unavailable), and the kernel's summed kernel time.
  void SetSpanTiming(const std::vector<double>& kernel_span_ms,
                     const std::vector<double>& eager_span_ms,
                     const std::vector<double>& kernel_sum_ms, const std::string& method,
                     const std::vector<bool>& kernel_throttled,
                     const std::vector<bool>& eager_throttled);
  void SetProcessOutcome(const v1::ProcessOutcome& outcome);
  // The judge itself failed (CUDA / CUPTI / IPC trouble, a lost judge resource): INFRA_ERROR,
  // which is not counted against the kernel.
  void RecordInfraError(absl::string_view what);

  // Whether the evaluation can go on (no invalid submission, violation, import error, lost worker).
  bool CanContinue() const;
  // Whether every correctness draw so far passed.
  bool AllDrawsCorrect() const;

  v1::Verdict Finish();

 private:
  struct Failure {
    v1::VerdictStatus status;
    std::string message;
  };
  void NoteFailure(v1::VerdictStatus status, std::string message);

  v1::Problem problem_;
  v1::JudgeConfig config_;
  v1::Verdict verdict_;
  bool invalid_ = false;
  bool import_failed_ = false;
  bool worker_lost_ = false;
  std::string infra_error_;
  bool timed_ = false;
  std::string lost_what_;
  std::optional<Failure> first_failure_;
  std::vector<double> kernel_ms_, eager_ms_;
};

}  // namespace mkb

#endif  // LIBMKB_JUDGE_VERDICT_BUILDER_H_
