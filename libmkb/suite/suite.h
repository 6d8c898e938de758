// The problem suite: a folder of problems laid out as <root>/<family>/<NN>_<slug>/, each with
// problem.textproto (an mkb.v1.Problem) and reference.py (docs/problem-format.md).
#ifndef LIBMKB_SUITE_SUITE_H_
#define LIBMKB_SUITE_SUITE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mkb/v1/problem.pb.h"

namespace mkb {

inline constexpr char kProblemFileName[] = "problem.textproto";
inline constexpr char kReferenceFileName[] = "reference.py";

// Parses and validates the text of a problem.textproto. `filename` is used in errors, which
// are one line: "<filename>:<line>:<column>: <what is wrong>".
absl::StatusOr<v1::Problem> ParseProblem(absl::string_view text, const std::string& filename);

// Loads one problem folder: parses problem.textproto, checks it against the folder's name
// (<NN>_<slug>) and family (its parent folder), reads reference.py and fills the loader-set
// fields (fingerprint, directory, reference_source).
absl::StatusOr<v1::Problem> LoadProblem(const std::string& problem_dir);

// An immutable, loaded suite, problems ordered by number.
class Suite {
 public:
  // Loads every problem under `root`. Folders whose names start with '.' or '_' are skipped.
  static absl::StatusOr<Suite> Load(const std::string& root);

  const std::string& root() const { return root_; }
  const std::vector<v1::Problem>& problems() const { return problems_; }
  size_t size() const { return problems_.size(); }

  // By slug, or by number written as digits ("28", "02"). NotFoundError suggests near names.
  absl::StatusOr<const v1::Problem*> Find(absl::string_view slug_or_number) const;
  std::vector<const v1::Problem*> InFamily(v1::Family family) const;
  // Problems whose slug matches a shell-style glob ("*rmsnorm*", "gqa_*").
  std::vector<const v1::Problem*> Matching(absl::string_view glob) const;

 private:
  Suite(std::string root, std::vector<v1::Problem> problems)
      : root_(std::move(root)), problems_(std::move(problems)) {}

  std::string root_;
  std::vector<v1::Problem> problems_;
};

}  // namespace mkb

#endif  // LIBMKB_SUITE_SUITE_H_
