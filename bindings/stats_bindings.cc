// metakernelbench._core.stats: the statistics core (libmkb/stats) for Python. The friendly
// API, with pandas DataFrames, is metakernelbench.stats; this module is its C++ half and the
// entry point of the scipy / statsmodels cross-checks.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bindings/bindings.h"
#include "bindings/proto_convert.h"
#include "bindings/status.h"
#include "libmkb/model/names.h"
#include "libmkb/model/validation.h"
#include "libmkb/stats/bootstrap.h"
#include "libmkb/stats/cell_replicates.h"
#include "libmkb/stats/help_threshold.h"
#include "libmkb/stats/hypothesis_tests.h"
#include "libmkb/stats/multiple_comparisons.h"
#include "libmkb/stats/proportions.h"
#include "libmkb/stats/report.h"

namespace mkb::python {
namespace {

namespace py = pybind11;

// A message from Python (view, dict or None); error messages start with the field path under
// `path` ("cells[2].base.speedup: expected a number, got str").
template <typename T>
absl::StatusOr<T> MessageAt(py::handle value, const std::string& path) {
  absl::StatusOr<T> out = MessageFromPython<T>(value);
  if (out.ok()) return out;
  const std::string message(out.status().message());
  const std::string type_prefix = T::descriptor()->name() + ": ";
  return absl::Status(out.status().code(),
                      message.rfind(type_prefix, 0) == 0
                          ? absl::StrCat(path, ": ", message.substr(type_prefix.size()))
                          : absl::StrCat(path, ".", message));
}

std::vector<v1::CellReplicate> CellsFromPython(py::handle cells) {
  if (py::isinstance<py::str>(cells) || py::isinstance<py::dict>(cells) ||
      !py::isinstance<py::iterable>(cells)) {
    ThrowIfError(
        absl::InvalidArgumentError("cells: expected a list of CellReplicate dicts or messages"));
  }
  std::vector<v1::CellReplicate> out;
  int index = 0;
  for (py::handle cell : cells) {
    out.push_back(
        ValueOrThrow(MessageAt<v1::CellReplicate>(cell, absl::StrCat("cells[", index++, "]"))));
  }
  return out;
}

std::vector<double> Doubles(py::handle values, const char* name) {
  try {
    return values.cast<std::vector<double>>();
  } catch (const py::cast_error&) {
    ThrowIfError(
        absl::InvalidArgumentError(absl::StrCat(name, ": expected a sequence of numbers")));
  }
  return {};
}

stats::WilcoxonMethod ParseWilcoxonMethod(const std::string& method) {
  if (method == "auto") return stats::WilcoxonMethod::kAuto;
  if (method == "exact") return stats::WilcoxonMethod::kExact;
  if (method == "asymptotic") return stats::WilcoxonMethod::kAsymptotic;
  ThrowIfError(absl::InvalidArgumentError(
      absl::StrCat("method: '", method, "' is not one of 'auto', 'exact', 'asymptotic'")));
  return stats::WilcoxonMethod::kAuto;
}

py::dict EstimateDict(const stats::BootstrapEstimate& e, bool keep) {
  py::dict out;
  out["value"] = e.value;
  out["se"] = e.se;
  out["percentile_low"] = e.percentile_low;
  out["percentile_high"] = e.percentile_high;
  out["bca_low"] = e.bca_low;
  out["bca_high"] = e.bca_high;
  out["bca_fallback"] = e.bca_fallback;
  if (keep) out["distribution"] = py::array_t<double>(e.distribution.size(), e.distribution.data());
  return out;
}

}  // namespace

void RegisterStats(py::module_& module) {
  py::module_ m = module.def_submodule(
      "stats",
      "The statistics core of SPEC §6 (libmkb/stats). Use metakernelbench.stats for DataFrames.");

  m.def(
      "resolved_states",
      [] {
        py::list out;
        const google::protobuf::EnumDescriptor* states = v1::AttemptState_descriptor();
        for (int i = 0; i < states->value_count(); ++i) {
          const auto state = static_cast<v1::AttemptState>(states->value(i)->number());
          if (stats::IsResolvedState(state)) out.append(AttemptStateName(state));
        }
        return out;
      },
      "The attempt states that count as resolved (stats::IsResolvedState): 'finished', 'skipped'.");
  m.def("default_tau", &stats::DefaultTau,
        "The help / harm threshold on d when neither the config nor a noise floor sets one "
        "(log 1.05).");
  m.def(
      "compute_report",
      [](py::handle cells, py::handle config, py::handle options) {
        const std::vector<v1::CellReplicate> parsed = CellsFromPython(cells);
        const v1::StatsConfig stats_config =
            ValueOrThrow(MessageAt<v1::StatsConfig>(config, "config"));
        const v1::StatsOptions stats_options =
            ValueOrThrow(MessageAt<v1::StatsOptions>(options, "options"));
        absl::StatusOr<v1::StatsReport> report;
        {
          py::gil_scoped_release release;  // CPU-bound: the bootstraps of every group
          report = stats::ComputeStatsReport(parsed, stats_config, stats_options);
        }
        return ViewOf(ValueOrThrow(std::move(report)));
      },
      py::arg("cells"), py::arg("config") = py::none(), py::arg("options") = py::none(),
      "The StatsReport (a read-only Message) of a list of CellReplicate dicts or messages.\n"
      "config: StatsConfig dict (zero fields: the paper's constants); options: StatsOptions dict.\n"
      "Raises InvalidArgumentError naming the field at fault ('cells[3].base.speedup: ...').\n"
      "Blocks for the bootstraps (released GIL): about a second for the published design.");
  m.def(
      "report_json",
      [](const MessageView& report, int indent) {
        v1::StatsReport message;
        ThrowIfError(CopyFromView(report, &message));
        return stats::StatsReportToJson(message, indent);
      },
      py::arg("report"), py::arg("indent") = 2,
      "The report as JSON with stable keys (docs/statistics.md): NaN as null, enums as short "
      "names.");
  m.def(
      "validate_cells",
      [](py::handle cells) { ThrowIfError(stats::ValidateCellReplicates(CellsFromPython(cells))); },
      py::arg("cells"), "Raises InvalidArgumentError naming the first invalid field of the cells.");

  m.def(
      "wilcoxon_signed_rank",
      [](py::handle d, const std::string& method, bool correction) {
        stats::WilcoxonOptions options;
        options.method = ParseWilcoxonMethod(method);
        options.continuity_correction = correction;
        const stats::WilcoxonTest t =
            ValueOrThrow(stats::WilcoxonSignedRank(Doubles(d, "d"), options));
        py::dict out;
        out["n"] = t.n;
        out["n_zero"] = t.n_zero;
        out["w_plus"] = t.w_plus;
        out["w_minus"] = t.w_minus;
        out["statistic"] = t.statistic;
        out["z"] = t.z;
        out["p_value"] = t.p_value;
        out["method"] = t.method;
        return out;
      },
      py::arg("d"), py::arg("method") = "auto", py::arg("correction") = false,
      "Two-sided Wilcoxon signed-rank test with Pratt's zero handling; matches\n"
      "scipy.stats.wilcoxon(d, zero_method='pratt', correction=..., method=...).");
  m.def(
      "sign_test",
      [](py::handle d) {
        const stats::SignTest t = ValueOrThrow(stats::SignTestOf(Doubles(d, "d")));
        py::dict out;
        out["n_positive"] = t.n_positive;
        out["n_negative"] = t.n_negative;
        out["n_zero"] = t.n_zero;
        out["p_value"] = t.p_value;
        return out;
      },
      py::arg("d"), "Two-sided exact sign test (zeros dropped; p = 1 when none is left).");
  m.def(
      "mcnemar_exact",
      [](int64_t both_passed, int64_t base_only, int64_t skill_only, int64_t both_failed) {
        for (int64_t count : {both_passed, base_only, skill_only, both_failed}) {
          if (count < 0) ThrowIfError(absl::InvalidArgumentError("counts must be >= 0"));
        }
        const stats::McNemarTest t =
            stats::McNemarExact(both_passed, base_only, skill_only, both_failed);
        py::dict out;
        out["n"] = t.n;
        out["both_passed"] = t.both_passed;
        out["base_only"] = t.base_only;
        out["skill_only"] = t.skill_only;
        out["both_failed"] = t.both_failed;
        out["p_value"] = t.p_value;
        return out;
      },
      py::arg("both_passed"), py::arg("base_only"), py::arg("skill_only"), py::arg("both_failed"),
      "Exact McNemar test on the discordant counts (statsmodels mcnemar(exact=True)).");
  m.def(
      "holm_adjust", [](py::handle p) { return stats::HolmAdjust(Doubles(p, "p")); }, py::arg("p"),
      "Holm-adjusted p-values (NaN entries left out and kept NaN).");
  m.def(
      "bh_adjust", [](py::handle p) { return stats::BenjaminiHochbergAdjust(Doubles(p, "p")); },
      py::arg("p"), "Benjamini-Hochberg-adjusted p-values (NaN entries left out and kept NaN).");
  m.def(
      "wilson_interval",
      [](int64_t k, int64_t n, double confidence) {
        if (n < 0 || k < 0 || k > n) ThrowIfError(absl::InvalidArgumentError("needs 0 <= k <= n"));
        if (!(confidence > 0 && confidence < 1)) {
          ThrowIfError(absl::InvalidArgumentError("confidence: must be in (0, 1)"));
        }
        const stats::ProportionInterval ci = stats::WilsonInterval(k, n, confidence);
        return py::make_tuple(ci.rate, ci.low, ci.high);
      },
      py::arg("k"), py::arg("n"), py::arg("confidence") = 0.95,
      "(rate, low, high): the Wilson score interval.");
  m.def(
      "bootstrap_paired_lift",
      [](py::handle sum_d, py::handle n, py::handle n_help, py::handle n_harm, int resamples,
         uint64_t seed, double confidence, bool keep_distributions) {
        const std::vector<double> sums = Doubles(sum_d, "sum_d");
        const std::vector<double> counts = Doubles(n, "n");
        const std::vector<double> helps = Doubles(n_help, "n_help");
        const std::vector<double> harms = Doubles(n_harm, "n_harm");
        if (counts.size() != sums.size() || helps.size() != sums.size() ||
            harms.size() != sums.size()) {
          ThrowIfError(
              absl::InvalidArgumentError("sum_d, n, n_help and n_harm must have the same length"));
        }
        std::vector<stats::ClusterTotals> clusters(sums.size());
        for (size_t i = 0; i < sums.size(); ++i) {
          clusters[i] = {sums[i], static_cast<int64_t>(counts[i]), static_cast<int64_t>(helps[i]),
                         static_cast<int64_t>(harms[i])};
        }
        stats::BootstrapOptions options;
        options.resamples = resamples;
        options.seed = seed;
        options.confidence = confidence;
        options.keep_distributions = keep_distributions;
        absl::StatusOr<stats::PairedLiftEstimates> estimates;
        {
          py::gil_scoped_release release;
          estimates = stats::BootstrapPairedLift(clusters, options);
        }
        const stats::PairedLiftEstimates e = ValueOrThrow(std::move(estimates));
        py::dict out;
        out["clusters"] = e.clusters;
        out["comparisons"] = e.comparisons;
        out["delta_gm"] = EstimateDict(e.delta_gm, keep_distributions);
        out["help_rate"] = EstimateDict(e.help_rate, keep_distributions);
        out["harm_rate"] = EstimateDict(e.harm_rate, keep_distributions);
        return out;
      },
      py::arg("sum_d"), py::arg("n"), py::arg("n_help"), py::arg("n_harm"),
      py::arg("resamples") = 10000, py::arg("seed") = 20260101, py::arg("confidence") = 0.95,
      py::arg("keep_distributions") = false,
      "Cluster bootstrap of delta_gm, help_rate and harm_rate from per-problem totals (one entry "
      "per\n"
      "problem). Returns {'delta_gm': {'value', 'se', 'percentile_low', ...}, ...}.");
}

}  // namespace mkb::python
