#include "libmkb/model/published_outcome.h"

#include <catch2/catch_test_macros.hpp>

namespace {

mkb::v1::VerdictStatus Status(bool has_rewards, bool imported, bool correct, bool passed,
                              bool error, bool mismatch) {
  mkb::PublishedOutcome outcome;
  outcome.has_rewards = has_rewards;
  outcome.imported = imported;
  outcome.correct = correct;
  outcome.passed = passed;
  outcome.error = error;
  outcome.mismatch = mismatch;
  return mkb::StatusOfPublishedOutcome(outcome);
}

}  // namespace

TEST_CASE("the published harness's rewards read as verdict statuses") {
  // A pass is a pass whatever else was recorded.
  CHECK(Status(true, true, true, true, true, true) == mkb::v1::PASSED);
  // No rewards at all: no kernel.py was collected.
  CHECK(Status(false, false, false, false, false, false) == mkb::v1::INVALID_SUBMISSION);
  CHECK(Status(true, true, true, false, false, false) == mkb::v1::CORRECT);
  // Imported but not correct: an error without a mismatch note is the kernel raising.
  CHECK(Status(true, true, false, false, true, false) == mkb::v1::EXCEPTION);
  CHECK(Status(true, true, false, false, true, true) == mkb::v1::MISMATCH);
  CHECK(Status(true, true, false, false, false, false) == mkb::v1::MISMATCH);
  CHECK(Status(true, false, false, false, true, false) == mkb::v1::IMPORT_ERROR);
}

TEST_CASE("the published submission log's entries read as verdict statuses") {
  CHECK(mkb::StatusOfPublishedSubmission(true, true) == mkb::v1::PASSED);
  CHECK(mkb::StatusOfPublishedSubmission(true, false) == mkb::v1::MISMATCH);
  CHECK(mkb::StatusOfPublishedSubmission(false, true) == mkb::v1::INVALID_SUBMISSION);
}
