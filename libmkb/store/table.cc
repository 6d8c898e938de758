#include "libmkb/store/table.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mkb {
namespace {

std::string RealText(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return absl::StrFormat("%.17g", value);
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

int Table::ColumnIndex(const std::string& column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == column) return static_cast<int>(i);
  }
  return -1;
}

absl::Status WriteCsv(const Table& table, std::ostream& out) {
  for (size_t i = 0; i < table.columns.size(); ++i) {
    out << (i ? "," : "") << CsvField(table.columns[i]);
  }
  out << "\r\n";
  for (const auto& row : table.rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) out << ',';
      if (const auto* v = std::get_if<bool>(&row[i])) out << (*v ? "True" : "False");
      if (const auto* v = std::get_if<int64_t>(&row[i])) out << *v;
      if (const auto* v = std::get_if<double>(&row[i])) out << RealText(*v);
      if (const auto* v = std::get_if<std::string>(&row[i])) out << CsvField(*v);
    }
    out << "\r\n";
  }
  if (!out)
    return absl::InternalError(absl::StrCat("writing table ", table.name, " as CSV failed"));
  return absl::OkStatus();
}

absl::Status WriteJsonLines(const Table& table, std::ostream& out) {
  const size_t suffix = sizeof(kJsonColumnSuffix) - 1;
  for (const auto& row : table.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string& column = table.columns[i];
      const bool is_json = absl::EndsWith(column, kJsonColumnSuffix);
      const std::string key = is_json ? column.substr(0, column.size() - suffix) : column;
      nlohmann::ordered_json value;  // null
      if (const auto* v = std::get_if<bool>(&row[i])) value = *v;
      if (const auto* v = std::get_if<int64_t>(&row[i])) value = *v;
      if (const auto* v = std::get_if<double>(&row[i])) {
        if (std::isfinite(*v)) value = *v;
      }
      if (const auto* v = std::get_if<std::string>(&row[i])) {
        if (is_json) {
          value = nlohmann::ordered_json::parse(*v, nullptr, /*allow_exceptions=*/false);
          if (value.is_discarded()) {
            return absl::InternalError(
                absl::StrCat("table ", table.name, " column ", column, ": not JSON"));
          }
        } else {
          value = *v;
        }
      }
      object[key] = std::move(value);
    }
    // Invalid UTF-8 (a kernel's bytes) is replaced rather than failing the export.
    out << object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  }
  if (!out) {
    return absl::InternalError(absl::StrCat("writing table ", table.name, " as JSON Lines failed"));
  }
  return absl::OkStatus();
}

}  // namespace mkb
