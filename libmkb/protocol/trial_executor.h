// The interface through which the protocol (libmkb/protocol) runs one trial. The agent
// (libmkb/agent, AgentTrialExecutor) implements it; tests stand in with fakes.
#ifndef LIBMKB_PROTOCOL_TRIAL_EXECUTOR_H_
#define LIBMKB_PROTOCOL_TRIAL_EXECUTOR_H_

#include "absl/status/statusor.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/experiment.pb.h"

namespace mkb {

// Runs one attempt of a trial to its end and returns it.
// Contract:
//  - A kernel that fails (mismatch, crash, timeout, ...) is an Attempt with its verdicts,
//    never an error status.
//  - A transient failure (LLM API, infrastructure) is an absl::UnavailableError: the protocol
//    archives the try and retries it (up to ExperimentSpec.max_tries tries in all).
//  - Any other error status is a permanent failure of the trial.
// Run may be called concurrently from several threads, with different trials.
class TrialExecutor {
 public:
  virtual ~TrialExecutor() = default;
  virtual absl::StatusOr<v1::Attempt> Run(const v1::TrialSpec& spec) = 0;
};

}  // namespace mkb

#endif  // LIBMKB_PROTOCOL_TRIAL_EXECUTOR_H_
