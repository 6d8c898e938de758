#include "libmkb/judge/cuda/cupti_source.h"

#include <cupti_activity.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libmkb/core/utf8.h"

namespace mkb::cuda {
namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kBufferAlignment = 8;
constexpr size_t kPooledBuffers = 4;
// At most this many buffers (512 MiB, some 2.6 M kernel records) are out with CUPTI at once, so
// that a kernel flooding launches cannot make the judge allocate without bound. Past it a request
// gets none: CUPTI drops those records and the loss is counted (dropped_records; the runtime
// audit refuses a timed call with any: runtime.dropped_records).
constexpr size_t kMaxOutstandingBuffers = 64;

// Evaluates a CUPTI call through the resolved entry points; returns its failure from the
// enclosing member function as a Status naming the call, its file:line and CUPTI's error.
#define MKB_CUPTI_CALL(expr)                                                         \
  do {                                                                               \
    if (::absl::Status mkb_cupti_status_ = Check((expr), #expr, __FILE__, __LINE__); \
        !mkb_cupti_status_.ok()) {                                                   \
      return mkb_cupti_status_;                                                      \
    }                                                                                \
  } while (false)

// The CUPTI entry points we use, resolved from libcupti at run time.
struct CuptiApi {
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
};

// A memcpy or memset record (their CUPTI structs share these fields).
template <typename Record>
v1::ActivityRecord CopyRecord(const Record& m, v1::ActivityRecord::Kind kind) {
  v1::ActivityRecord r;
  r.set_kind(kind);
  r.set_start_ns(m.start);
  r.set_end_ns(m.end);
  r.set_stream(m.streamId);
  r.set_graph_id(m.graphId);
  r.set_bytes(m.bytes);
  r.set_correlation_id(m.correlationId);
  return r;
}

class CuptiSource final : public ActivitySource {
 public:
  static CuptiSource& Instance() {
    static auto* instance = new CuptiSource();  // never destroyed: CUPTI may call back at exit
    return *instance;
  }

  absl::Status Load(const std::vector<std::string>& dirs) {
    absl::MutexLock lock(&mutex_);
    if (handle_ != nullptr) return absl::OkStatus();
    absl::StatusOr<void*> handle = CuptiLibraryHandle(dirs);
    if (!handle.ok()) return handle.status();
    handle_ = *handle;
    bool ok = true;
    auto resolve = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle_, name));
      ok &= fn != nullptr;
    };
    resolve(api_.ActivityEnable, "cuptiActivityEnable");
    resolve(api_.ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
    resolve(api_.ActivityFlushAll, "cuptiActivityFlushAll");
    resolve(api_.ActivityGetNextRecord, "cuptiActivityGetNextRecord");
    resolve(api_.ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
    resolve(api_.GetTimestamp, "cuptiGetTimestamp");
    resolve(api_.GetResultString, "cuptiGetResultString");
    if (!ok) return absl::UnavailableError("libcupti lacks an entry point the judge needs");
    return absl::OkStatus();
  }

  absl::Status Start() override {
    if (started_) return absl::OkStatus();
    MKB_CUPTI_CALL(api_.ActivityRegisterCallbacks(&BufferRequested, &BufferCompleted));
    for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}) {
      MKB_CUPTI_CALL(api_.ActivityEnable(kind));
    }
    started_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<uint64_t> Now() override {
    uint64_t now = 0;
    MKB_CUPTI_CALL(api_.GetTimestamp(&now));
    return now;
  }

  absl::StatusOr<std::vector<v1::ActivityRecord>> Drain() override {
    // Never hold our lock while CUPTI flushes: it calls BufferCompleted, which takes it.
    MKB_CUPTI_CALL(api_.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    absl::MutexLock lock(&mutex_);
    std::vector<v1::ActivityRecord> out;
    out.swap(pending_);
    return out;
  }

  // Records CUPTI reported lost, plus one for each buffer request refused at the cap (at least
  // one record was lost there).
  uint64_t dropped_records() override {
    uint64_t refused = 0;
    {
      absl::MutexLock lock(&pool_mutex_);
      refused = refused_buffers_;
    }
    absl::MutexLock lock(&mutex_);
    return dropped_ + refused;
  }

 private:
  absl::Status Check(CUptiResult result, const char* call, const char* file, int line) {
    if (result == CUPTI_SUCCESS) return absl::OkStatus();
    const char* text = "unknown";
    if (api_.GetResultString != nullptr) api_.GetResultString(result, &text);
    const std::string message = absl::StrCat(call, " failed at ", file, ":", line, ": ", text,
                                             " (CUPTI error ", static_cast<int>(result), ")");
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
        result == CUPTI_ERROR_NOT_INITIALIZED || result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
      return absl::FailedPreconditionError(message);
    }
    return absl::InternalError(message);
  }

  // Buffers are recycled: a fresh 8 MiB allocation (mmap, page faults) whenever CUPTI asks would
  // land in whichever call CUPTI asks during.
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = Instance().TakeBuffer();
    *size = *buffer != nullptr ? kBufferBytes : 0;
    *max_records = 0;
  }

  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer,
                                       size_t size, size_t valid) {
    Instance().Consume(context, stream, buffer, valid);
    Instance().ReturnBuffer(buffer);
  }

  uint8_t* TakeBuffer() {
    {
      absl::MutexLock lock(&pool_mutex_);
      if (outstanding_ >= kMaxOutstandingBuffers) {
        ++refused_buffers_;
        return nullptr;
      }
      ++outstanding_;
      if (!pool_.empty()) {
        uint8_t* buffer = pool_.back();
        pool_.pop_back();
        return buffer;
      }
    }
    auto* buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
    if (buffer == nullptr) {
      absl::MutexLock lock(&pool_mutex_);
      --outstanding_;
      ++refused_buffers_;
    }
    return buffer;
  }

  void ReturnBuffer(uint8_t* buffer) {
    if (buffer == nullptr) return;
    {
      absl::MutexLock lock(&pool_mutex_);
      --outstanding_;
      if (pool_.size() < kPooledBuffers) {
        pool_.push_back(buffer);
        return;
      }
    }
    std::free(buffer);
  }

  void Consume(CUcontext context, uint32_t stream, uint8_t* buffer, size_t valid) {
    std::vector<v1::ActivityRecord> parsed;
    CUpti_Activity* record = nullptr;
    while (api_.ActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      v1::ActivityRecord r;
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
          r.set_kind(v1::ActivityRecord::KERNEL);
          // A kernel's name is the bytes its module holds; the record's name is a proto string.
          r.set_name(ToValidUtf8(k->name != nullptr ? k->name : ""));
          r.set_start_ns(k->start);
          r.set_end_ns(k->end);
          r.set_stream(k->streamId);
          r.set_graph_id(k->graphId);
          r.set_correlation_id(k->correlationId);
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY:
          r = CopyRecord(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record),
                         v1::ActivityRecord::MEMCPY);
          break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
          r = CopyRecord(*reinterpret_cast<const CUpti_ActivityMemset4*>(record),
                         v1::ActivityRecord::MEMSET);
          break;
        default:
          continue;
      }
      parsed.push_back(std::move(r));
    }
    size_t dropped = 0;
    api_.ActivityGetNumDroppedRecords(context, stream, &dropped);
    absl::MutexLock lock(&mutex_);
    for (v1::ActivityRecord& r : parsed) pending_.push_back(std::move(r));
    dropped_ += dropped;
  }

  absl::Mutex pool_mutex_;
  std::vector<uint8_t*> pool_ ABSL_GUARDED_BY(pool_mutex_);
  size_t outstanding_ ABSL_GUARDED_BY(pool_mutex_) = 0;        // with CUPTI now
  uint64_t refused_buffers_ ABSL_GUARDED_BY(pool_mutex_) = 0;  // requests past the cap
  absl::Mutex mutex_;
  void* handle_ ABSL_GUARDED_BY(mutex_) = nullptr;
  CuptiApi api_;
  bool started_ = false;
  std::vector<v1::ActivityRecord> pending_ ABSL_GUARDED_BY(mutex_);
  uint64_t dropped_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace

absl::StatusOr<void*> CuptiLibraryHandle(const std::vector<std::string>& library_dirs) {
  static absl::Mutex mutex(absl::kConstInit);
  static void* handle ABSL_GUARDED_BY(mutex) = nullptr;
  absl::MutexLock lock(&mutex);
  if (handle != nullptr) return handle;
  std::vector<std::string> candidates;
  for (const std::string& dir : library_dirs) {
    candidates.push_back(absl::StrCat(dir, "/libcupti.so.13"));
    candidates.push_back(absl::StrCat(dir, "/libcupti.so"));
  }
  for (const char* name : {"libcupti.so.13", "libcupti.so"}) candidates.push_back(name);
  std::string tried;
  for (const std::string& candidate : candidates) {
    handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return handle;
    absl::StrAppend(&tried, "\n  ", candidate, ": ", ::dlerror());
  }
  return absl::UnavailableError(absl::StrCat("cannot load libcupti:", tried));
}

absl::StatusOr<ActivitySource*> CuptiActivitySource(const std::vector<std::string>& library_dirs) {
  CuptiSource& source = CuptiSource::Instance();
  if (auto status = source.Load(library_dirs); !status.ok()) return status;
  return &source;
}

}  // namespace mkb::cuda

#undef MKB_CUPTI_CALL
