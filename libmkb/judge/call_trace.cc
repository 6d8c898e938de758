#include "libmkb/judge/call_trace.h"

#include <algorithm>
#include <limits>

namespace mkb {

v1::CallTrace SummarizeCall(const std::vector<v1::ActivityRecord>& records, uint64_t begin_ns) {
  v1::CallTrace trace;
  trace.set_method("cupti");
  uint64_t first = std::numeric_limits<uint64_t>::max(), last = 0, kernel_ns = 0;
  for (const v1::ActivityRecord& r : records) {
    if (r.start_ns() < begin_ns || r.end_ns() < r.start_ns()) continue;
    first = std::min(first, r.start_ns());
    last = std::max(last, r.end_ns());
    if (r.kind() == v1::ActivityRecord::KERNEL) kernel_ns += r.end_ns() - r.start_ns();
    *trace.add_records() = r;
  }
  trace.set_span_ms(last > first ? static_cast<double>(last - first) * 1e-6 : 0.0);
  trace.set_kernel_sum_ms(static_cast<double>(kernel_ns) * 1e-6);
  return trace;
}

absl::Status CallTracer::Begin() {
  // No flush here: a forced flush makes CUPTI ask for a new buffer at the next activity, which
  // would then fall inside the timed call (measured on the H200: +0.5 ms per call). Whatever ran
  // before (the L2 flush, earlier calls) is drained at End() and dropped there by its timestamp.
  auto now = source_->Now();
  if (!now.ok()) return now.status();
  begin_ns_ = *now;
  dropped_at_begin_ = source_->dropped_records();
  return absl::OkStatus();
}

absl::StatusOr<v1::CallTrace> CallTracer::End() {
  auto records = source_->Drain();
  if (!records.ok()) return records.status();
  v1::CallTrace trace = SummarizeCall(*records, begin_ns_);
  trace.set_dropped_records(source_->dropped_records() - dropped_at_begin_);
  return trace;
}

}  // namespace mkb
