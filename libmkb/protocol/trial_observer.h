// Live reports from a running trial, optional for executors.
//
// The protocol installs an observer around each TrialExecutor::Run call, on the thread that
// calls Run. An executor that can report progress takes it with CurrentTrialObserver() at the
// start of Run (it may be nullptr) and may call it from any thread until Run returns, never
// after. What Run returns stays authoritative: the store keeps the reports only so that a
// process that dies mid-attempt leaves what happened so far, and progress displays show them.
#ifndef LIBMKB_PROTOCOL_TRIAL_OBSERVER_H_
#define LIBMKB_PROTOCOL_TRIAL_OBSERVER_H_

#include "mkb/v1/attempt.pb.h"

namespace mkb {

// Implementations are thread-safe: calls may come from several threads at once.
class TrialObserver {
 public:
  virtual ~TrialObserver() = default;
  // One step of the trajectory, as soon as it is complete (event.index increasing from 0).
  virtual void OnTrajectoryEvent(const v1::TrajectoryEvent& event) {}
  // A submission with its verdict, as soon as the judge returned it.
  virtual void OnSubmission(const v1::Submission& submission) {}
  // The attempt's usage so far (totals, not increments).
  virtual void OnUsage(const v1::Usage& usage_so_far) {}
};

// The observer installed on the calling thread, or nullptr.
TrialObserver* CurrentTrialObserver();

// Installs `observer` on the calling thread for the scope's lifetime (restoring the previous
// one after). Not movable: it restores thread-local state in its destructor.
class ScopedTrialObserver {
 public:
  explicit ScopedTrialObserver(TrialObserver* observer);
  ~ScopedTrialObserver();
  ScopedTrialObserver(const ScopedTrialObserver&) = delete;
  ScopedTrialObserver& operator=(const ScopedTrialObserver&) = delete;

 private:
  TrialObserver* previous_;
};

}  // namespace mkb

#endif  // LIBMKB_PROTOCOL_TRIAL_OBSERVER_H_
