// A bound on concurrent evaluations (the GPUs a judge may use at once). The time an attempt
// waits here is GPU queueing: logged, and excluded from its agent wall-clock (SPEC §4).
#ifndef LIBMKB_AGENT_EVALUATION_SLOTS_H_
#define LIBMKB_AGENT_EVALUATION_SLOTS_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace mkb {

// Thread-safe counting semaphore. Not movable: leases point into it.
class EvaluationSlots {
 public:
  // Returns its slot on destruction. Move-only.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : slots_(other.slots_) { other.slots_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (slots_ != nullptr) slots_->Release();
    }

   private:
    friend class EvaluationSlots;
    explicit Lease(EvaluationSlots* slots) : slots_(slots) {}
    EvaluationSlots* slots_;
  };

  explicit EvaluationSlots(int slots) : free_(slots > 0 ? slots : 1) {}
  EvaluationSlots(const EvaluationSlots&) = delete;
  EvaluationSlots& operator=(const EvaluationSlots&) = delete;

  // Blocks until a slot is free; `waited` receives the time spent waiting.
  Lease Acquire(absl::Duration* waited) {
    const absl::Time start = absl::Now();
    absl::MutexLock lock(&mutex_);
    mutex_.Await(absl::Condition(+[](int* free) { return *free > 0; }, &free_));
    --free_;
    if (waited != nullptr) *waited = absl::Now() - start;
    return Lease(this);
  }

 private:
  void Release() {
    absl::MutexLock lock(&mutex_);
    ++free_;
  }

  absl::Mutex mutex_;
  int free_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mkb

#endif  // LIBMKB_AGENT_EVALUATION_SLOTS_H_
