// GPU activity of one timed call: where it comes from (an ActivitySource: CUPTI on a GPU, a
// stand-in in tests) and what it sums to (span, kernel time).
#ifndef LIBMKB_JUDGE_CALL_TRACE_H_
#define LIBMKB_JUDGE_CALL_TRACE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "mkb/v1/judge.pb.h"

namespace mkb {

// A source of GPU activity records. Implementations are process-wide (CUPTI's callbacks are);
// tests substitute one that replays records.
class ActivitySource {
 public:
  virtual ~ActivitySource() = default;
  // Starts collecting kernel, memcpy and memset activity. FailedPreconditionError when another
  // tool holds the profiler.
  virtual absl::Status Start() = 0;
  // The GPU's timestamp now, in ns (the clock activity records use).
  virtual absl::StatusOr<uint64_t> Now() = 0;
  // Flushes and returns every record completed since the last Drain.
  virtual absl::StatusOr<std::vector<v1::ActivityRecord>> Drain() = 0;
  // Records lost so far because buffers were full.
  virtual uint64_t dropped_records() = 0;
};

// The span (first start to last end over every stream) and kernel sum of the records that
// started at or after `begin_ns`; earlier ones (the judge's L2 flush, previous calls) are left
// out. Records keep their order.
v1::CallTrace SummarizeCall(const std::vector<v1::ActivityRecord>& records, uint64_t begin_ns);

// Brackets one call: Begin() marks the start; End() drains and summarises what the GPU did
// since. Not thread-safe: one call at a time.
class CallTracer {
 public:
  explicit CallTracer(ActivitySource* source) : source_(source) {}
  absl::Status Begin();
  absl::StatusOr<v1::CallTrace> End();

 private:
  ActivitySource* source_;
  uint64_t begin_ns_ = 0;
  uint64_t dropped_at_begin_ = 0;
};

}  // namespace mkb

#endif  // LIBMKB_JUDGE_CALL_TRACE_H_
