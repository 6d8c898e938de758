// What tokens cost, per model, in US dollars per million tokens. The attempt records its cost
// from this table; nothing is capped by it (SPEC §4).
//
// Entries match model ids ("anthropic/claude-sonnet-4-5") by shell-style pattern
// ("anthropic/claude-sonnet-4*"); the longest matching pattern wins. The built-in table holds
// list prices of a few current models and says when it was written; prices change, so pass
// your own (PriceTable::FromJson / MKB_PRICE_TABLE, a JSON file):
//
//   {"openai/gpt-5*": {"input": 1.25, "cached_input": 0.125, "output": 10.0},
//    "anthropic/claude-sonnet-4*": {"input": 3, "cached_input": 0.3, "cache_write": 3.75,
//                                    "output": 15}}
#ifndef LIBMKB_AGENT_PRICE_TABLE_H_
#define LIBMKB_AGENT_PRICE_TABLE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libmkb/agent/chat.h"

namespace mkb {

struct ModelPrice {
  double input = 0;         // USD per million uncached prompt tokens
  double cached_input = 0;  // USD per million prompt tokens read from a cache
  double cache_write = 0;   // USD per million prompt tokens written to a cache
  double output = 0;        // USD per million output tokens (reasoning included)
};

class PriceTable {
 public:
  // The built-in list prices (see price_table.cc for their date).
  static PriceTable BuiltIn();
  // A table from JSON (the shape above). InvalidArgumentError naming the entry and field.
  static absl::StatusOr<PriceTable> FromJson(absl::string_view json);
  // BuiltIn(), overlaid with the file named by MKB_PRICE_TABLE when that is set.
  static absl::StatusOr<PriceTable> Default();

  // Adds or replaces the price of `pattern`.
  void Set(std::string pattern, ModelPrice price);
  // Entries of `other` replace or add to this table's.
  void Overlay(const PriceTable& other);
  // The price of the longest pattern matching `model_id`.
  std::optional<ModelPrice> Find(absl::string_view model_id) const;
  // USD for `usage` at `model_id`'s price; 0 when the model has no price (or is scripted).
  double Cost(absl::string_view model_id, const TokenUsage& usage) const;

  const std::vector<std::pair<std::string, ModelPrice>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, ModelPrice>> entries_;
};

}  // namespace mkb

#endif  // LIBMKB_AGENT_PRICE_TABLE_H_
