#include "libmkb/stats/report.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/model/defaults.h"
#include "libmkb/model/names.h"
#include "libmkb/model/validation.h"
#include "libmkb/stats/aggregates.h"
#include "libmkb/stats/cell_replicates.h"
#include "libmkb/stats/comparisons.h"
#include "libmkb/stats/grouping.h"
#include "libmkb/stats/help_threshold.h"
#include "libmkb/stats/measurement_noise.h"
#include "libmkb/stats/paired_lift.h"
#include "libmkb/stats/relative_standing.h"

namespace mkb::stats {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// `status` with its field path (and message) under `prefix`.
absl::Status Under(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  const std::string path = FieldPathOf(status).value_or("");
  std::string message(status.message());
  if (!path.empty() && message.rfind(path + ": ", 0) == 0)
    message = message.substr(path.size() + 2);
  const std::string full = path.empty() ? std::string(prefix) : absl::StrCat(prefix, ".", path);
  absl::Status out(status.code(), absl::StrCat(full, ": ", message));
  out.SetPayload(kFieldPathPayload, absl::Cord(full));
  return out;
}

nlohmann::ordered_json Number(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
}

nlohmann::ordered_json ScalarJson(const Message& message, const FieldDescriptor* field, int index) {
  const Reflection* r = message.GetReflection();
  const bool repeated = index >= 0;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return repeated ? r->GetRepeatedInt32(message, field, index) : r->GetInt32(message, field);
    case FieldDescriptor::CPPTYPE_INT64:
      return repeated ? r->GetRepeatedInt64(message, field, index) : r->GetInt64(message, field);
    case FieldDescriptor::CPPTYPE_UINT32:
      return repeated ? r->GetRepeatedUInt32(message, field, index) : r->GetUInt32(message, field);
    case FieldDescriptor::CPPTYPE_UINT64:
      return repeated ? r->GetRepeatedUInt64(message, field, index) : r->GetUInt64(message, field);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return Number(repeated ? r->GetRepeatedDouble(message, field, index)
                             : r->GetDouble(message, field));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return Number(repeated ? r->GetRepeatedFloat(message, field, index)
                             : r->GetFloat(message, field));
    case FieldDescriptor::CPPTYPE_BOOL:
      return repeated ? r->GetRepeatedBool(message, field, index) : r->GetBool(message, field);
    case FieldDescriptor::CPPTYPE_ENUM: {
      const std::string name = EnumShortName(repeated ? r->GetRepeatedEnum(message, field, index)
                                                      : r->GetEnum(message, field));
      return name.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(name);
    }
    case FieldDescriptor::CPPTYPE_STRING:
      return repeated ? r->GetRepeatedString(message, field, index) : r->GetString(message, field);
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return nullptr;
}

nlohmann::ordered_json MessageJson(const Message& message) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  const Reflection* r = message.GetReflection();
  const auto* type = message.GetDescriptor();
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    nlohmann::ordered_json value;
    if (field->is_repeated()) {
      value = nlohmann::ordered_json::array();
      for (int j = 0; j < r->FieldSize(message, field); ++j) {
        value.push_back(field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                            ? MessageJson(r->GetRepeatedMessage(message, field, j))
                            : ScalarJson(message, field, j));
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      // Absent sub-messages print as their defaults, so that every key is always present.
      value = MessageJson(r->GetMessage(message, field));
    } else if (field->has_presence() && !r->HasField(message, field)) {
      value = nullptr;
    } else {
      value = ScalarJson(message, field, -1);
    }
    out[field->name()] = std::move(value);
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::StatsReport> ComputeStatsReport(absl::Span<const v1::CellReplicate> cells,
                                                   const v1::StatsConfig& config,
                                                   const v1::StatsOptions& options) {
  MKB_RETURN_IF_ERROR(Under(ValidateStatsConfig(config), "config"));
  const v1::StatsConfig full = WithDefaults(config);
  const double confidence = options.confidence() == 0 ? kDefaultConfidence : options.confidence();
  if (!(confidence > 0 && confidence < 1)) {
    absl::Status status = absl::InvalidArgumentError(absl::StrCat(
        "options.confidence: must be in (0, 1) (0: 0.95), got ", options.confidence()));
    status.SetPayload(kFieldPathPayload, absl::Cord("options.confidence"));
    return status;
  }
  absl::StatusOr<std::vector<Level>> levels =
      ParseLevels(std::vector<std::string>(options.levels().begin(), options.levels().end()));
  if (!levels.ok()) return Under(levels.status(), "options");
  MKB_ASSIGN_OR_RETURN(const std::vector<AttemptRecord> attempts, DistinctAttempts(cells));

  v1::StatsReport report;
  *report.mutable_config() = full;
  report.set_confidence(confidence);
  *report.mutable_tau() = EstimateTau(attempts, full);
  const double tau = report.tau().tau();
  for (const Level& level : *levels) report.add_levels(level.Name());

  std::vector<Comparison> comparisons = BuildComparisons(cells, full);
  const MeasurementNoise noise(attempts, full);
  noise.Attach(comparisons);
  *report.mutable_measurement_noise() = noise.Summary();
  report.set_n_cells(static_cast<int>(cells.size()));
  report.set_n_resolved(static_cast<int>(comparisons.size()));
  int with_control = 0;
  for (const Comparison& c : comparisons) with_control += c.has_control;
  report.set_n_with_control(with_control);

  for (v1::AggregateRow& row : HarnessAggregates(cells, comparisons, full))
    *report.add_aggregates() = std::move(row);
  for (v1::UsageRow& row : UsageByArm(attempts)) *report.add_usage() = std::move(row);
  for (const Comparison& c : comparisons) *report.add_comparisons() = ComparisonRowOf(c, tau);
  for (v1::TierRow& row : TierCounts(comparisons, full.thresholds_size()))
    *report.add_tiers() = std::move(row);

  PairedLiftOptions lift_options;
  lift_options.tau = tau;
  lift_options.confidence = confidence;
  lift_options.resamples = full.bootstrap_resamples();
  lift_options.seed = full.seed();
  lift_options.config = full;
  MKB_ASSIGN_OR_RETURN(PairedLiftTables lift, PairedLift(comparisons, *levels, lift_options));
  for (v1::LiftRow& row : lift.lift) *report.add_lift() = std::move(row);
  for (v1::ProblemLiftRow& row : lift.problems) *report.add_problems() = std::move(row);
  MKB_ASSIGN_OR_RETURN(std::vector<v1::StandingRow> standing,
                       RelativeStanding(comparisons, *levels, lift_options));
  for (v1::StandingRow& row : standing) *report.add_standing() = std::move(row);
  return report;
}

std::string StatsReportToJson(const v1::StatsReport& report, int indent) {
  // Invalid UTF-8 in a user-given name is replaced rather than thrown over.
  return MessageJson(report).dump(indent > 0 ? indent : -1, ' ', false,
                                  nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace mkb::stats
