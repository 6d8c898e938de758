// How an outcome recorded by the published harness reads as a verdict status: the one mapping
// the upstream importer (metakernelbench.upstream) applies to the harness's rewards and its
// submission log, so that an imported trial and a judged one use the same vocabulary.
#ifndef LIBMKB_MODEL_PUBLISHED_OUTCOME_H_
#define LIBMKB_MODEL_PUBLISHED_OUTCOME_H_

#include "mkb/v1/verdict.pb.h"

namespace mkb {

// The harness's final rewards for one trial, as flags.
struct PublishedOutcome {
  bool has_rewards = false;  // it recorded rewards at all (none: no kernel.py was collected)
  bool imported = false;     // rewards.imported >= 1
  bool correct = false;      // rewards.correct >= 1 (every correctness draw matched)
  bool passed = false;       // rewards.passed >= 1
  bool error = false;        // its details carry an error text
  bool mismatch = false;     // its details carry a mismatch note
};

// passed > correct (timed, not passed) > imported (an error without a mismatch is an exception,
// else a mismatch) > import_error; no rewards at all is an invalid submission.
v1::VerdictStatus StatusOfPublishedOutcome(const PublishedOutcome& outcome);

// One entry of the harness's submission log: a counted submission passed or mismatched (the log
// records no more than that); an uncounted one was refused before judging.
v1::VerdictStatus StatusOfPublishedSubmission(bool counted, bool passed);

}  // namespace mkb

#endif  // LIBMKB_MODEL_PUBLISHED_OUTCOME_H_
