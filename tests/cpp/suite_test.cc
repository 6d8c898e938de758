#include "libmkb/suite/suite.h"

#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "libmkb/core/file.h"

namespace fs = std::filesystem;

namespace {

const std::string kSuite = std::string(MKB_SOURCE_DIR) + "/problems";
const std::string kProblem28 = kSuite + "/mlp_norm/28_fused_add_rmsnorm_h4096_llama31_8b_bf16";

// A scratch suite holding one copy of problem 28 whose problem.textproto is `text`, placed
// under `family_folder/folder_name`. Removed at destruction.
class ScratchSuite {
 public:
  ScratchSuite(const std::string& text, const std::string& family_folder = "mlp_norm",
               const std::string& folder_name = "28_fused_add_rmsnorm_h4096_llama31_8b_bf16") {
    root_ = fs::temp_directory_path() /
            ("mkb_suite_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    dir_ = root_ / family_folder / folder_name;
    fs::create_directories(dir_);
    fs::copy_file(fs::path(kProblem28) / "reference.py", dir_ / "reference.py");
    std::ofstream(dir_ / "problem.textproto") << text;
  }
  ~ScratchSuite() { fs::remove_all(root_); }
  std::string root() const { return root_.string(); }
  std::string problem_file() const { return (dir_ / "problem.textproto").string(); }

 private:
  static inline int counter_ = 0;
  fs::path root_;
  fs::path dir_;
};

std::string Problem28Text() { return *mkb::ReadFile(kProblem28 + "/problem.textproto"); }

// 1-based line of the first line of `text` containing `needle`.
int LineOf(const std::string& text, const std::string& needle) {
  int line = 1;
  for (size_t i = 0; i < text.find(needle); ++i) line += text[i] == '\n';
  return line;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("the shipped suite loads, ordered by number, with fingerprints") {
  auto suite = mkb::Suite::Load(kSuite);
  REQUIRE(suite.ok());
  REQUIRE(suite->size() >= 3);
  int previous = 0;
  for (const auto& problem : suite->problems()) {
    CHECK(problem.number() > previous);
    previous = problem.number();
    CHECK(problem.fingerprint().size() == 64);
    CHECK(!problem.reference_source().empty());
  }
  auto by_slug = suite->Find("fused_add_rmsnorm_h4096_llama31_8b_bf16");
  REQUIRE(by_slug.ok());
  CHECK((*by_slug)->number() == 28);
  auto by_number = suite->Find("25");
  REQUIRE(by_number.ok());
  CHECK((*by_number)->slug() == "batched_kv_cache_block_copy_remap_uint8");
  CHECK(suite->InFamily(mkb::v1::ATTENTION).size() >= 1);
  CHECK(suite->Matching("*rmsnorm*").size() >= 1);
}

TEST_CASE("an unknown problem suggests near names") {
  auto suite = mkb::Suite::Load(kSuite);
  REQUIRE(suite.ok());
  auto missing = suite->Find("rmsnorm_fused");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(missing.status().message().find("did you mean fused_add_rmsnorm") !=
        absl::string_view::npos);
}

TEST_CASE("malformed problem.textproto gives one line with file:line") {
  const std::string original = Problem28Text();

  SECTION("unknown field") {
    const std::string text = Replace(original, "title:", "colour: \"red\"\ntitle:");
    ScratchSuite suite(text);
    auto loaded = mkb::Suite::Load(suite.root());
    REQUIRE_FALSE(loaded.ok());
    const std::string message(loaded.status().message());
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.rfind(suite.problem_file() + ":" + std::to_string(LineOf(text, "colour")) + ":",
                        0) == 0);
    CHECK(message.find("colour") != std::string::npos);
  }
  SECTION("missing slug") {
    const std::string text = std::regex_replace(original, std::regex("\nslug: [^\n]*"), "");
    ScratchSuite suite(text);
    auto loaded = mkb::Suite::Load(suite.root());
    REQUIRE_FALSE(loaded.ok());
    const std::string message(loaded.status().message());
    CHECK(message.rfind(suite.problem_file() + ":", 0) == 0);
    CHECK(message.find("slug: required") != std::string::npos);
  }
  SECTION("family that does not exist") {
    const std::string text = Replace(original, "family: MLP_NORM", "family: MLP");
    ScratchSuite suite(text);
    auto loaded = mkb::Suite::Load(suite.root());
    REQUIRE_FALSE(loaded.ok());
    const std::string message(loaded.status().message());
    CHECK(message.rfind(
              suite.problem_file() + ":" + std::to_string(LineOf(text, "family: MLP")) + ":", 0) ==
          0);
    CHECK(message.find("MLP") != std::string::npos);
  }
  SECTION("family that disagrees with the folder") {
    const std::string text = Replace(original, "family: MLP_NORM", "family: ATTENTION");
    ScratchSuite suite(text);
    auto loaded = mkb::Suite::Load(suite.root());
    REQUIRE_FALSE(loaded.ok());
    const std::string message(loaded.status().message());
    CHECK(message.rfind(suite.problem_file() + ":" + std::to_string(LineOf(text, "family:")) + ":",
                        0) == 0);
    CHECK(message.find("family: attention but the problem is under 'mlp_norm/'") !=
          std::string::npos);
  }
  SECTION("a validation error points at the line of the field") {
    const std::string text = Replace(original, "min_bytes: 917504", "min_bytes: -1");
    ScratchSuite suite(text);
    auto loaded = mkb::Suite::Load(suite.root());
    REQUIRE_FALSE(loaded.ok());
    const std::string message(loaded.status().message());
    CHECK(message.rfind(
              suite.problem_file() + ":" + std::to_string(LineOf(text, "min_bytes: -1")) + ":",
              0) == 0);
    CHECK(message.find("workloads[1].roofline.min_bytes: must be a finite number > 0") !=
          std::string::npos);
  }
  SECTION("a folder number that disagrees with the file") {
    ScratchSuite suite(original, "mlp_norm", "29_fused_add_rmsnorm_h4096_llama31_8b_bf16");
    auto loaded = mkb::Suite::Load(suite.root());
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().message().find("number: 28 differs from the folder's 29") !=
          absl::string_view::npos);
  }
  SECTION("a folder that is not a family") {
    ScratchSuite suite(original, "norms");
    auto loaded = mkb::Suite::Load(suite.root());
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().message().find("'norms' is not a family folder") !=
          absl::string_view::npos);
  }
}

TEST_CASE("a missing suite folder is NotFound") {
  auto loaded = mkb::Suite::Load("/nonexistent/suite");
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().code() == absl::StatusCode::kNotFound);
  CHECK(loaded.status().message().find("/nonexistent/suite") != absl::string_view::npos);
}
