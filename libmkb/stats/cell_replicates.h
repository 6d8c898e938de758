// The statistics' input: cell-replicates (SPEC §5), their validation, the arms' names and the
// distinct attempts behind them. With the standard arms a solo attempt serves two cells (the
// source of one direction and the base of the other); it is one attempt, counted once where
// attempts are counted (usage, replicate spread).
#ifndef LIBMKB_STATS_CELL_REPLICATES_H_
#define LIBMKB_STATS_CELL_REPLICATES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mkb/v1/stats.pb.h"

namespace mkb::stats {

// The reserved group key meaning "every value" in report tables; no model or direction may be named
// so.
inline constexpr char kAllKey[] = "*";

enum class Role { kSource, kBase, kSkill, kControl };

// "source", "base", "skill", "control".
const char* RoleName(Role role);

// The arm a cell's role holds in a standard direction: for "cutedsl2tirx" solo_cutedsl,
// solo_tirx, cutedsl2tirx_skill and solo_tirx_control; for "tirx2cutedsl" the mirror image.
// Empty for other directions.
std::string StandardArmName(absl::string_view direction, Role role);

// The role's ArmResult, or nullptr when the cell has none.
const v1::ArmResult* ArmOf(const v1::CellReplicate& cell, Role role);

// The arm's name in the cell: its own, else the standard one.
std::string ArmNameOf(const v1::CellReplicate& cell, Role role);

// One cell-replicate on its own; error paths are relative to it ("base.speedup: ...").
absl::Status ValidateCellReplicate(const v1::CellReplicate& cell);

// One attempt, as it appears (possibly several times) among the cells.
struct AttemptRecord {
  std::string model;
  std::string arm;
  std::string problem_slug;
  int replicate = 0;
  Role role = Role::kBase;                // its role in the first cell it appears in
  const v1::ArmResult* result = nullptr;  // its first occurrence
  // Its first occurrence with usage, interrupted usage or interrupted tries, else nullptr.
  const v1::ArmResult* usage = nullptr;
  // Its first occurrence with timing samples, else nullptr.
  const v1::ArmResult* timing = nullptr;
};

// How an attempt counts in the usage per arm.
enum class RunStatus {
  kSkipped,  // a skipped conditioned arm: never ran, by design
  kRan,      // finished (passed or not), or unresolved after spending measured usage
  kNotRun,   // blocked, pending, missing, or failed before any usage was recorded
};

// Whether an attempt in `state` is resolved: it ran to its end (finished) or, a conditioned arm
// with an empty skill, counts as its solo (skipped). Every other state is not.
bool IsResolvedState(v1::AttemptState state);

// The run status of an attempt: its state (or, unspecified, resolved and skipped) and whether
// `usage` (the occurrence that carries its usage, or nullptr) holds any.
RunStatus RunStatusOf(const v1::ArmResult& result, const v1::ArmResult* usage);

// Whether an ArmResult carries any usage: a non-empty usage or interrupted usage, or
// interrupted tries.
bool HasUsage(const v1::ArmResult& arm);

// Whether it carries timing samples of both the kernel and the eager baseline.
bool HasTimingSamples(const v1::ArmResult& arm);

// Validates the cells one by one (paths "cells[i]. ..."), then across them: no two cells for
// the same (model, direction, problem, replicate); one family per problem; and occurrences of
// the same attempt (model, arm, problem, replicate) agreeing on resolved, passed, speedup and
// skipped. Returns the distinct attempts in order of first appearance.
absl::StatusOr<std::vector<AttemptRecord>> DistinctAttempts(
    absl::Span<const v1::CellReplicate> cells);

// DistinctAttempts, for its status only.
absl::Status ValidateCellReplicates(absl::Span<const v1::CellReplicate> cells);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_CELL_REPLICATES_H_
