#include "libmkb/judge/cuda/launch_monitor.h"

#include <cupti.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libmkb/core/utf8.h"
#include "libmkb/judge/cuda/cupti_source.h"

namespace mkb::cuda {
namespace {

// The entry points used, resolved at run time (libmkb loads without a driver or CUPTI).
struct Api {
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
  CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUresult (*FuncGetModule)(CUmodule*, CUfunction) = nullptr;
  CUresult (*ModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*FuncGetName)(const char**, CUfunction) = nullptr;  // optional (CUDA 12.3+)
};

// The no-op that replaces the DSL's kernels in the knockout draw (PTX, JIT-compiled for any
// architecture the driver supports).
constexpr char kNoopPtx[] =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry mkb_knockout_noop()\n{\n\tret;\n}\n";

struct ThreadState {
  int runtime_depth = 0;     // inside a CUDA runtime API call
  int dsl_loader_depth = 0;  // inside the DSL's own module loader (marked by the harness)
  int judge_depth = 0;       // the judge's own GPU work
  LaunchOrigin pending_load = LaunchOrigin::kRaw;
  std::string pending_evidence;
};
thread_local ThreadState t_state;

class Monitor {
 public:
  static Monitor& Instance() {
    static auto* instance = new Monitor();  // never destroyed: CUPTI may call back at exit
    return *instance;
  }

  absl::Status Start(const std::vector<std::string>& cupti_dirs,
                     const std::vector<std::string>& dsl_native_dirs) {
    absl::MutexLock lock(&mutex_);
    if (started_) return absl::OkStatus();
    absl::StatusOr<void*> cupti = CuptiLibraryHandle(cupti_dirs);
    if (!cupti.ok()) return cupti.status();
    void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (driver == nullptr) driver = ::dlopen("libcuda.so.1", RTLD_NOW);
    if (driver == nullptr) return absl::UnavailableError("cannot load libcuda.so.1");
    bool ok = true;
    auto resolve = [&](void* lib, auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
      ok &= fn != nullptr;
    };
    resolve(*cupti, api_.Subscribe, "cuptiSubscribe");
    resolve(*cupti, api_.EnableDomain, "cuptiEnableDomain");
    resolve(*cupti, api_.GetResultString, "cuptiGetResultString");
    resolve(driver, api_.FuncGetModule, "cuFuncGetModule");
    resolve(driver, api_.ModuleLoadData, "cuModuleLoadData");
    resolve(driver, api_.ModuleGetFunction, "cuModuleGetFunction");
    if (!ok) return absl::UnavailableError("libcupti or libcuda lacks an entry point");
    api_.FuncGetName =
        reinterpret_cast<decltype(api_.FuncGetName)>(::dlsym(driver, "cuFuncGetName"));
    dsl_native_dirs_ = dsl_native_dirs;
    harness_thread_ = std::this_thread::get_id();
    CUpti_SubscriberHandle& subscriber = subscriber_;
    if (CUptiResult r = api_.Subscribe(&subscriber, &Callback, nullptr); r != CUPTI_SUCCESS) {
      const char* text = "unknown";
      api_.GetResultString(r, &text);
      return absl::FailedPreconditionError(
          absl::StrCat("CUPTI callbacks are held by another tool: ", text));
    }
    for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API}) {
      if (api_.EnableDomain(1, subscriber, domain) != CUPTI_SUCCESS)
        return absl::InternalError("cannot enable CUPTI's API callbacks");
    }
    started_ = true;
    return absl::OkStatus();
  }

  absl::Status SetEnabled(bool enabled) {
    absl::MutexLock lock(&mutex_);
    if (!started_ || enabled == enabled_) return absl::OkStatus();
    for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API}) {
      if (api_.EnableDomain(enabled ? 1 : 0, subscriber_, domain) != CUPTI_SUCCESS)
        return absl::InternalError("cannot switch CUPTI's API callbacks");
    }
    enabled_ = enabled;
    return absl::OkStatus();
  }

  absl::Status BeginCall(bool knockout) {
    if (knockout && noop_ == nullptr) {
      t_state.judge_depth++;
      CUmodule module = nullptr;
      CUresult r = api_.ModuleLoadData(&module, kNoopPtx);
      CUfunction fn = nullptr;
      if (r == CUDA_SUCCESS) r = api_.ModuleGetFunction(&fn, module, "mkb_knockout_noop");
      t_state.judge_depth--;
      if (r != CUDA_SUCCESS)
        return absl::InternalError(
            absl::StrCat("cannot load the knockout kernel (CUresult ", r, ")"));
      noop_ = fn;
    }
    absl::MutexLock lock(&mutex_);
    counts_ = v1::LaunchCounts();
    counts_.set_monitored(enabled_);
    knockout_ = knockout;
    in_call_.store(true);
    return absl::OkStatus();
  }

  v1::LaunchCounts EndCall() {
    absl::MutexLock lock(&mutex_);
    in_call_.store(false);
    knockout_ = false;
    v1::LaunchCounts out = counts_;
    out.set_background(static_cast<int32_t>(std::min<int64_t>(background_, INT32_MAX)));
    return out;
  }

  int64_t background() {
    absl::MutexLock lock(&mutex_);
    return background_;
  }

  void Annotate(v1::CallTrace* trace) {
    absl::MutexLock lock(&mutex_);
    for (v1::ActivityRecord& r : *trace->mutable_records()) {
      auto it = correlations_.find(r.correlation_id());
      if (it != correlations_.end()) r.set_origin(LaunchOriginName(it->second));
    }
  }

 private:
  static void CUPTIAPI Callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                const void* data) {
    Instance().On(domain, id, static_cast<const CUpti_CallbackData*>(data));
  }

  void On(CUpti_CallbackDomain domain, CUpti_CallbackId id, const CUpti_CallbackData* cb) {
    const bool enter = cb->callbackSite == CUPTI_API_ENTER;
    // Launches are counted where they reach the driver, the runtime's too (CuTe DSL launches
    // through cudaLaunchKernelExC, ATen through cudaLaunchKernel): the driver callback's
    // function handle says whose module it is. The runtime's own calls are tracked only to know
    // that a launch came through it.
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      t_state.runtime_depth += cb->callbackSite == CUPTI_API_ENTER ? 1 : -1;
      return;
    }
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    switch (id) {
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoad:
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData:
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx:
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary:
      case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData:
      case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadFromFile:
        if (enter) {
          DecideLoad(cb->functionName);
        } else if (*static_cast<const CUresult*>(cb->functionReturnValue) == CUDA_SUCCESS) {
          RecordLoad(id, cb->functionParams);
        }
        return;
      case CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction:
        if (!enter) {
          auto* p = static_cast<const cuModuleGetFunction_params*>(cb->functionParams);
          Inherit(*p->hfunc, p->hmod);
        }
        return;
      case CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel:
        if (!enter) {
          auto* p = static_cast<const cuLibraryGetKernel_params*>(cb->functionParams);
          Inherit(*p->pKernel, p->library);
        }
        return;
      case CUPTI_DRIVER_TRACE_CBID_cuLibraryGetModule:
        if (!enter) {
          auto* p = static_cast<const cuLibraryGetModule_params*>(cb->functionParams);
          Inherit(*p->pMod, p->library);
        }
        return;
      case CUPTI_DRIVER_TRACE_CBID_cuKernelGetFunction:
        if (!enter) {
          auto* p = static_cast<const cuKernelGetFunction_params*>(cb->functionParams);
          Inherit(*p->pFunc, p->kernel);
        }
        return;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
        if (enter) {
          auto* p = static_cast<cuLaunchKernel_params*>(const_cast<void*>(cb->functionParams));
          if (DriverLaunch(p->f, cb->correlationId)) {
            p->f = noop_;
            p->gridDimX = p->gridDimY = p->gridDimZ = 1;
            p->blockDimX = p->blockDimY = p->blockDimZ = 1;
            p->sharedMemBytes = 0;
            p->kernelParams = nullptr;
            p->extra = nullptr;
          }
        }
        return;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
        if (enter) {
          auto* p = static_cast<cuLaunchKernelEx_params*>(const_cast<void*>(cb->functionParams));
          if (DriverLaunch(p->f, cb->correlationId)) {
            // Our own configuration: one thread, no cluster or other attributes, same stream.
            thread_local CUlaunchConfig noop_config;
            std::memset(&noop_config, 0, sizeof(noop_config));
            noop_config.gridDimX = noop_config.gridDimY = noop_config.gridDimZ = 1;
            noop_config.blockDimX = noop_config.blockDimY = noop_config.blockDimZ = 1;
            noop_config.hStream = p->config != nullptr ? p->config->hStream : nullptr;
            p->config = &noop_config;
            p->f = noop_;
            p->kernelParams = nullptr;
            p->extra = nullptr;
          }
        }
        return;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        if (enter) {
          auto* p = static_cast<const cuLaunchCooperativeKernel_params*>(cb->functionParams);
          // Not replaced (a cooperative no-op would still need the grid's residency): counted,
          // and a knockout draw that cannot suppress it still fails the DSL rule's check below.
          DriverLaunch(p->f, cb->correlationId, /*replaceable=*/false);
        }
        return;
      case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
        if (enter) CountLaunch(LaunchOrigin::kRaw, cb->correlationId, true);
        return;
      default:
        return;
    }
  }

  // Who is loading a module, decided on entry (the caller's stack is the loader's then).
  void DecideLoad(const char* function) {
    ThreadState& t = t_state;
    t.pending_evidence.clear();
    if (t.judge_depth > 0) {
      t.pending_load = LaunchOrigin::kJudge;
    } else if (t.dsl_loader_depth > 0) {
      t.pending_load = LaunchOrigin::kDsl;
    } else {
      // The loading code: the CUDA runtime or a vendor library (ATen's and cuBLAS's kernels,
      // lazily loaded), the DSL's native runtime, or anything else.
      const std::string caller = NativeCaller();
      if (FromDslNativeLibrary(caller)) {
        t.pending_load = LaunchOrigin::kDsl;
      } else if (IsVendorLibrary(caller)) {
        t.pending_load = LaunchOrigin::kLibrary;
      } else {
        t.pending_load = LaunchOrigin::kRaw;
        t.pending_evidence = absl::StrCat(function, " called from ", caller);
      }
    }
  }

  void RecordLoad(CUpti_CallbackId id, const void* params) {
    void* handle = nullptr;
    switch (id) {
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoad:
        handle = *static_cast<const cuModuleLoad_params*>(params)->module;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData:
        handle = *static_cast<const cuModuleLoadData_params*>(params)->module;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx:
        handle = *static_cast<const cuModuleLoadDataEx_params*>(params)->module;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary:
        handle = *static_cast<const cuModuleLoadFatBinary_params*>(params)->module;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData:
        handle = *static_cast<const cuLibraryLoadData_params*>(params)->library;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadFromFile:
        handle = *static_cast<const cuLibraryLoadFromFile_params*>(params)->library;
        break;
      default:
        return;
    }
    if (std::getenv("MKB_LAUNCH_MONITOR_LOG") != nullptr) {
      std::fprintf(
          stderr, "[launch monitor] %s loaded %p as %s %s\n",
          id == CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData ? "cuLibraryLoadData" : "a module load",
          handle, LaunchOriginName(t_state.pending_load), NativeCaller().c_str());
    }
    absl::MutexLock lock(&mutex_);
    owners_[handle] = t_state.pending_load;
    if (t_state.pending_load == LaunchOrigin::kRaw) evidence_[handle] = t_state.pending_evidence;
  }

  // A function, kernel or module handle takes the origin of the handle it came from.
  void Inherit(const void* child, const void* parent) {
    absl::MutexLock lock(&mutex_);
    auto it = owners_.find(parent);
    if (it == owners_.end()) return;
    owners_[child] = it->second;
    auto ev = evidence_.find(parent);
    if (ev != evidence_.end()) evidence_[child] = ev->second;
  }

  // Counts a driver-API launch of `f`; true when it must be replaced by the no-op.
  bool DriverLaunch(CUfunction f, uint32_t correlation, bool replaceable = true) {
    LaunchOrigin origin = LaunchOrigin::kRaw;
    std::string evidence;
    bool unknown = false;
    {
      absl::MutexLock lock(&mutex_);
      auto it = owners_.find(f);
      if (it == owners_.end()) {
        CUmodule module = nullptr;
        if (api_.FuncGetModule(&module, f) == CUDA_SUCCESS) it = owners_.find(module);
      }
      if (it != owners_.end()) {
        origin = it->second;
        auto ev = evidence_.find(it->first);
        if (ev != evidence_.end()) evidence = ev->second;
      } else if (t_state.runtime_depth > 0) {
        // A kernel the CUDA runtime launches from its own registrations (a library's fatbin,
        // e.g. ATen's, loaded through paths CUPTI does not report): a library's.
        origin = LaunchOrigin::kLibrary;
      } else {
        unknown = true;
      }
    }
    if (unknown) {
      // A function of a module registered through paths CUPTI does not report (a library's
      // fatbin) launched through the driver directly, not the runtime: CUTLASS's cluster
      // launcher in libtorch_cuda does so, with a handle from cudaGetFuncBySymbol. The native
      // code that launched it decides, as for a load: a vendor library's launch is the
      // library's (and remembered for the handle); anything else is raw, named with its caller
      // (the H200, 2026-12-02: problem 44's solutions failed on launches named by neither).
      const std::string caller = NativeCaller();
      if (IsVendorLibrary(caller)) {
        origin = LaunchOrigin::kLibrary;
        absl::MutexLock lock(&mutex_);
        owners_[f] = origin;
      } else {
        const char* name = nullptr;
        if (api_.FuncGetName == nullptr || api_.FuncGetName(&name, f) != CUDA_SUCCESS)
          name = nullptr;
        evidence = absl::StrCat(name != nullptr ? name : "(unnamed)",
                                ": a function of no module the monitor saw loaded, launched from ",
                                caller);
      }
    }
    if (t_state.judge_depth > 0) origin = LaunchOrigin::kJudge;
    const bool replace = CountLaunch(origin, correlation, false, evidence) && replaceable &&
                         origin == LaunchOrigin::kDsl && noop_ != nullptr;
    return replace;
  }

  // Returns whether the knockout is armed for this launch.
  bool CountLaunch(LaunchOrigin origin, uint32_t correlation, bool graph,
                   const std::string& evidence = "") {
    absl::MutexLock lock(&mutex_);
    if (correlations_.size() > 200000) correlations_.clear();
    correlations_[correlation] = origin;
    if (!in_call_.load()) {
      // Between calls the harness's thread does the judge's own GPU work (snapshots, the L2
      // flush); a launch from any other thread then is the kernel's, in the background.
      if (origin != LaunchOrigin::kJudge && t_state.judge_depth == 0 &&
          std::this_thread::get_id() != harness_thread_) {
        ++background_;
      }
      return false;
    }
    if (graph) counts_.set_graph(counts_.graph() + 1);
    switch (origin) {
      case LaunchOrigin::kDsl:
        counts_.set_dsl(counts_.dsl() + 1);
        if (knockout_) counts_.set_knocked_out(counts_.knocked_out() + 1);
        break;
      case LaunchOrigin::kRaw:
        counts_.set_raw(counts_.raw() + 1);
        if (counts_.raw_evidence_size() < 4 && !evidence.empty())
          counts_.add_raw_evidence(ToValidUtf8(evidence));  // names from the module: any bytes
        break;
      case LaunchOrigin::kLibrary:
        counts_.set_library(counts_.library() + 1);
        break;
      case LaunchOrigin::kJudge:
        counts_.set_judge(counts_.judge() + 1);
        break;
    }
    return knockout_;
  }

  // The first object on the stack that is not libcuda, libcupti, the CUDA runtime (the DSL's
  // generated code and ATen's lazy loading both go through cudaLibraryLoadData), libmkb itself
  // or code without an object (JIT-compiled host code): the library that asked.
  std::string NativeCaller() const {
    void* pcs[48];
    const int n = ::backtrace(pcs, 48);
    Dl_info self;
    ::dladdr(reinterpret_cast<void*>(&Monitor::Callback), &self);
    for (int i = 0; i < n; ++i) {
      Dl_info info;
      if (::dladdr(pcs[i], &info) == 0 || info.dli_fname == nullptr) continue;
      const absl::string_view name = info.dli_fname;
      if (self.dli_fname != nullptr && name == self.dli_fname) continue;
      if (absl::StrContains(name, "libcuda.so") || absl::StrContains(name, "libcupti.so") ||
          absl::StrContains(name, "libcudart")) {
        continue;
      }
      return std::string(name);
    }
    return "(unknown)";
  }

  // The CUDA runtime, PyTorch's CUDA libraries and NVIDIA's kernel libraries.
  static bool IsVendorLibrary(const std::string& object) {
    const size_t slash = object.rfind('/');
    const absl::string_view base = slash == std::string::npos
                                       ? absl::string_view(object)
                                       : absl::string_view(object).substr(slash + 1);
    for (absl::string_view prefix :
         {"libtorch_cuda", "libc10_cuda", "libcublas", "libcudnn", "libcufft", "libcurand",
          "libcusparse", "libcusolver", "libnccl", "libnvrtc", "libnvJitLink", "libcufile",
          "libnvshmem"}) {
      if (absl::StartsWith(base, prefix)) return true;
    }
    return false;
  }

  bool FromDslNativeLibrary(const std::string& object) const {
    for (const std::string& dir : dsl_native_dirs_) {
      if (!dir.empty() && absl::StartsWith(object, dir)) return true;
    }
    return false;
  }

  absl::Mutex mutex_;
  bool started_ = false;
  bool enabled_ = true;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  Api api_;
  std::vector<std::string> dsl_native_dirs_;
  std::unordered_map<const void*, LaunchOrigin> owners_ ABSL_GUARDED_BY(mutex_);
  std::unordered_map<const void*, std::string> evidence_ ABSL_GUARDED_BY(mutex_);
  std::unordered_map<uint32_t, LaunchOrigin> correlations_ ABSL_GUARDED_BY(mutex_);
  v1::LaunchCounts counts_ ABSL_GUARDED_BY(mutex_);
  bool knockout_ ABSL_GUARDED_BY(mutex_) = false;
  int64_t background_ ABSL_GUARDED_BY(mutex_) = 0;
  std::atomic<bool> in_call_{false};
  std::thread::id harness_thread_;  // the thread that started the monitor (the worker's harness)
  CUfunction noop_ = nullptr;
};

}  // namespace

const char* LaunchOriginName(LaunchOrigin origin) {
  switch (origin) {
    case LaunchOrigin::kDsl:
      return "dsl";
    case LaunchOrigin::kRaw:
      return "raw";
    case LaunchOrigin::kLibrary:
      return "library";
    case LaunchOrigin::kJudge:
      return "judge";
  }
  return "raw";
}

absl::StatusOr<LaunchMonitor*> LaunchMonitor::Start(
    const std::vector<std::string>& cupti_dirs, const std::vector<std::string>& dsl_native_dirs) {
  if (auto s = Monitor::Instance().Start(cupti_dirs, dsl_native_dirs); !s.ok()) return s;
  static LaunchMonitor* handle = new LaunchMonitor();
  return handle;
}

absl::Status LaunchMonitor::BeginCall(bool knockout) {
  return Monitor::Instance().BeginCall(knockout);
}
v1::LaunchCounts LaunchMonitor::EndCall() { return Monitor::Instance().EndCall(); }
absl::Status LaunchMonitor::SetEnabled(bool enabled) {
  return Monitor::Instance().SetEnabled(enabled);
}
void LaunchMonitor::EnterDslLoader() { ++t_state.dsl_loader_depth; }
void LaunchMonitor::LeaveDslLoader() { --t_state.dsl_loader_depth; }
void LaunchMonitor::EnterJudge() { ++t_state.judge_depth; }
void LaunchMonitor::LeaveJudge() { --t_state.judge_depth; }
int64_t LaunchMonitor::background_launches() const { return Monitor::Instance().background(); }
void LaunchMonitor::Annotate(v1::CallTrace* trace) const { Monitor::Instance().Annotate(trace); }

}  // namespace mkb::cuda
