// The whole of SPEC §6 in one call: validated cell-replicates in, a StatsReport out. The CLI,
// the Python module and report writers are thin layers over ComputeStatsReport and
// StatsReportToJson. docs/statistics.md documents every formula and JSON key.
#ifndef LIBMKB_STATS_REPORT_H_
#define LIBMKB_STATS_REPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/stats.pb.h"

namespace mkb::stats {

inline constexpr double kDefaultConfidence = 0.95;

// Validates `cells` (cell_replicates.h), `config` (zero fields take the paper's defaults) and
// `options`, then computes: τ (help_threshold.h), the comparisons, the harness aggregates and
// usage (aggregates.h), tier counts and the relative-standing table with its control
// (relative_standing.h), and the paired lift table with its inference (paired_lift.h).
// Deterministic: the same input and seed give the same report. An empty `cells` gives a report
// of empty groups, not an error. Errors are InvalidArgumentError naming the field
// ("cells[3].base.speedup", "config.clip_high", "options.levels[0]").
absl::StatusOr<v1::StatsReport> ComputeStatsReport(absl::Span<const v1::CellReplicate> cells,
                                                   const v1::StatsConfig& config,
                                                   const v1::StatsOptions& options = {});

// The report as JSON with stable keys: the .proto field names, every field present, enums as
// lower-case short names ("mlp_norm"), and NaN or infinite numbers as null. `indent` 0 prints
// one line.
std::string StatsReportToJson(const v1::StatsReport& report, int indent = 2);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_REPORT_H_
