// The local TrialScheduler: a fixed pool of threads, each running one trial at a time through
// a TrialExecutor.
#ifndef LIBMKB_PROTOCOL_THREAD_POOL_SCHEDULER_H_
#define LIBMKB_PROTOCOL_THREAD_POOL_SCHEDULER_H_

#include <deque>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "libmkb/protocol/trial_executor.h"
#include "libmkb/protocol/trial_scheduler.h"

namespace mkb {

class ThreadPoolScheduler : public TrialScheduler {
 public:
  // `executor` must outlive the scheduler; its Run is called from up to `threads` threads at
  // once (at least 1).
  ThreadPoolScheduler(TrialExecutor& executor, int threads);
  // Waits for started trials, then joins the threads.
  ~ThreadPoolScheduler() override;
  // Not movable: the worker threads hold `this`.
  ThreadPoolScheduler(const ThreadPoolScheduler&) = delete;
  ThreadPoolScheduler& operator=(const ThreadPoolScheduler&) = delete;

  void Start(const v1::TrialSpec& spec, TrialObserver* observer, Done done) override;
  void Wait() override;

 private:
  struct Job {
    v1::TrialSpec spec;
    TrialObserver* observer;
    Done done;
  };
  void WorkerLoop();

  TrialExecutor& executor_;
  absl::Mutex mutex_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mutex_);
  int active_ ABSL_GUARDED_BY(mutex_) = 0;  // jobs taken and not done
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace mkb

#endif  // LIBMKB_PROTOCOL_THREAD_POOL_SCHEDULER_H_
