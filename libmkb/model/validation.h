// Validation of the data model at the boundary (files, Python, the store). Each function
// returns OK or an InvalidArgumentError whose message starts with the offending field's path
// ("workloads[1].roofline.min_bytes: must be > 0"); the path is also attached as the status
// payload kFieldPathPayload so that loaders can point at the line that set it.
#ifndef LIBMKB_MODEL_VALIDATION_H_
#define LIBMKB_MODEL_VALIDATION_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/problem.pb.h"

namespace mkb {

inline constexpr char kFieldPathPayload[] = "type.metakernelbench/field_path";

// The field path attached to a status by a validator, if any.
std::optional<std::string> FieldPathOf(const absl::Status& status);

// The largest problem number of the published suite; custom problems may use larger numbers.
inline constexpr int kPublishedProblemCount = 74;

// A problem as written in problem.textproto (loader-filled fields must be empty).
absl::Status ValidateProblem(const v1::Problem& problem);
absl::Status ValidateVariant(const v1::Variant& variant);
absl::Status ValidateBudget(const v1::Budget& budget);
absl::Status ValidateSkill(const v1::Skill& skill);
absl::Status ValidateArmSpec(const v1::ArmSpec& arm);
absl::Status ValidateExperimentSpec(const v1::ExperimentSpec& spec);
absl::Status ValidateStatsConfig(const v1::StatsConfig& config);

// Validates any message of the model that has a validator above; OK for other types.
absl::Status ValidateMessage(const google::protobuf::Message& message);

// Whether `slug` is a valid problem slug: lower-case letters, digits and '_', starting with a
// letter.
bool IsValidSlug(const std::string& slug);

}  // namespace mkb

#endif  // LIBMKB_MODEL_VALIDATION_H_
