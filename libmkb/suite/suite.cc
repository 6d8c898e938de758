#include "libmkb/suite/suite.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "libmkb/core/file.h"
#include "libmkb/core/sha256.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/model/names.h"
#include "libmkb/model/validation.h"

namespace mkb {
namespace {

namespace fs = std::filesystem;
using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

// Problem files are small; anything larger is a mistake, not a problem.
constexpr size_t kMaxProblemFileBytes = 1 << 20;
constexpr size_t kMaxReferenceFileBytes = 1 << 20;

// Keeps the first parse error with its position (protobuf reports 0-based lines and columns).
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  explicit FirstErrorCollector(absl::string_view text) : text_(text) {}

  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (has_error_) return;
    has_error_ = true;
    line_ = line + 1;
    column_ = column + 1;
    message_ = message;
    PointAtRejectedValue();
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}

  bool has_error() const { return has_error_; }
  std::string Describe(const std::string& filename) const {
    return absl::StrCat(filename, ":", line_, ":", column_, ": ", message_);
  }

 private:
  // Protobuf reports a rejected enum value at the token after it, often on the next line;
  // move the position back to the value itself.
  void PointAtRejectedValue() {
    static const std::string kEnumError = "Unknown enumeration value of \"";
    const size_t start = message_.find(kEnumError);
    if (start == std::string::npos) return;
    const size_t value_start = start + kEnumError.size();
    const size_t value_end = message_.find('"', value_start);
    if (value_end == std::string::npos) return;
    const std::string value = message_.substr(value_start, value_end - value_start);
    // Offset of the reported position in text_.
    size_t offset = 0;
    for (int line = 1; line < line_ && offset < text_.size(); ++line) {
      offset = text_.find('\n', offset);
      if (offset == absl::string_view::npos) return;
      ++offset;
    }
    offset = std::min(text_.size(), offset + static_cast<size_t>(column_ - 1));
    const size_t found = text_.substr(0, offset).rfind(value);
    if (found == absl::string_view::npos) return;
    line_ = 1 + static_cast<int>(std::count(text_.begin(), text_.begin() + found, '\n'));
    const size_t line_start = text_.substr(0, found).rfind('\n');
    column_ =
        1 + static_cast<int>(found - (line_start == absl::string_view::npos ? 0 : line_start + 1));
  }

  absl::string_view text_;
  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

// Where a validator's field path ("workloads[1].roofline.min_bytes") was set in the file:
// the 1-based line and column of the deepest field of the path that the parse recorded.
std::pair<int, int> LocateFieldPath(const std::string& path,
                                    const google::protobuf::Descriptor* descriptor,
                                    const TextFormat::ParseInfoTree* tree) {
  std::pair<int, int> best = {1, 1};
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (tree == nullptr || descriptor == nullptr) break;
    int index = -1;
    absl::string_view name = part;
    if (const size_t bracket = part.find('['); bracket != absl::string_view::npos) {
      name = part.substr(0, bracket);
      const size_t close = part.find(']', bracket);
      if (close != absl::string_view::npos &&
          !absl::SimpleAtoi(part.substr(bracket + 1, close - bracket - 1), &index)) {
        index = -1;  // a map key: locate the map field itself
      }
    }
    const FieldDescriptor* field = descriptor->FindFieldByName(std::string(name));
    if (field == nullptr) break;
    const int location_index = field->is_repeated() ? std::max(index, 0) : -1;
    const TextFormat::ParseLocation location = tree->GetLocation(field, location_index);
    if (location.line < 0) break;
    best = {location.line + 1, location.column + 1};
    if (field->is_map() || field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) break;
    tree = tree->GetTreeForNested(field, location_index);
    descriptor = field->message_type();
  }
  return best;
}

absl::Status AtLine(const std::string& filename, std::pair<int, int> position,
                    absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(filename, ":", position.first, ":", position.second, ": ", message));
}

absl::StatusOr<v1::Problem> ParseWithInfo(absl::string_view text, const std::string& filename,
                                          TextFormat::ParseInfoTree* tree) {
  v1::Problem problem;
  FirstErrorCollector errors(text);
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(tree);
  if (!parser.ParseFromString(std::string(text), &problem)) {
    if (errors.has_error()) return absl::InvalidArgumentError(errors.Describe(filename));
    return absl::InvalidArgumentError(absl::StrCat(filename, ": cannot parse"));
  }
  if (absl::Status status = ValidateProblem(problem); !status.ok()) {
    const std::string path = FieldPathOf(status).value_or("");
    return AtLine(filename, LocateFieldPath(path, v1::Problem::descriptor(), tree),
                  status.message());
  }
  return problem;
}

// Splits a problem folder name "28_fused_add_rmsnorm" into (28, "fused_add_rmsnorm").
bool SplitProblemFolderName(const std::string& name, int* number, std::string* slug) {
  const size_t underscore = name.find('_');
  if (underscore == std::string::npos || underscore < 2) return false;
  const std::string digits = name.substr(0, underscore);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return absl::ascii_isdigit(c); }))
    return false;
  if (!absl::SimpleAtoi(digits, number)) return false;
  *slug = name.substr(underscore + 1);
  return IsValidSlug(*slug);
}

bool IsSkipped(const std::string& name) { return name.empty() || name[0] == '.' || name[0] == '_'; }

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

absl::StatusOr<v1::Problem> ParseProblem(absl::string_view text, const std::string& filename) {
  TextFormat::ParseInfoTree tree;
  return ParseWithInfo(text, filename, &tree);
}

absl::StatusOr<v1::Problem> LoadProblem(const std::string& problem_dir) {
  const fs::path dir = fs::absolute(fs::path(problem_dir)).lexically_normal();
  const std::string problem_file = (dir / kProblemFileName).string();
  const std::string reference_file = (dir / kReferenceFileName).string();
  MKB_ASSIGN_OR_RETURN(std::string text, ReadFile(problem_file, kMaxProblemFileBytes));
  TextFormat::ParseInfoTree tree;
  MKB_ASSIGN_OR_RETURN(v1::Problem problem, ParseWithInfo(text, problem_file, &tree));
  auto line_of = [&](const char* path) {
    return LocateFieldPath(path, v1::Problem::descriptor(), &tree);
  };

  const std::string folder = dir.filename().string();
  int folder_number = 0;
  std::string folder_slug;
  if (!SplitProblemFolderName(folder, &folder_number, &folder_slug)) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir.string(), ": folder name '", folder,
                     "' must be <NN>_<slug>, e.g. 28_fused_add_rmsnorm_bf16"));
  }
  if (folder_slug != problem.slug()) {
    return AtLine(
        problem_file, line_of("slug"),
        absl::StrCat("slug: '", problem.slug(), "' differs from the folder's '", folder_slug, "'"));
  }
  if (folder_number != problem.number()) {
    return AtLine(
        problem_file, line_of("number"),
        absl::StrCat("number: ", problem.number(), " differs from the folder's ", folder_number));
  }
  const std::string family_folder = dir.parent_path().filename().string();
  if (family_folder != FamilyName(problem.family())) {
    return AtLine(
        problem_file, line_of("family"),
        absl::StrCat("family: ", FamilyName(problem.family()), " but the problem is under '",
                     family_folder, "/'; move it to ", FamilyName(problem.family()), "/"));
  }

  MKB_ASSIGN_OR_RETURN(std::string reference, ReadFile(reference_file, kMaxReferenceFileBytes));
  for (const char* required : {"def reference(", "def make_inputs("}) {
    if (reference.find(required) == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(reference_file, ":1:1: no top-level '", required, "...)' definition"));
    }
  }

  Sha256 fingerprint;
  fingerprint.Update(text);
  fingerprint.Update(absl::string_view("\0", 1));
  fingerprint.Update(reference);
  problem.set_fingerprint(fingerprint.HexDigest());
  problem.set_directory(dir.string());
  problem.set_reference_source(std::move(reference));
  return problem;
}

absl::StatusOr<Suite> Suite::Load(const std::string& root) {
  std::error_code error;
  const fs::path root_path = fs::absolute(fs::path(root), error).lexically_normal();
  if (error || !fs::is_directory(root_path, error)) {
    return absl::NotFoundError(absl::StrCat(root,
                                            ": not a directory (expected a suite folder of "
                                            "<family>/<NN>_<slug>/ problems)"));
  }
  std::vector<fs::path> family_dirs;
  for (const fs::directory_entry& entry : fs::directory_iterator(root_path, error)) {
    if (entry.is_directory() && !IsSkipped(entry.path().filename().string()))
      family_dirs.push_back(entry.path());
  }
  if (error) return absl::InternalError(absl::StrCat(root, ": cannot list: ", error.message()));
  std::sort(family_dirs.begin(), family_dirs.end());

  std::vector<v1::Problem> problems;
  std::map<std::string, std::string> dir_by_slug;
  std::map<int, std::string> dir_by_number;
  for (const fs::path& family_dir : family_dirs) {
    if (!ParseFamily(family_dir.filename().string()).ok()) {
      std::vector<std::string> names;
      for (v1::Family family : AllFamilies()) names.push_back(FamilyName(family));
      return absl::InvalidArgumentError(
          absl::StrCat(family_dir.string(), ": '", family_dir.filename().string(),
                       "' is not a family folder; expected one of: ", absl::StrJoin(names, ", ")));
    }
    std::vector<fs::path> problem_dirs;
    for (const fs::directory_entry& entry : fs::directory_iterator(family_dir, error)) {
      if (entry.is_directory() && !IsSkipped(entry.path().filename().string())) {
        problem_dirs.push_back(entry.path());
      }
    }
    std::sort(problem_dirs.begin(), problem_dirs.end());
    for (const fs::path& problem_dir : problem_dirs) {
      MKB_ASSIGN_OR_RETURN(v1::Problem problem, LoadProblem(problem_dir.string()));
      if (auto [it, inserted] = dir_by_slug.emplace(problem.slug(), problem.directory());
          !inserted) {
        return absl::AlreadyExistsError(absl::StrCat(
            problem.directory(), ": slug '", problem.slug(), "' is also used by ", it->second));
      }
      if (auto [it, inserted] = dir_by_number.emplace(problem.number(), problem.directory());
          !inserted) {
        return absl::AlreadyExistsError(absl::StrCat(
            problem.directory(), ": number ", problem.number(), " is also used by ", it->second));
      }
      problems.push_back(std::move(problem));
    }
  }
  std::sort(problems.begin(), problems.end(),
            [](const v1::Problem& a, const v1::Problem& b) { return a.number() < b.number(); });
  return Suite(root_path.string(), std::move(problems));
}

absl::StatusOr<const v1::Problem*> Suite::Find(absl::string_view slug_or_number) const {
  int number = 0;
  const bool by_number = absl::SimpleAtoi(slug_or_number, &number);
  for (const v1::Problem& problem : problems_) {
    if (problem.slug() == slug_or_number || (by_number && problem.number() == number))
      return &problem;
  }
  std::vector<std::pair<size_t, std::string>> near;
  for (const v1::Problem& problem : problems_) {
    bool contains = !slug_or_number.empty();
    for (absl::string_view word : absl::StrSplit(slug_or_number, '_', absl::SkipEmpty())) {
      contains = contains && absl::StrContains(problem.slug(), word);
    }
    const size_t distance = contains ? 0 : EditDistance(slug_or_number, problem.slug());
    if (contains || distance <= std::max<size_t>(3, slug_or_number.size() / 4)) {
      near.emplace_back(distance, problem.slug());
    }
  }
  std::sort(near.begin(), near.end());
  std::string hint;
  if (!near.empty()) {
    std::vector<std::string> names;
    for (size_t i = 0; i < near.size() && i < 3; ++i) names.push_back(near[i].second);
    hint = absl::StrCat("; did you mean ", absl::StrJoin(names, ", "), "?");
  }
  return absl::NotFoundError(
      absl::StrCat("no problem '", slug_or_number, "' in the suite at ", root_, hint));
}

std::vector<const v1::Problem*> Suite::InFamily(v1::Family family) const {
  std::vector<const v1::Problem*> out;
  for (const v1::Problem& problem : problems_) {
    if (problem.family() == family) out.push_back(&problem);
  }
  return out;
}

std::vector<const v1::Problem*> Suite::Matching(absl::string_view glob) const {
  const std::string pattern(glob);
  std::vector<const v1::Problem*> out;
  for (const v1::Problem& problem : problems_) {
    if (::fnmatch(pattern.c_str(), problem.slug().c_str(), 0) == 0) out.push_back(&problem);
  }
  return out;
}

}  // namespace mkb
