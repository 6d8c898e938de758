#include "libmkb/protocol/trial_observer.h"

namespace mkb {
namespace {

thread_local TrialObserver* current_observer = nullptr;

}  // namespace

TrialObserver* CurrentTrialObserver() { return current_observer; }

ScopedTrialObserver::ScopedTrialObserver(TrialObserver* observer) : previous_(current_observer) {
  current_observer = observer;
}

ScopedTrialObserver::~ScopedTrialObserver() { current_observer = previous_; }

}  // namespace mkb
