// Grouping levels of the lift and standing tables: which of model, direction and family a
// table is split on. A level that does not split on a key pools over it, and reads "*" there.
#ifndef LIBMKB_STATS_GROUPING_H_
#define LIBMKB_STATS_GROUPING_H_

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "libmkb/stats/comparisons.h"

namespace mkb::stats {

struct Level {
  bool model = false;
  bool direction = false;
  bool family = false;

  // "overall", or the keys split on, comma-separated in the order model, direction, family.
  std::string Name() const;
};

// overall, model, direction, model,direction, family.
std::vector<Level> DefaultLevels();

// Levels from their names ("model,direction", "family", "overall"; keys in any order, blanks
// ignored); the defaults when `names` is empty. InvalidArgumentError naming levels[i] for an
// unknown key or a repeated level.
absl::StatusOr<std::vector<Level>> ParseLevels(absl::Span<const std::string> names);

// A group of a level: the values of its keys, "*" (family 0) for keys it pools over. Ordered
// by model, direction, then family in PROBLEMS.md order.
struct GroupKey {
  std::string model;
  std::string direction;
  int family = 0;  // a v1::Family value; 0 = all

  std::string FamilyKey() const;  // "mlp_norm", or "*"
  bool operator<(const GroupKey& other) const {
    return std::tie(model, direction, family) <
           std::tie(other.model, other.direction, other.family);
  }
};

// The comparisons of each group of `level`, in input order within a group.
std::map<GroupKey, std::vector<const Comparison*>> GroupComparisons(
    absl::Span<const Comparison> comparisons, const Level& level);

}  // namespace mkb::stats

#endif  // LIBMKB_STATS_GROUPING_H_
