#include "libmkb/judge/report.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libmkb/model/names.h"

namespace mkb {
namespace {

std::string LastLines(const std::string& text, int count) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (static_cast<int>(lines.size()) > count) {
    const size_t cut = lines.size() - count;
    lines.erase(lines.begin(), lines.begin() + cut);
    lines.insert(lines.begin(), absl::StrCat("[... ", cut, " earlier lines ...]"));
  }
  return absl::StrJoin(lines, "\n");
}

std::string Ms(double ms) { return absl::StrFormat("%.4g ms", ms); }

void Timing(std::string* out, const char* label, const v1::TimingSummary& t) {
  if (t.samples() == 0) return;
  absl::StrAppendFormat(
      out, "  %-22s median %s  [95%% CI %s .. %s]  CV %.1f%%  n=%d%s\n", label, Ms(t.median_ms()),
      Ms(t.ci95_low_ms()), Ms(t.ci95_high_ms()), 100 * t.cv(), t.samples(),
      t.throttled_samples() > 0 ? absl::StrCat("  (", t.throttled_samples(), " throttled)") : "");
}

}  // namespace

std::string RenderReport(const v1::Verdict& v, const ReportOptions& options) {
  std::string out;
  absl::StrAppend(&out, "verdict: ", VerdictStatusName(v.status()), "\n", v.message(), "\n");
  absl::StrAppend(&out, "\ncorrectness: ", v.correct_draws(), "/", v.total_draws(),
                  " draws correct", v.imported() ? "" : " (kernel.py did not import)", "\n");
  for (const v1::DrawCheck& draw : v.draws()) {
    if (draw.phase() != v1::PHASE_CORRECTNESS && draw.passed()) continue;
    std::vector<std::string> parts;
    for (const v1::TensorCheck& t : draw.tensors()) {
      parts.push_back(
          t.exact()
              ? absl::StrCat(t.output_path(),
                             t.passed() ? " exact" : absl::StrCat(" ", t.count_over(), " differ"))
              : absl::StrFormat("%s err %.3g / allowance %.3g", t.output_path(), t.max_error(),
                                t.allowance()));
    }
    absl::StrAppend(
        &out, "  ", EnumShortName(v1::JudgePhase_descriptor()->FindValueByNumber(draw.phase())),
        " draw ", draw.index() + 1, ": ", draw.passed() ? "ok" : "FAILED",
        parts.empty() ? "" : absl::StrCat("  (", absl::StrJoin(parts, "; "), ")"),
        draw.inputs_unmodified() || draw.tensors().empty() ? "" : "  [inputs modified]", "\n");
  }
  if (v.has_first_mismatch()) {
    const v1::Mismatch& m = v.first_mismatch();
    absl::StrAppend(&out, "\nfirst mismatch (",
                    EnumShortName(v1::MismatchKind_descriptor()->FindValueByNumber(m.kind())),
                    "): ", m.message(), "\n");
  }
  if (v.kernel_parity().samples() > 0 || v.kernel_span().samples() > 0) {
    absl::StrAppend(&out, "\ntiming (", v.kernel_parity().method(), "):\n");
    Timing(&out, "kernel end-to-end", v.kernel_parity());
    Timing(&out, "eager end-to-end", v.eager_parity());
    Timing(&out, "kernel GPU span", v.kernel_span());
    Timing(&out, "eager GPU span", v.eager_span());
    Timing(&out, "kernel GPU busy", v.kernel_sum());
    if (v.has_speedup_vs_eager())
      absl::StrAppendFormat(&out, "  speedup vs eager: %.3gx (end-to-end)", v.speedup_vs_eager());
    if (v.has_speedup_span()) absl::StrAppendFormat(&out, ", %.3gx (GPU span)", v.speedup_span());
    if (v.has_speedup_vs_eager()) out += "\n";
  }
  if (!v.kernel_names().empty()) {
    absl::StrAppend(&out, "kernels launched per call: ", absl::StrJoin(v.kernel_names(), ", "),
                    "\n");
  }
  bool header = false;
  for (const v1::AuditFinding& f : v.findings()) {
    if (f.severity() == v1::SEVERITY_INFO) continue;
    if (!header) {
      out += "\naudit:\n";
      header = true;
    }
    absl::StrAppend(
        &out, "  [",
        EnumShortName(v1::FindingSeverity_descriptor()->FindValueByNumber(f.severity())), "] ",
        f.code(), ": ", f.message(),
        f.evidence().empty() ? "" : absl::StrCat("\n      ", f.evidence()), "\n");
  }
  const v1::ProcessOutcome& p = v.process();
  if (!p.traceback().empty()) {
    absl::StrAppend(&out, "\ntraceback:\n", LastLines(p.traceback(), options.max_traceback_lines),
                    "\n");
  }
  if (!p.stdout_tail().empty())
    absl::StrAppend(&out, "\nstdout (tail):\n", LastLines(p.stdout_tail(), options.max_tail_lines),
                    "\n");
  if (!p.stderr_tail().empty())
    absl::StrAppend(&out, "\nstderr (tail):\n", LastLines(p.stderr_tail(), options.max_tail_lines),
                    "\n");
  if (options.show_environment) {
    const v1::Environment& e = v.environment();
    std::vector<std::string> pins;
    for (const v1::PackagePin& pin : e.dsl_versions())
      pins.push_back(absl::StrCat(pin.name(), " ", pin.version()));
    absl::StrAppend(&out, "\nenvironment: ", e.device() == v1::CUDA ? e.gpu_name() : "CPU",
                    e.gpu_arch().empty() ? "" : absl::StrCat(" (", e.gpu_arch(), ")"),
                    e.driver_version().empty() ? "" : absl::StrCat(", driver ", e.driver_version()),
                    e.torch_version().empty() ? "" : absl::StrCat(", torch ", e.torch_version()),
                    pins.empty() ? "" : absl::StrCat(", ", absl::StrJoin(pins, ", ")),
                    ", metakernelbench ", e.harness_version(), "\n");
  }
  return out;
}

}  // namespace mkb
