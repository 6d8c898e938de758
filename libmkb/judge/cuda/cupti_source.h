// CUPTI activity tracing as an ActivitySource: the one process-wide owner of CUPTI's activity
// API. libcupti is loaded at run time (dlopen), so libmkb runs where it is missing.
#ifndef LIBMKB_JUDGE_CUDA_CUPTI_SOURCE_H_
#define LIBMKB_JUDGE_CUDA_CUPTI_SOURCE_H_

#include <string>
#include <vector>

#include "libmkb/judge/call_trace.h"

namespace mkb::cuda {

// The process-wide CUPTI source. `library_dirs` are searched for libcupti.so.13 before the
// loader's own path (e.g. the CUDA toolkit's lib directory, or pip's nvidia/cuda_cupti/lib).
// UnavailableError when libcupti cannot be loaded.
absl::StatusOr<ActivitySource*> CuptiActivitySource(const std::vector<std::string>& library_dirs);

// libcupti, loaded once for the process (the activity source and the launch monitor share it).
absl::StatusOr<void*> CuptiLibraryHandle(const std::vector<std::string>& library_dirs);

}  // namespace mkb::cuda

#endif  // LIBMKB_JUDGE_CUDA_CUPTI_SOURCE_H_
