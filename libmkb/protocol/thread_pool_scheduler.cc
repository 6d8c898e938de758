#include "libmkb/protocol/thread_pool_scheduler.h"

#include <algorithm>
#include <utility>

namespace mkb {

ThreadPoolScheduler::ThreadPoolScheduler(TrialExecutor& executor, int threads)
    : executor_(executor) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

ThreadPoolScheduler::~ThreadPoolScheduler() {
  Wait();
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

void ThreadPoolScheduler::Start(const v1::TrialSpec& spec, TrialObserver* observer, Done done) {
  absl::MutexLock lock(&mutex_);
  queue_.push_back(Job{spec, observer, std::move(done)});
}

void ThreadPoolScheduler::Wait() {
  absl::MutexLock lock(&mutex_);
  mutex_.Await(absl::Condition(
      +[](ThreadPoolScheduler* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mutex_) {
        return self->queue_.empty() && self->active_ == 0;
      },
      this));
}

void ThreadPoolScheduler::WorkerLoop() {
  while (true) {
    Job job;
    {
      absl::MutexLock lock(&mutex_);
      mutex_.Await(absl::Condition(
          +[](ThreadPoolScheduler* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mutex_) {
            return self->stopping_ || !self->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping, nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
      ++active_;
    }
    absl::StatusOr<v1::Attempt> result;
    {
      ScopedTrialObserver scope(job.observer);
      result = executor_.Run(job.spec);
    }
    job.done(std::move(result));
    absl::MutexLock lock(&mutex_);
    --active_;
  }
}

}  // namespace mkb
