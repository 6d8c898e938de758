#include "libmkb/agent/price_table.h"

#include <fnmatch.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "libmkb/agent/detail/json_util.h"
#include "libmkb/core/file.h"

namespace mkb {

PriceTable PriceTable::BuiltIn() {
  // List prices in USD per million tokens as published by the providers in 2025. They drift:
  // give a price table of your own (MKB_PRICE_TABLE) for accounting that matters.
  PriceTable table;
  table.Set("openai/gpt-5*", {1.25, 0.125, 0, 10.0});
  table.Set("openai/gpt-5-mini*", {0.25, 0.025, 0, 2.0});
  table.Set("openai/gpt-5-nano*", {0.05, 0.005, 0, 0.4});
  table.Set("openai/gpt-4.1*", {2.0, 0.5, 0, 8.0});
  table.Set("openai/gpt-4.1-mini*", {0.4, 0.1, 0, 1.6});
  table.Set("openai/gpt-4o*", {2.5, 1.25, 0, 10.0});
  table.Set("openai/o3*", {2.0, 0.5, 0, 8.0});
  table.Set("openai/o4-mini*", {1.1, 0.275, 0, 4.4});
  table.Set("anthropic/claude-opus-4*", {15.0, 1.5, 18.75, 75.0});
  table.Set("anthropic/claude-opus-4-5*", {5.0, 0.5, 6.25, 25.0});
  table.Set("anthropic/claude-sonnet-4*", {3.0, 0.3, 3.75, 15.0});
  table.Set("anthropic/claude-haiku-4*", {1.0, 0.1, 1.25, 5.0});
  table.Set("anthropic/claude-3-5-haiku*", {0.8, 0.08, 1.0, 4.0});
  table.Set("scripted/*", {0, 0, 0, 0});
  return table;
}

absl::StatusOr<PriceTable> PriceTable::FromJson(absl::string_view text) {
  nlohmann::json root = detail::ParseJson(text);
  if (root.is_discarded() || !root.is_object()) {
    return absl::InvalidArgumentError("price table: not a JSON object of model patterns");
  }
  PriceTable table;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it.value().is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat("price table['", it.key(), "']: must be an object"));
    }
    ModelPrice price;
    for (auto field = it.value().begin(); field != it.value().end(); ++field) {
      double* target = field.key() == "input"          ? &price.input
                       : field.key() == "cached_input" ? &price.cached_input
                       : field.key() == "cache_write"  ? &price.cache_write
                       : field.key() == "output"       ? &price.output
                                                       : nullptr;
      if (target == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("price table['", it.key(), "'].", field.key(),
                         ": unknown field (input, cached_input, cache_write, output)"));
      }
      if (!field.value().is_number() || field.value().get<double>() < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("price table['", it.key(), "'].", field.key(), ": must be a number >= 0"));
      }
      *target = field.value().get<double>();
    }
    table.Set(it.key(), price);
  }
  return table;
}

absl::StatusOr<PriceTable> PriceTable::Default() {
  PriceTable table = BuiltIn();
  const std::string path = detail::GetEnv("MKB_PRICE_TABLE");
  if (path.empty()) return table;
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<PriceTable> custom = FromJson(*text);
  if (!custom.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", custom.status().message()));
  }
  table.Overlay(*custom);
  return table;
}

void PriceTable::Set(std::string pattern, ModelPrice price) {
  for (auto& [p, existing] : entries_) {
    if (p == pattern) {
      existing = price;
      return;
    }
  }
  entries_.emplace_back(std::move(pattern), price);
}

void PriceTable::Overlay(const PriceTable& other) {
  for (const auto& [pattern, price] : other.entries_) Set(pattern, price);
}

std::optional<ModelPrice> PriceTable::Find(absl::string_view model_id) const {
  const std::string id(model_id);
  const std::pair<std::string, ModelPrice>* best = nullptr;
  for (const auto& entry : entries_) {
    if (::fnmatch(entry.first.c_str(), id.c_str(), 0) != 0) continue;
    if (best == nullptr || entry.first.size() > best->first.size()) best = &entry;
  }
  if (best == nullptr) return std::nullopt;
  return best->second;
}

double PriceTable::Cost(absl::string_view model_id, const TokenUsage& usage) const {
  const std::optional<ModelPrice> price = Find(model_id);
  if (!price.has_value()) return 0;
  const int64_t uncached = std::max<int64_t>(
      0, usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens);
  return (uncached * price->input + usage.cached_input_tokens * price->cached_input +
          usage.cache_write_tokens * price->cache_write + usage.output_tokens * price->output) /
         1e6;
}

}  // namespace mkb
