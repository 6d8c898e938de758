#include "libmkb/judge/verdict_builder.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "libmkb/core/sha256.h"
#include "libmkb/core/utf8.h"
#include "libmkb/core/version.h"
#include "libmkb/judge/structure.h"
#include "libmkb/judge/timing_summary.h"
#include "libmkb/model/defaults.h"
#include "libmkb/model/names.h"

namespace mkb {
namespace {

// The last non-empty line of a traceback: the exception and its message.
std::string LastLine(absl::string_view text) {
  absl::string_view stripped = absl::StripTrailingAsciiWhitespace(text);
  const size_t newline = stripped.rfind('\n');
  return std::string(absl::StripAsciiWhitespace(
      newline == absl::string_view::npos ? stripped : stripped.substr(newline + 1)));
}

std::string Milliseconds(double ms) {
  if (ms >= 100) return absl::StrFormat("%.1f ms", ms);
  if (ms >= 1) return absl::StrFormat("%.3f ms", ms);
  return absl::StrFormat("%.1f us", ms * 1e3);
}

// The first output of the problem that a draw did not compare, as a Mismatch: the draw's
// tensor checks must name the problem's outputs in order. A draw that compared nothing (the
// outputs' data never reached the judge) or fewer outputs than declared is no pass.
std::optional<v1::Mismatch> UncomparedOutput(const v1::Problem& problem,
                                             const v1::DrawCheck& draw) {
  const std::vector<std::string> paths = OutputPaths(problem);
  for (size_t i = 0; i < paths.size(); ++i) {
    const int k = static_cast<int>(i);
    if (k < draw.tensors_size() && draw.tensors(k).output_path() == paths[i]) continue;
    v1::Mismatch m;
    m.set_phase(draw.phase());
    m.set_draw_index(draw.index());
    m.set_output_path(paths[i]);
    m.set_kind(v1::MISMATCH_STRUCTURE);
    m.set_message(absl::StrCat(paths[i], ": not compared (the draw compared ", draw.tensors_size(),
                               " of the problem's ", paths.size(),
                               " outputs): an output that is not compared does not pass"));
    return m;
  }
  return std::nullopt;
}

}  // namespace

v1::TensorCheck TensorCheckOf(const std::string& path, const TensorComparison& comparison) {
  v1::TensorCheck check;
  check.set_output_path(path);
  check.set_passed(comparison.passed);
  check.set_max_error(comparison.max_error);
  check.set_allowance(comparison.allowance);
  check.set_count_over(comparison.count_over);
  check.set_numel(comparison.numel);
  check.set_exact(comparison.exact);
  return check;
}

v1::Mismatch MismatchOf(v1::JudgePhase phase, int draw_index, const std::string& path,
                        const TensorRef& out, const TensorComparison& c) {
  v1::Mismatch m;
  m.set_phase(phase);
  m.set_draw_index(draw_index);
  m.set_output_path(path);
  m.set_kind(c.nan_count > 0 ? v1::MISMATCH_NAN
             : c.exact       ? v1::MISMATCH_INEXACT
                             : v1::MISMATCH_VALUE);
  m.set_max_error(c.max_error);
  m.set_allowance(c.allowance);
  m.set_factor_over(c.allowance > 0 ? c.max_error / c.allowance
                                    : std::numeric_limits<double>::infinity());
  m.set_count_over(c.count_over);
  m.set_numel(c.numel);
  for (int64_t i : out.Unravel(std::max<int64_t>(c.worst_index, 0))) m.add_worst_index(i);
  m.set_worst_value(c.worst_value);
  m.set_worst_anchor(c.worst_anchor);
  m.set_reference_error(c.reference_error);
  const std::string where = absl::StrCat("[", absl::StrJoin(m.worst_index(), ", "), "]");
  if (m.kind() == v1::MISMATCH_NAN) {
    m.set_message(absl::StrFormat("%s: %d of %d elements are NaN (first at %s); NaN never passes",
                                  path, c.nan_count, c.numel, where));
  } else if (c.exact) {
    m.set_message(absl::StrFormat(
        "%s: %d of %d elements differ from the exact expected values (e.g. %s: got %g, "
        "expected %g)",
        path, c.count_over, c.numel, where, c.worst_value, c.worst_anchor));
  } else {
    m.set_message(absl::StrFormat(
        "%s: max |out - anchor| = %.4g is %.3gx the allowance %.4g; %d of %d elements over "
        "(worst at %s: got %g, anchor %g)",
        path, c.max_error, m.factor_over(), c.allowance, c.count_over, c.numel, where,
        c.worst_value, c.worst_anchor));
  }
  return m;
}

VerdictBuilder::VerdictBuilder(const v1::Problem& problem, v1::Dsl dsl, const std::string& workload,
                               const v1::JudgeConfig& config)
    : problem_(problem), config_(WithDefaults(config)) {
  verdict_.set_problem_slug(problem.slug());
  verdict_.set_problem_fingerprint(problem.fingerprint());
  verdict_.set_dsl(dsl);
  verdict_.set_workload(workload);
  verdict_.set_total_draws(config_.correctness_draws());
  verdict_.mutable_environment()->set_harness_version(kVersion);
}

bool VerdictBuilder::CheckSubmission(absl::string_view source) {
  verdict_.set_kernel_sha256(Sha256Hex(source));
  verdict_.set_kernel_bytes(static_cast<int64_t>(source.size()));
  std::string reason;
  if (source.find_first_not_of(" \t\r\n") == absl::string_view::npos) {
    reason = "kernel.py is empty";
  } else if (static_cast<int64_t>(source.size()) > config_.max_kernel_bytes()) {
    reason = absl::StrCat("kernel.py is ", source.size(), " bytes, over the limit of ",
                          config_.max_kernel_bytes());
  } else if (FirstInvalidUtf8(source).has_value()) {
    reason = "kernel.py is not UTF-8 text";
  } else if (source.find('\0') != absl::string_view::npos) {
    reason = "kernel.py contains NUL bytes";
  }
  if (reason.empty()) return true;
  invalid_ = true;
  verdict_.set_message(absl::StrCat("invalid submission: ", reason, " (not counted)"));
  return false;
}

void VerdictBuilder::SetUnparseable(int line, absl::string_view message) {
  invalid_ = true;
  verdict_.set_message(absl::StrCat("invalid submission: kernel.py does not parse: line ", line,
                                    ": ", message, " (not counted)"));
}

void VerdictBuilder::AddFindings(const std::vector<v1::AuditFinding>& findings) {
  for (const v1::AuditFinding& finding : findings) {
    // The same runtime event reported by several replies is one finding.
    bool duplicate = false;
    for (const v1::AuditFinding& existing : verdict_.findings()) {
      duplicate |= existing.code() == finding.code() && existing.evidence() == finding.evidence() &&
                   existing.phase() == finding.phase();
    }
    if (!duplicate && verdict_.findings_size() < 128) *verdict_.add_findings() = finding;
  }
}

bool VerdictBuilder::HasViolation() const {
  for (const v1::AuditFinding& finding : verdict_.findings()) {
    if (finding.severity() == v1::SEVERITY_VIOLATION) return true;
  }
  return false;
}

void VerdictBuilder::SetEnvironment(const v1::Environment& environment) {
  const std::string harness = verdict_.environment().harness_version();
  *verdict_.mutable_environment() = environment;
  verdict_.mutable_environment()->set_harness_version(harness);
}

void VerdictBuilder::SetImport(bool ok, absl::string_view error_type, absl::string_view error) {
  verdict_.set_imported(ok);
  if (!ok) {
    import_failed_ = true;
    verdict_.mutable_process()->set_traceback(std::string(error));
    // The exception's own line (the traceback's last: "Type: message"), as for solve's: the
    // traceback's first 300 characters cut it off whenever kernel.py's frames were long.
    const std::string type = error_type.empty() ? "kernel.py" : std::string(error_type);
    const std::string last = LastLine(error);
    NoteFailure(
        v1::IMPORT_ERROR,
        absl::StrCat("import error: ", last.empty() ? type
                                       : absl::StartsWith(last, type)
                                           ? Utf8Prefix(last, 300)
                                           : absl::StrCat(type, ": ", Utf8Prefix(last, 300))));
  }
}

void VerdictBuilder::SetKernelNames(const std::vector<std::string>& names) {
  verdict_.clear_kernel_names();
  for (const std::string& name : names) verdict_.add_kernel_names(name);
}

void VerdictBuilder::NoteFailure(v1::VerdictStatus status, std::string message) {
  if (!first_failure_.has_value()) first_failure_ = Failure{status, std::move(message)};
}

bool VerdictBuilder::RecordDraw(const v1::DrawCheck& checked,
                                const std::optional<v1::Mismatch>& found) {
  v1::DrawCheck draw = checked;
  std::optional<v1::Mismatch> mismatch = found;
  if (draw.passed()) {
    mismatch = UncomparedOutput(problem_, draw);
    draw.set_passed(!mismatch.has_value());
  }
  *verdict_.add_draws() = draw;
  if (draw.phase() == v1::PHASE_CORRECTNESS && draw.passed()) {
    verdict_.set_correct_draws(verdict_.correct_draws() + 1);
  }
  if (!draw.passed()) {
    if (mismatch.has_value() && !verdict_.has_first_mismatch())
      *verdict_.mutable_first_mismatch() = *mismatch;
    const bool recheck = draw.phase() == v1::PHASE_TIMING_RECHECK;
    const std::string detail = mismatch.has_value() ? mismatch->message() : "outputs differ";
    NoteFailure(recheck ? v1::DIVERGENCE : v1::MISMATCH,
                recheck ? absl::StrCat("divergence on a timing draw: ", detail)
                        : absl::StrCat("mismatch on draw ", draw.index() + 1, ": ", detail));
  }
  return draw.passed();
}

void VerdictBuilder::RecordCallError(v1::JudgePhase phase, int draw_index,
                                     absl::string_view error_type, absl::string_view error) {
  if (verdict_.process().traceback().empty())
    verdict_.mutable_process()->set_traceback(std::string(error));
  v1::DrawCheck draw;
  draw.set_phase(phase);
  draw.set_index(draw_index);
  draw.set_passed(false);
  *verdict_.add_draws() = draw;
  NoteFailure(v1::EXCEPTION,
              absl::StrCat("solve raised ", error_type, " on ",
                           EnumShortName(v1::JudgePhase_descriptor()->FindValueByNumber(phase)),
                           " draw ", draw_index + 1, ": ", Utf8Prefix(LastLine(error), 300)));
}

void VerdictBuilder::RecordWorkerLost(v1::JudgePhase phase, int draw_index,
                                      absl::string_view what) {
  worker_lost_ = true;
  lost_what_ = absl::StrCat(what, " during ",
                            EnumShortName(v1::JudgePhase_descriptor()->FindValueByNumber(phase)),
                            phase == v1::PHASE_CORRECTNESS || phase == v1::PHASE_TIMING
                                ? absl::StrCat(" draw ", draw_index + 1)
                                : "");
}

void VerdictBuilder::SetParityTiming(const std::vector<double>& kernel_ms,
                                     const std::vector<double>& eager_ms, const std::string& method,
                                     const std::vector<bool>& kernel_throttled,
                                     const std::vector<bool>& eager_throttled) {
  timed_ = !kernel_ms.empty() && !eager_ms.empty();
  kernel_ms_ = kernel_ms;
  eager_ms_ = eager_ms;
  *verdict_.mutable_kernel_parity() = SummarizeSamples(kernel_ms, method, kernel_throttled);
  *verdict_.mutable_eager_parity() = SummarizeSamples(eager_ms, method, eager_throttled);
}

void VerdictBuilder::SetSpanTiming(const std::vector<double>& kernel_span_ms,
                                   const std::vector<double>& eager_span_ms,
                                   const std::vector<double>& kernel_sum_ms,
                                   const std::string& method,
                                   const std::vector<bool>& kernel_throttled,
                                   const std::vector<bool>& eager_throttled) {
  *verdict_.mutable_kernel_span() = SummarizeSamples(kernel_span_ms, method, kernel_throttled);
  *verdict_.mutable_eager_span() = SummarizeSamples(eager_span_ms, method, eager_throttled);
  *verdict_.mutable_kernel_sum() = SummarizeSamples(
      kernel_sum_ms, method == "cupti_span" ? "cupti_kernel_sum" : method, kernel_throttled);
}

void VerdictBuilder::SetProcessOutcome(const v1::ProcessOutcome& outcome) {
  const std::string traceback = verdict_.process().traceback();
  *verdict_.mutable_process() = outcome;
  if (outcome.traceback().empty()) verdict_.mutable_process()->set_traceback(traceback);
}

void VerdictBuilder::RecordInfraError(absl::string_view what) {
  if (infra_error_.empty()) infra_error_ = std::string(what);
}

bool VerdictBuilder::CanContinue() const {
  return !invalid_ && !HasViolation() && !import_failed_ && !worker_lost_ && infra_error_.empty();
}

bool VerdictBuilder::AllDrawsCorrect() const {
  for (const v1::DrawCheck& draw : verdict_.draws()) {
    if (draw.phase() == v1::PHASE_CORRECTNESS && !draw.passed()) return false;
  }
  return true;
}

v1::Verdict VerdictBuilder::Finish() {
  v1::Verdict& v = verdict_;
  const int draws = config_.correctness_draws();
  v.set_correct(v.correct_draws() == draws && AllDrawsCorrect() && !first_failure_.has_value() &&
                !worker_lost_ && !invalid_);
  v.set_passed(false);
  v.clear_speedup_vs_eager();
  if (invalid_) {
    v.set_status(v1::INVALID_SUBMISSION);
    v.set_correct(false);
    return v;
  }
  if (HasViolation()) {
    v.set_status(v1::POLICY_VIOLATION);
    v.set_correct(false);
    for (const v1::AuditFinding& finding : v.findings()) {
      if (finding.severity() == v1::SEVERITY_VIOLATION) {
        v.set_message(absl::StrCat(
            "policy violation: ", finding.message(),
            finding.evidence().empty() ? "" : absl::StrCat(" (", finding.evidence(), ")")));
        break;
      }
    }
    return v;
  }
  if (!infra_error_.empty()) {
    v.set_status(v1::INFRA_ERROR);
    v.set_correct(false);
    v.set_message(absl::StrCat("infrastructure error (not counted): ", infra_error_));
    return v;
  }
  if (import_failed_) {
    v.set_status(v1::IMPORT_ERROR);
    v.set_message(first_failure_->message);
    return v;
  }
  if (worker_lost_) {
    const v1::ProcessOutcome& p = v.process();
    v.set_correct(false);
    if (p.timed_out()) {
      v.set_status(v1::TIMEOUT);
      v.set_message(absl::StrCat("timeout: ", lost_what_));
    } else {
      v.set_status(v1::CRASH);
      std::string how;
      if (p.out_of_memory()) {
        how = absl::StrCat("killed for exceeding the memory limit (",
                           config_.memory_limit_bytes() >> 20, " MiB)");
      } else if (p.signal() != 0) {
        how = absl::StrCat("killed by ", p.signal_name());
      } else {
        how = absl::StrCat("exited with code ", p.exit_code());
      }
      v.set_message(absl::StrCat("crash: the worker ", how, " (", lost_what_, ")"));
    }
    return v;
  }
  if (first_failure_.has_value()) {
    v.set_status(first_failure_->status);
    v.set_message(first_failure_->message);
    v.set_correct(false);
    return v;
  }
  if (!v.correct()) {
    v.set_status(v1::MISMATCH);
    v.set_message(absl::StrCat("only ", v.correct_draws(), " of ", draws, " draws ran correctly"));
    return v;
  }
  if (!timed_) {
    v.set_status(v1::CORRECT);
    v.set_message(absl::StrCat("correct on ", draws, "/", draws, " draws (timing not requested)"));
    return v;
  }
  const double kernel = v.kernel_parity().median_ms();
  const double eager = v.eager_parity().median_ms();
  if (!(kernel > 0) || !(eager > 0)) {
    // No speedup without two times (AcceptReportedTimes refuses a report of no time; this is
    // the backstop): never a pass with the speedup left out.
    v.set_status(kernel > 0 ? v1::INFRA_ERROR : v1::POLICY_VIOLATION);
    v.set_message(kernel > 0 ? "infrastructure error (not counted): the eager baseline has no time"
                             : "policy violation: the kernel's timed calls have no time "
                               "(timing.inconsistent)");
    return v;
  }
  v.set_status(v1::PASSED);
  v.set_passed(true);
  v.set_speedup_vs_eager(eager / kernel);
  if (v.kernel_span().median_ms() > 0 && v.eager_span().median_ms() > 0) {
    v.set_speedup_span(v.eager_span().median_ms() / v.kernel_span().median_ms());
  }
  v.set_message(
      absl::StrFormat("passed: %d/%d draws correct; %.3gx vs eager (%s vs %s, median of %d)", draws,
                      draws, v.speedup_vs_eager(), Milliseconds(kernel), Milliseconds(eager),
                      v.kernel_parity().samples()));
  return v;
}

}  // namespace mkb
