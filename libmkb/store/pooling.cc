#include "libmkb/store/pooling.h"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libmkb/store/stats_input.h"

namespace mkb {
namespace {

v1::ExperimentSpec Design(const v1::ExperimentSpec& spec) {
  v1::ExperimentSpec design = spec;
  design.clear_name();
  design.clear_concurrency();
  design.clear_max_tries();
  return design;
}

}  // namespace

std::optional<std::string> DesignDifference(const v1::ExperimentSpec& a,
                                            const v1::ExperimentSpec& b) {
  const v1::ExperimentSpec da = Design(a), db = Design(b);
  google::protobuf::util::MessageDifferencer differencer;
  std::string report;
  differencer.ReportDifferencesToString(&report);
  if (differencer.Compare(da, db)) return std::nullopt;
  // The reporter's first line, e.g. `modified: replicates: 3 -> 5`.
  const std::vector<std::string> lines = absl::StrSplit(report, '\n');
  std::string first = lines.empty() ? "" : lines.front();
  for (const char* verb : {"modified: ", "added: ", "deleted: "}) {
    if (first.rfind(verb, 0) == 0) first = first.substr(std::string(verb).size());
  }
  return first.empty() ? std::string("their specs differ") : first;
}

absl::StatusOr<PooledCells> PooledCellReplicatesFromStore(
    const ResultStore& store, const std::vector<std::string>& experiments) {
  struct Group {
    v1::ExperimentSpec design;
    std::vector<std::string> names;
    std::vector<std::pair<int, int>> replicates;  // [first, last] of each name
    int next = 0;
  };
  std::vector<Group> groups;
  PooledCells out;
  std::map<std::tuple<std::string, std::string, std::string, int>, std::string> owner;
  for (const std::string& name : experiments) {
    absl::StatusOr<v1::ExperimentSpec> spec = store.GetExperiment(name);
    if (!spec.ok()) return spec.status();
    Group* group = nullptr;
    for (Group& g : groups) {
      if (!DesignDifference(g.design, *spec).has_value()) group = &g;
    }
    if (group == nullptr) {
      groups.push_back({*spec, {}, {}, 0});
      group = &groups.back();
    }
    const int offset = group->next;
    const int replicates = std::max(1, spec->replicates());
    group->names.push_back(name);
    group->replicates.push_back({offset, offset + replicates - 1});
    group->next += replicates;
    absl::StatusOr<std::vector<v1::CellReplicate>> cells = CellReplicatesFromStore(store, name);
    if (!cells.ok()) return cells.status();
    for (v1::CellReplicate& cell : *cells) {
      cell.set_replicate(cell.replicate() + offset);
      const auto key =
          std::make_tuple(cell.model(), cell.direction(), cell.problem_slug(), cell.replicate());
      auto [it, fresh] = owner.emplace(key, name);
      if (!fresh) {
        return absl::FailedPreconditionError(absl::StrCat(
            "experiments '", it->second, "' and '", name, "' both hold model '", cell.model(),
            "', ", cell.direction(), ", ", cell.problem_slug(), ", replicate ", cell.replicate(),
            " and their designs differ (",
            DesignDifference(store.GetExperiment(it->second).value_or(v1::ExperimentSpec()), *spec)
                .value_or("?"),
            "): they cannot be pooled; choose with --experiment"));
      }
      out.cells.push_back(std::move(cell));
    }
  }
  for (const Group& g : groups) {
    if (g.names.size() < 2) continue;
    std::vector<std::string> parts;
    for (size_t i = 0; i < g.names.size(); ++i) {
      parts.push_back(absl::StrCat("'", g.names[i], "' (replicates ", g.replicates[i].first, "-",
                                   g.replicates[i].second, ")"));
    }
    out.notes.push_back(absl::StrCat("experiments ", absl::StrJoin(parts, ", "),
                                     " share a design: pooled as ", g.next, " replicates"));
  }
  return out;
}

}  // namespace mkb
