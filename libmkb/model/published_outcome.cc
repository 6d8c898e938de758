#include "libmkb/model/published_outcome.h"

namespace mkb {

v1::VerdictStatus StatusOfPublishedOutcome(const PublishedOutcome& outcome) {
  if (outcome.passed) return v1::PASSED;
  if (!outcome.has_rewards) return v1::INVALID_SUBMISSION;
  if (outcome.correct) return v1::CORRECT;
  if (outcome.imported) {
    return outcome.error && !outcome.mismatch ? v1::EXCEPTION : v1::MISMATCH;
  }
  return v1::IMPORT_ERROR;
}

v1::VerdictStatus StatusOfPublishedSubmission(bool counted, bool passed) {
  if (!counted) return v1::INVALID_SUBMISSION;
  return passed ? v1::PASSED : v1::MISMATCH;
}

}  // namespace mkb
