#include "libmkb/stats/grouping.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libmkb/model/names.h"
#include "libmkb/model/validation.h"
#include "libmkb/stats/cell_replicates.h"

namespace mkb::stats {
namespace {

absl::Status LevelError(size_t index, absl::string_view problem) {
  const std::string path = absl::StrCat("levels[", index, "]");
  absl::Status status = absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
  status.SetPayload(kFieldPathPayload, absl::Cord(path));
  return status;
}

}  // namespace

std::string Level::Name() const {
  std::vector<const char*> keys;
  if (model) keys.push_back("model");
  if (direction) keys.push_back("direction");
  if (family) keys.push_back("family");
  return keys.empty() ? "overall" : absl::StrJoin(keys, ",");
}

std::vector<Level> DefaultLevels() {
  return {Level{}, Level{true, false, false}, Level{false, true, false}, Level{true, true, false},
          Level{false, false, true}};
}

absl::StatusOr<std::vector<Level>> ParseLevels(absl::Span<const std::string> names) {
  if (names.empty()) return DefaultLevels();
  std::vector<Level> out;
  for (size_t i = 0; i < names.size(); ++i) {
    Level level;
    const std::string name(absl::StripAsciiWhitespace(names[i]));
    if (name != "overall" && !name.empty()) {
      for (absl::string_view raw : absl::StrSplit(name, ',')) {
        const absl::string_view key = absl::StripAsciiWhitespace(raw);
        bool* flag = key == "model"       ? &level.model
                     : key == "direction" ? &level.direction
                     : key == "family"    ? &level.family
                                          : nullptr;
        if (flag == nullptr) {
          return LevelError(
              i, absl::StrCat("'", key, "' is not one of model, direction, family (or 'overall')"));
        }
        if (*flag) return LevelError(i, absl::StrCat("'", key, "' appears twice"));
        *flag = true;
      }
    }
    for (size_t j = 0; j < out.size(); ++j) {
      if (out[j].Name() == level.Name()) {
        return LevelError(i, absl::StrCat("'", level.Name(), "' repeats levels[", j, "]"));
      }
    }
    out.push_back(level);
  }
  return out;
}

std::string GroupKey::FamilyKey() const {
  return family == 0 ? std::string(kAllKey) : FamilyName(static_cast<v1::Family>(family));
}

std::map<GroupKey, std::vector<const Comparison*>> GroupComparisons(
    absl::Span<const Comparison> comparisons, const Level& level) {
  std::map<GroupKey, std::vector<const Comparison*>> out;
  for (const Comparison& c : comparisons) {
    GroupKey key{level.model ? c.cell->model() : kAllKey,
                 level.direction ? c.cell->direction() : kAllKey,
                 level.family ? static_cast<int>(c.cell->family()) : 0};
    out[key].push_back(&c);
  }
  return out;
}

}  // namespace mkb::stats
