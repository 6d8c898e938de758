// Where and when trials run. The protocol decides which trials are ready and how many may be
// in flight; a scheduler runs them. The local one (ThreadPoolScheduler) calls a TrialExecutor
// on worker threads; a distributed backend would ship the spec to a worker machine and report
// back, without the protocol changing.
#ifndef LIBMKB_PROTOCOL_TRIAL_SCHEDULER_H_
#define LIBMKB_PROTOCOL_TRIAL_SCHEDULER_H_

#include <functional>

#include "absl/status/statusor.h"
#include "libmkb/protocol/trial_observer.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/experiment.pb.h"

namespace mkb {

class TrialScheduler {
 public:
  // Receives what TrialExecutor::Run returned (an UnavailableError: a transient failure).
  using Done = std::function<void(absl::StatusOr<v1::Attempt>)>;

  virtual ~TrialScheduler() = default;

  // Runs the trial `spec` and calls `done` exactly once, from any thread, when it has ended.
  // `observer` (may be nullptr) receives the trial's live reports until `done` is called; the
  // caller keeps it alive until then. Start does not block on the trial; the protocol never
  // has more trials started and not done than the experiment's concurrency.
  virtual void Start(const v1::TrialSpec& spec, TrialObserver* observer, Done done) = 0;

  // Blocks until every started trial's `done` has returned.
  virtual void Wait() = 0;
};

}  // namespace mkb

#endif  // LIBMKB_PROTOCOL_TRIAL_SCHEDULER_H_
