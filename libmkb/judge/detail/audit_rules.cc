#include "libmkb/judge/detail/audit_rules.h"

#include <algorithm>
#include <iterator>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace mkb::audit_detail {
namespace {

constexpr char kNoFiles[] = "file access is forbidden";
constexpr char kNoProcesses[] = "subprocesses are forbidden";
constexpr char kNoThreads[] = "threads are forbidden (work must finish inside solve)";
constexpr char kNoNetwork[] = "network access is forbidden";
constexpr char kNoSeeds[] = "kernels may not depend on or change seeds";
constexpr char kNoGraphs[] = "CUDA Graphs are forbidden";
constexpr char kNoCompile[] = "torch.compile machinery is forbidden";
constexpr char kNoRawCuda[] =
    "raw CUDA modules, launches and graphs through the driver / runtime API are forbidden";
constexpr char kNoLibrary[] = "DSL kernels from a kernel library are forbidden";

// Modules a kernel may not import (SPEC §2: no other compilers, raw CUDA, processes, network,
// files, threads, introspection, kernel libraries; the judge and the reference are off limits).
constexpr Rule kModuleRules[] = {
    {"triton", kImport, "Triton is not a variant's DSL"},
    {"torch._dynamo", kImport, kNoCompile},
    {"torch._inductor", kImport, kNoCompile},
    {"torch.utils.cpp_extension", kImport, "inline C++/CUDA extensions are forbidden"},
    {"torch.cuda.graphs", kImport, kNoGraphs},
    {"ctypes", kImport, "ctypes (raw native calls) is forbidden"},
    {"_ctypes", kImport, "ctypes (raw native calls) is forbidden"},
    {"cffi", kImport, "cffi (raw native calls) is forbidden"},
    {"cupy", kImport, "CuPy (raw CUDA kernels, library ops) is forbidden"},
    {"numba", kImport, "Numba is not a variant's DSL"},
    {"pycuda", kImport, "PyCUDA (raw CUDA) is forbidden"},
    {"cuda.bindings.nvrtc", kImport, "NVRTC (raw CUDA compilation) is forbidden"},
    {"cuda.bindings.nvjitlink", kImport, "nvJitLink (raw CUDA linking) is forbidden"},
    {"cuda.nvrtc", kImport, "NVRTC (raw CUDA compilation) is forbidden"},
    {"cuda.core", kImport, "cuda.core (raw kernel launches) is forbidden"},
    {"jax", kImport, "JAX is not a variant's DSL"},
    {"tensorflow", kImport, "TensorFlow is not a variant's DSL"},
    {"flashinfer", kImport, kNoLibrary},
    {"flash_attn", kImport, kNoLibrary},
    {"xformers", kImport, kNoLibrary},
    {"apex", kImport, kNoLibrary},
    {"vllm", kImport, kNoLibrary},
    {"sgl_kernel", kImport, kNoLibrary},
    {"deep_gemm", kImport, kNoLibrary},
    {"transformer_engine", kImport, kNoLibrary},
    {"liger_kernel", kImport, kNoLibrary},
    {"quack", kImport, kNoLibrary},
    {"torchao", kImport, kNoLibrary},
    {"bitsandbytes", kImport, kNoLibrary},
    {"tilelang", kImport, "TileLang is not a variant's DSL"},
    {"subprocess", kImport, kNoProcesses},
    {"_posixsubprocess", kImport, kNoProcesses},
    {"multiprocessing", kImport, kNoProcesses},
    {"_multiprocessing", kImport, kNoProcesses},
    {"concurrent", kImport, "threads and processes are forbidden"},
    {"threading", kImport, kNoThreads},
    {"_thread", kImport, "threads are forbidden"},
    {"asyncio", kImport, "event loops are forbidden"},
    {"signal", kImport, "signal handlers are forbidden", false},
    {"_signal", kImport, "signal handlers are forbidden"},
    {"atexit", kImport, "exit handlers run after the evaluation"},
    {"posix", kImport, "the raw os module is forbidden"},
    {"pty", kImport, kNoProcesses},
    {"pdb", kImport, "debuggers are forbidden"},
    {"bdb", kImport, "debuggers are forbidden"},
    {"pydoc", kImport, "pydoc runs pagers (subprocesses)"},
    {"platform", kImport, "platform probes run subprocesses", false},
    {"webbrowser", kImport, kNoProcesses},
    {"socket", kImport, kNoNetwork},
    {"_socket", kImport, kNoNetwork},
    {"ssl", kImport, kNoNetwork},
    {"select", kImport, "raw descriptor access is forbidden", false},
    {"selectors", kImport, "raw descriptor access is forbidden", false},
    {"http", kImport, kNoNetwork, false},
    {"urllib", kImport, kNoNetwork},
    {"requests", kImport, kNoNetwork, false},
    {"ftplib", kImport, kNoNetwork},
    {"smtplib", kImport, kNoNetwork},
    {"xmlrpc", kImport, kNoNetwork},
    {"socketserver", kImport, kNoNetwork},
    {"pathlib", kImport, kNoFiles},
    {"shutil", kImport, kNoFiles},
    {"tempfile", kImport, kNoFiles},
    {"glob", kImport, kNoFiles, false},
    {"io", kImport, kNoFiles, false},
    {"_io", kImport, kNoFiles},
    {"fileinput", kImport, kNoFiles},
    {"linecache", kImport, kNoFiles},
    {"tokenize", kImport, kNoFiles, false},
    {"zipfile", kImport, kNoFiles},
    {"tarfile", kImport, kNoFiles},
    {"gzip", kImport, kNoFiles},
    {"bz2", kImport, kNoFiles},
    {"lzma", kImport, kNoFiles},
    {"filecmp", kImport, kNoFiles},
    {"sqlite3", kImport, kNoFiles},
    {"shelve", kImport, kNoFiles},
    {"dbm", kImport, kNoFiles},
    {"fcntl", kImport, "raw descriptor access is forbidden"},
    {"termios", kImport, "raw descriptor access is forbidden"},
    {"mmap", kImport, "raw memory access is forbidden"},
    {"pickle", kImport, "unpickling runs code; a kernel needs no serialisation"},
    {"_pickle", kImport, "unpickling runs code; a kernel needs no serialisation"},
    {"copyreg", kImport, "unpickling runs code; a kernel needs no serialisation"},
    {"marshal", kImport, "code objects are forbidden"},
    {"code", kImport, "interactive interpreters run code", false},
    {"codeop", kImport, "compiling code at run time is forbidden"},
    {"runpy", kDynamicImport, "running modules by name is forbidden"},
    {"importlib", kDynamicImport, "dynamic imports are forbidden"},
    {"pkgutil", kDynamicImport, "importing and resolving names at run time is forbidden"},
    {"zipimport", kDynamicImport, "dynamic imports are forbidden"},
    {"_imp", kDynamicImport, "dynamic imports are forbidden"},
    {"imp", kDynamicImport, "dynamic imports are forbidden", false},
    {"_frozen_importlib", kDynamicImport, "dynamic imports are forbidden"},
    {"_frozen_importlib_external", kDynamicImport, "dynamic imports are forbidden"},
    {"site", kDynamicImport, "the import system is off limits", false},
    {"builtins", kIntrospection, "patching builtins is forbidden"},
    {"gc", kIntrospection, "reaching other objects through the collector is forbidden"},
    {"inspect", kIntrospection, "frame and source introspection is forbidden"},
    {"traceback", kIntrospection, "frame introspection is forbidden"},
    {"resource", kIntrospection, "changing the worker's limits is forbidden", false},
    {"faulthandler", kIntrospection, "not needed by a kernel"},
    {"metakernelbench", "static.judge_access", "the judge is off limits"},
    {"_mkb_problem", kReference, "the problem's reference is off limits"},
    {"reference", kReference, "the problem's reference is off limits", false},
};

// Attribute paths a kernel may not touch (calls or references), below allowed modules.
constexpr Rule kAttributeRules[] = {
    {"torch.compile", kCall, "torch.compile is forbidden"},
    {"torch.compiler", kCall, kNoCompile},
    {"torch.jit", kCall, "torch.jit is forbidden"},
    {"torch._dynamo", kCall, kNoCompile},
    {"torch._inductor", kCall, kNoCompile},
    {"torch.export", kCall, kNoCompile},
    {"torch._export", kCall, kNoCompile},
    {"torch.fx", kCall, "torch.fx generates and executes Python source"},
    {"torch.nn.Module.compile", kCall, "Module.compile is torch.compile"},
    {"torch.utils.cpp_extension", kCall, "inline extensions are forbidden"},
    {"torch.utils.collect_env", kCall, kNoProcesses},
    {"torch.utils.benchmark", kCall, "its timers compile and execute code strings"},
    {"torch.utils._python_dispatch", kIntrospection, "dispatch modes are forbidden"},
    {"torch.library", kCall, "registering custom ops is forbidden"},
    {"torch._library", kCall, "registering custom ops is forbidden"},
    {"torch._ops", kCall, "torch's operator registry is off limits"},
    {"torch.ops.load_library", kCall, "loading native libraries is forbidden"},
    {"torch.ops.import_module", kDynamicImport, "dynamic imports are forbidden"},
    {"torch.classes.load_library", kCall, "loading native libraries is forbidden"},
    {"torch.hub", kCall, "downloading and running code is forbidden"},
    {"torch.package", kCall, "unpickling runs code; loading packages is forbidden"},
    {"torch.load", kCall, "unpickling runs code; a kernel loads no files"},
    {"torch.save", kCall, kNoFiles},
    {"torch.from_file", kCall, kNoFiles},
    {"torch.UntypedStorage.from_file", kCall, kNoFiles},
    {"torch.TypedStorage.from_file", kCall, kNoFiles},
    {"torch.utils.data", kCall, "data loaders start worker processes"},
    {"torch.utils.model_zoo", kCall, "downloading and running code is forbidden"},
    {"torch.utils.tensorboard", kCall, kNoFiles},
    {"torch.cuda.memory._*", kJudge, "the allocator's internals and snapshots are off limits"},
    {"torch.serialization", kCall, "unpickling runs code; a kernel loads no files"},
    {"torch.multiprocessing", kCall, kNoProcesses},
    {"torch.distributed", kCall, "processes and network are forbidden"},
    {"torch.profiler", kJudge, "profilers are the judge's (it traces with CUPTI)"},
    {"torch.autograd.profiler", kJudge, "profilers are the judge's (it traces with CUPTI)"},
    {"torch.cuda.profiler", kJudge, "profilers are the judge's (it traces with CUPTI)"},
    {"torch.cuda.cudart", kCall, kNoRawCuda},
    {"torch._jit_internal", kIntrospection, "torch internals are off limits"},
    {"torch._sources", kIntrospection, "source introspection is forbidden"},
    {"torch._higher_order_ops", kCall, kNoCompile},
    {"torch._functorch", kCall, kNoCompile},
    {"torch._subclasses", kIntrospection, "fake tensors and dispatch are off limits"},
    {"torch._lazy", kCall, "lazy tensors are forbidden"},
    {"torch._utils_internal", kIntrospection, "torch internals are off limits"},
    {"torch.cuda.CUDAGraph", kCall, kNoGraphs},
    {"torch.cuda.graph*", kCall, kNoGraphs},
    {"torch.cuda.make_graphed_callables", kCall, kNoGraphs},
    {"torch.cuda.jiterator", kCall, "runtime-compiled CUDA is forbidden"},
    {"torch.use_deterministic_algorithms", kJudge, "the judge's numerics settings are off limits"},
    {"torch.utils.deterministic", kJudge, "the judge's numerics settings are off limits"},
    {"torch.manual_seed", kSeed, kNoSeeds},
    {"torch.seed", kSeed, kNoSeeds},
    {"torch.initial_seed", kSeed, kNoSeeds},
    {"torch.random", kSeed, kNoSeeds},
    {"torch.get_rng_state", kSeed, kNoSeeds},
    {"torch.set_rng_state", kSeed, kNoSeeds},
    {"torch.cuda.manual_seed", kSeed, kNoSeeds},
    {"torch.cuda.manual_seed_all", kSeed, kNoSeeds},
    {"torch.cuda.initial_seed", kSeed, kNoSeeds},
    {"torch.cuda.get_rng_state", kSeed, kNoSeeds},
    {"torch.cuda.get_rng_state_all", kSeed, kNoSeeds},
    {"torch.cuda.set_rng_state", kSeed, kNoSeeds},
    {"torch.cuda.set_rng_state_all", kSeed, kNoSeeds},
    {"torch.cuda.seed", kSeed, kNoSeeds},
    {"torch.cuda.seed_all", kSeed, kNoSeeds},
    {"torch.cuda.random", kSeed, kNoSeeds},
    {"torch.cuda.set_sync_debug_mode", kJudge, "the judge's settings are off limits"},
    {"torch.backends", kModulePatch, "changing torch.backends settings changes the eager baseline"},
    {"torch.set_float32_matmul_precision", kModulePatch, "changes the eager baseline's numerics"},
    {"torch.set_default_dtype", kModulePatch, "changes the judge's numerics"},
    {"torch.set_default_device", kModulePatch, "changes the judge's allocations"},
    {"torch.overrides", kIntrospection, "torch function overrides are forbidden"},
    {"torch._C", kIntrospection, "torch internals are off limits"},
    {"numpy.ctypeslib", kCall, "raw memory access is forbidden"},
    {"numpy.load*", kCall, "a kernel loads no files (numpy.load unpickles)"},
    {"numpy.save*", kCall, kNoFiles},
    {"numpy.fromfile", kCall, kNoFiles},
    {"numpy.genfromtxt", kCall, kNoFiles},
    {"numpy.memmap", kCall, kNoFiles},
    {"numpy.lib.format", kCall, kNoFiles},
    {"numpy.f2py", kCall, "compiling native code is forbidden"},
    {"numpy.distutils", kCall, "compiling native code is forbidden"},
    {"cuda.bindings.driver.cuModule*", kCall, kNoRawCuda},
    {"cuda.bindings.driver.cuLibrary*", kCall, kNoRawCuda},
    {"cuda.bindings.driver.cuLaunch*", kCall, kNoRawCuda},
    {"cuda.bindings.driver.cuLink*", kCall, kNoRawCuda},
    {"cuda.bindings.driver.cuKernel*", kCall, kNoRawCuda},
    {"cuda.bindings.driver.cuGraph*", kCall, kNoRawCuda},
    {"cuda.bindings.driver.cuStreamBeginCapture*", kCall, kNoRawCuda},
    {"cuda.bindings.runtime.cudaLaunch*", kCall, kNoRawCuda},
    {"cuda.bindings.runtime.cudaLibrary*", kCall, kNoRawCuda},
    {"cuda.bindings.runtime.cudaGraph*", kCall, kNoRawCuda},
    {"cuda.bindings.runtime.cudaStreamBeginCapture*", kCall, kNoRawCuda},
    {"cuda.cuda.cuModule*", kCall, kNoRawCuda},
    {"cuda.cuda.cuLibrary*", kCall, kNoRawCuda},
    {"cuda.cuda.cuLaunch*", kCall, kNoRawCuda},
    {"cuda.cuda.cuLink*", kCall, kNoRawCuda},
    {"cuda.cuda.cuGraph*", kCall, kNoRawCuda},
    {"cuda.cuda.cuStreamBeginCapture*", kCall, kNoRawCuda},
    {"cuda.cudart.cudaLaunch*", kCall, kNoRawCuda},
    {"cuda.cudart.cudaGraph*", kCall, kNoRawCuda},
    {"cuda.cudart.cudaStreamBeginCapture*", kCall, kNoRawCuda},
    {"tvm.support.nvcc", kCall, "compiling raw CUDA source is forbidden"},
    {"tvm.contrib.nvcc", kCall, "compiling raw CUDA source is forbidden"},
    {"tvm.contrib.cc", kCall, "compiling native code is forbidden"},
    {"tvm.rpc", kCall, kNoNetwork},
    {"tvm.runtime.load_module", kCall, "loading native modules is forbidden"},
    {"tvm.runtime.module.load_module", kCall, "loading native modules is forbidden"},
    {"tvm.get_global_func", kDynamicAttribute, "FFI functions looked up by name reach anything"},
    {"tvm.ffi.get_global_func", kDynamicAttribute,
     "FFI functions looked up by name reach anything"},
    {"tvm_ffi.get_global_func", kDynamicAttribute,
     "FFI functions looked up by name reach anything"},
    {"tvm_ffi.load_module", kCall, "loading native modules is forbidden"},
    // Registering a global function can replace the DSL's own hooks (its CUDA compile
    // callback, for one): raw CUDA in the DSL's name.
    {"tvm.register_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm.register_global_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm.ffi.register_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm.ffi.register_global_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm_ffi.register_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm_ffi.register_global_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"weakref.finalize", kCall, "callbacks that run after solve returns are forbidden"},
    {"codecs.open", kCall, kNoFiles},
    {"logging.FileHandler", kCall, kNoFiles},
    {"logging.handlers", kCall, "log handlers write files and sockets"},
    {"operator.attrgetter", kDynamicAttribute, "attribute access by computed name"},
    {"operator.methodcaller", kDynamicAttribute, "attribute access by computed name"},
    {"types.FunctionType", kDynamicCode, "functions built from code objects are forbidden"},
    {"types.LambdaType", kDynamicCode, "functions built from code objects are forbidden"},
    {"types.CodeType", kDynamicCode, "code objects are forbidden"},
    {"types.FrameType", kIntrospection, "frame introspection is forbidden"},
    {"types.TracebackType", kIntrospection, "frame introspection is forbidden"},
    // os: path helpers only.
    {"os.*", kCall,
     "os reaches processes, descriptors, files and the environment; only os.path "
     "and constants are allowed"},
    {"os.environ", kCall, "the environment is off limits"},
    {"os.getenv", kCall, "the environment is off limits"},
    {"os.getppid", kIntrospection, "the judge's process is off limits"},
    {"os.system", kCall, kNoProcesses},
    {"os.popen", kCall, kNoProcesses},
    {"os.fork*", kCall, kNoProcesses},
    {"os.exec*", kCall, kNoProcesses},
    {"os.spawn*", kCall, kNoProcesses},
    {"os.posix_spawn*", kCall, kNoProcesses},
    {"os.kill*", kCall, "signalling processes is forbidden"},
    {"os._exit", kCall, "exiting the worker is forbidden"},
    {"os.path", nullptr, nullptr},
    {"os.sep", nullptr, nullptr},
    {"os.altsep", nullptr, nullptr},
    {"os.linesep", nullptr, nullptr},
    {"os.pathsep", nullptr, nullptr},
    {"os.curdir", nullptr, nullptr},
    {"os.pardir", nullptr, nullptr},
    {"os.extsep", nullptr, nullptr},
    {"os.devnull", nullptr, nullptr},
    {"os.name", nullptr, nullptr},
    {"os.cpu_count", nullptr, nullptr},
    {"os.getpid", nullptr, nullptr},
    {"os.fspath", nullptr, nullptr},
    {"os.fsencode", nullptr, nullptr},
    {"os.fsdecode", nullptr, nullptr},
    {"os.PathLike", nullptr, nullptr},
    // sys: version facts only.
    {"sys.*", kIntrospection,
     "the interpreter's state is off limits; only version facts are "
     "allowed"},
    {"sys.modules", kIntrospection, "reaching other modules through sys.modules is forbidden"},
    {"sys.exit", kCall, "exiting the worker is forbidden"},
    {"sys.stdout", kCall, "the worker's streams are the judge's"},
    {"sys.stderr", kCall, "the worker's streams are the judge's"},
    {"sys.stdin", kCall, "the worker's streams are the judge's"},
    {"sys.version", nullptr, nullptr},
    {"sys.version_info", nullptr, nullptr},
    {"sys.hexversion", nullptr, nullptr},
    {"sys.implementation", nullptr, nullptr},
    {"sys.platform", nullptr, nullptr},
    {"sys.byteorder", nullptr, nullptr},
    {"sys.maxsize", nullptr, nullptr},
    {"sys.maxunicode", nullptr, nullptr},
    {"sys.float_info", nullptr, nullptr},
    {"sys.int_info", nullptr, nullptr},
    {"sys.hash_info", nullptr, nullptr},
    {"sys.float_repr_style", nullptr, nullptr},
    {"sys.getsizeof", nullptr, nullptr},
    {"sys.getrecursionlimit", nullptr, nullptr},
    {"time.sleep", kCall, "kernels may not depend on timing"},
    // The dangerous functions of modules whose names are ordinary words (import rules only,
    // above): these match inside chains too (torch.glob.glob, x.io.open).
    {"glob.glob", kCall, kNoFiles},
    {"glob.iglob", kCall, kNoFiles},
    {"io.open*", kCall, kNoFiles},
    {"io.FileIO", kCall, kNoFiles},
    {"io.TextIOWrapper", kCall, "raw descriptor access is forbidden"},
    {"io.Buffered*", kCall, "raw descriptor access is forbidden"},
    {"tokenize.open", kCall, kNoFiles},
    {"signal.signal", kCall, "signal handlers are forbidden"},
    {"signal.setitimer", kCall, "signal handlers are forbidden"},
    {"signal.alarm", kCall, "signal handlers are forbidden"},
    {"signal.pthread_kill", kCall, "signalling threads is forbidden"},
    {"signal.raise_signal", kCall, "raising signals is forbidden"},
    {"signal.set_wakeup_fd", kCall, "raw descriptor access is forbidden"},
    {"resource.setrlimit", kIntrospection, "changing the worker's limits is forbidden"},
    {"resource.prlimit", kIntrospection, "changing the worker's limits is forbidden"},
    {"code.interact", kDynamicCode, "interactive interpreters run code"},
    {"code.Interactive*", kDynamicCode, "interactive interpreters run code"},
    {"code.compile_command", kDynamicCode, "compiling code at run time is forbidden"},
    {"http.client", kCall, kNoNetwork},
    {"http.server", kCall, kNoNetwork},
    {"imp.load*", kDynamicImport, "dynamic imports are forbidden"},
    {"imp.find_module", kDynamicImport, "dynamic imports are forbidden"},
    {"platform.popen", kCall, kNoProcesses},
};

// Builtins a kernel may not reach (called or not).
constexpr Rule kBuiltinRules[] = {
    {"eval", kDynamicCode, "eval is forbidden"},
    {"exec", kDynamicCode, "exec is forbidden"},
    {"compile", kDynamicCode, "compiling code at run time is forbidden"},
    {"__import__", kDynamicImport, "dynamic imports are forbidden"},
    {"globals", kIntrospection, "reaching module globals is forbidden"},
    {"locals", kIntrospection, "reaching frame locals is forbidden"},
    {"vars", kIntrospection, "reaching object namespaces is forbidden"},
    {"open", kCall, kNoFiles},
    {"breakpoint", kCall, "debuggers are forbidden"},
    {"help", kCall, "help runs pagers (subprocesses)"},
    {"input", kCall, "reading input is forbidden"},
    {"exit", kCall, "exiting the worker is forbidden"},
    {"quit", kCall, "exiting the worker is forbidden"},
    {"make_inputs", kReference, "the problem's make_inputs is off limits"},
    {"reference", kReference, "the problem's reference is off limits"},
};

// Module globals that reach the interpreter: flagged on any use.
constexpr const char* kInterpreterGlobals[] = {"__builtins__", "__loader__", "__spec__"};

// The getattr family: allowed only as direct calls with a literal attribute name.
constexpr const char* kAttributeBuiltins[] = {"getattr", "setattr", "delattr", "hasattr"};

// Attributes that reach the interpreter's internals from any object.
constexpr const char* kIntrospectionAttributes[] = {"__globals__",
                                                    "__builtins__",
                                                    "__subclasses__",
                                                    "__code__",
                                                    "__closure__",
                                                    "__bases__",
                                                    "__base__",
                                                    "__mro__",
                                                    "__getattribute__",
                                                    "__getattr__",
                                                    "__setattr__",
                                                    "__delattr__",
                                                    "__reduce__",
                                                    "__reduce_ex__",
                                                    "__loader__",
                                                    "__spec__",
                                                    "__traceback__",
                                                    "__defaults__",
                                                    "__kwdefaults__",
                                                    "__objclass__",
                                                    "__import__",
                                                    "f_back",
                                                    "f_globals",
                                                    "f_locals",
                                                    "f_builtins",
                                                    "f_code",
                                                    "f_trace",
                                                    "gi_frame",
                                                    "gi_code",
                                                    "gi_yieldfrom",
                                                    "cr_frame",
                                                    "cr_code",
                                                    "cr_await",
                                                    "ag_frame",
                                                    "ag_code",
                                                    "ag_await",
                                                    "tb_frame",
                                                    "tb_next",
                                                    "co_code",
                                                    "co_consts",
                                                    "__self__",
                                                    "__func__",
                                                    "__wrapped__",
                                                    "__dict__",
                                                    "__class__",
                                                    "__init_subclass__",
                                                    "__torch_function__",
                                                    "__torch_dispatch__"};

// Library compute that only the runtime audit can weigh (its share of GPU time).
constexpr const char* kLibraryCompute[] = {"torch.matmul",
                                           "torch.mm",
                                           "torch.bmm",
                                           "torch.einsum",
                                           "torch.addmm",
                                           "torch.baddbmm",
                                           "torch.addbmm",
                                           "torch.tensordot",
                                           "torch.linalg",
                                           "torch.nn.functional",
                                           "torch.softmax",
                                           "torch.log_softmax",
                                           "torch.layer_norm",
                                           "torch.rms_norm",
                                           "torch.group_norm",
                                           "torch.conv1d",
                                           "torch.conv2d",
                                           "torch.fft",
                                           "torch.cumsum",
                                           "torch.topk",
                                           "torch.sort",
                                           "torch.argsort",
                                           "torch.scaled_dot_product_attention",
                                           "torch._scaled_mm",
                                           "torch.nn",
                                           "torch.sum",
                                           "torch.mean",
                                           "torch.exp",
                                           "torch.sigmoid",
                                           "torch.tanh",
                                           "torch.rsqrt",
                                           "torch.logsumexp",
                                           "torch.amax",
                                           "torch.max"};

// Builtins that do nothing with a module passed to them but read it (print(torch)).
constexpr const char* kInertBuiltins[] = {"print",      "repr",       "str",  "format", "id",
                                          "type",       "hash",       "bool", "dir",    "callable",
                                          "isinstance", "issubclass", "len"};

std::string JoinParts(const Parts& parts) { return absl::StrJoin(parts, "."); }

template <size_t N>
bool Contains(const char* const (&names)[N], absl::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// Every rule, indexed by its first component.
class RuleIndex {
 public:
  struct Entry {
    const Rule* rule;
    Parts pattern;
    bool module_rule;
  };

  static const RuleIndex& Get() {
    static const RuleIndex* index = new RuleIndex();
    return *index;
  }

  // The most specific rule matching parts[begin, end) from its start (the path or an ancestor
  // of it), or nullptr. `inside_chain`: begin is not the chain's root.
  const Entry* Best(const Parts& parts, size_t begin, size_t end, bool inside_chain) const {
    auto it = by_first_.find(parts[begin]);
    if (it == by_first_.end()) return nullptr;
    const Entry* best = nullptr;
    int best_score = -1;
    for (const Entry* entry : it->second) {
      if (inside_chain && !entry->rule->inside_chains) continue;
      int score = 0;
      bool matched = true;
      for (size_t k = 0; k < entry->pattern.size(); ++k) {
        const std::string& want = entry->pattern[k];
        if (begin + k >= end) {
          matched = false;
          break;
        }
        const std::string& have = parts[begin + k];
        // Exact components weigh most, then families ("exec*"), then "anything below" ("*").
        if (want == kGap) {
          score += 2;
        } else if (want.back() == '*') {
          if (!absl::StartsWith(have, absl::string_view(want).substr(0, want.size() - 1))) {
            matched = false;
            break;
          }
          score += 3;
        } else if (want == have) {
          score += 4;
        } else {
          matched = false;
          break;
        }
      }
      if (matched && score > best_score) {
        best = entry;
        best_score = score;
      }
    }
    return best;
  }

  // True when some rule's pattern starts with parts[begin, end) and goes further: a path
  // with that tail may still reach a forbidden one by more attributes.
  bool IsStem(const Parts& parts, size_t begin, size_t end) const {
    if (begin >= end) return false;
    auto it = by_first_.find(parts[begin]);
    if (it == by_first_.end()) return false;
    for (const Entry* entry : it->second) {
      if (entry->pattern.size() <= end - begin) continue;
      bool prefix = true;
      for (size_t k = 0; k < end - begin && prefix; ++k) {
        prefix = entry->pattern[k] == parts[begin + k];
      }
      if (prefix) return true;
    }
    return false;
  }

  // True when parts[begin, end) is a run of consecutive components of some rule's pattern
  // (not starting at a trailing "*", which matches anything below its parent): a value whose
  // path ends with that run may still complete a rule by more attributes.
  bool IsFactor(const Parts& parts, size_t begin, size_t end) const {
    if (begin >= end) return false;
    auto matches = [&](const Entry& entry, size_t position) {
      if (position + (end - begin) > entry.pattern.size()) return false;
      for (size_t k = begin; k < end; ++k) {
        const std::string& want = entry.pattern[position + k - begin];
        if (want == kGap) continue;
        if (want.back() == '*') {
          if (!absl::StartsWith(parts[k], absl::string_view(want).substr(0, want.size() - 1))) {
            return false;
          }
        } else if (want != parts[k]) {
          return false;
        }
      }
      return true;
    };
    if (auto it = by_component_.find(parts[begin]); it != by_component_.end()) {
      for (const auto& [entry, position] : it->second) {
        if (matches(*entry, position)) return true;
      }
    }
    for (const auto& [entry, position] : families_) {
      if (matches(*entry, position)) return true;
    }
    return false;
  }

 private:
  RuleIndex() {
    for (const Rule& rule : kModuleRules)
      entries_.push_back({&rule, SplitPath(rule.pattern), true});
    for (const Rule& rule : kAttributeRules) {
      entries_.push_back({&rule, SplitPath(rule.pattern), false});
    }
    for (const Entry& entry : entries_) {
      by_first_[entry.pattern[0]].push_back(&entry);
      for (size_t k = 0; k < entry.pattern.size(); ++k) {
        const std::string& part = entry.pattern[k];
        if (part == kGap) continue;
        if (part.back() == '*') {
          families_.emplace_back(&entry, k);
        } else {
          by_component_[part].emplace_back(&entry, k);
        }
      }
    }
  }

  std::vector<Entry> entries_;
  absl::flat_hash_map<std::string, std::vector<const Entry*>> by_first_;
  absl::flat_hash_map<std::string, std::vector<std::pair<const Entry*, size_t>>> by_component_;
  std::vector<std::pair<const Entry*, size_t>> families_;  // (entry, index of an "x*" part)
};

}  // namespace

std::vector<std::string> SplitPath(absl::string_view path) { return absl::StrSplit(path, '.'); }

bool IsUnknownRooted(absl::string_view path) { return absl::StartsWith(path, kUnknown); }

std::string Append(absl::string_view path, absl::string_view attribute) {
  if (static_cast<size_t>(std::count(path.begin(), path.end(), '.')) + 2 <=
      kHeadParts + kTailParts) {
    return absl::StrCat(path, ".", attribute);  // short, and so without a gap
  }
  Parts parts = SplitPath(path);
  parts.emplace_back(attribute);
  const auto gap = std::find(parts.begin(), parts.end(), kGap);
  if (gap == parts.end()) {
    if (parts.size() > kHeadParts + kTailParts) {
      Parts kept(parts.begin(), parts.begin() + kHeadParts);
      kept.emplace_back(kGap);
      kept.insert(kept.end(), parts.end() - kTailParts, parts.end());
      parts = std::move(kept);
    }
  } else if (parts.end() - gap - 1 > static_cast<std::ptrdiff_t>(kTailParts)) {
    parts.erase(gap + 1, parts.end() - kTailParts);
  }
  return JoinParts(parts);
}

bool IsIdentifier(absl::string_view text) {
  if (text.empty() || absl::ascii_isdigit(text[0])) return false;
  for (char c : text) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

bool IsDottedIdentifier(absl::string_view text) {
  for (absl::string_view part : absl::StrSplit(text, '.')) {
    if (!IsIdentifier(part)) return false;
  }
  return true;
}

// The path an attribute access gives, as a value. An unknown-rooted path keeps only its
// longest tail that is a run of some rule's pattern ("?.x.cuda" -> "?.cuda", "?.shape" ->
// "?"): that is all further attributes can combine with, and it keeps values small.
std::string AppendToValue(absl::string_view path, absl::string_view attribute) {
  if (!IsUnknownRooted(path)) return Append(path, attribute);
  Parts parts = SplitPath(path);
  parts.emplace_back(attribute);
  const RuleIndex& rules = RuleIndex::Get();
  for (size_t begin = 1; begin < parts.size(); ++begin) {
    if (std::find(parts.begin() + begin, parts.end(), kGap) != parts.end()) continue;
    if (rules.IsFactor(parts, begin, parts.size())) {
      return absl::StrCat(kUnknown, ".", absl::StrJoin(parts.begin() + begin, parts.end(), "."));
    }
  }
  return kUnknown;
}

const Rule* BestRule(const Parts& parts, size_t begin, size_t end, bool inside_chain) {
  const RuleIndex::Entry* entry = RuleIndex::Get().Best(parts, begin, end, inside_chain);
  return entry == nullptr ? nullptr : entry->rule;
}

bool IsRuleStem(const Parts& parts, size_t begin, size_t end) {
  return RuleIndex::Get().IsStem(parts, begin, end);
}

const Rule* BuiltinRule(absl::string_view name) {
  for (const Rule& rule : kBuiltinRules) {
    if (name == rule.pattern) return &rule;
  }
  return nullptr;
}

bool IsInterpreterGlobal(absl::string_view name) { return Contains(kInterpreterGlobals, name); }
bool IsAttributeBuiltin(absl::string_view name) { return Contains(kAttributeBuiltins, name); }
bool IsInertBuiltin(absl::string_view name) { return Contains(kInertBuiltins, name); }
bool IsIntrospectionAttribute(absl::string_view name) {
  return Contains(kIntrospectionAttributes, name);
}

bool IsLibraryCompute(absl::string_view path) {
  for (const char* library : kLibraryCompute) {
    if (path == library || absl::StartsWith(path, absl::StrCat(library, "."))) return true;
  }
  return false;
}

}  // namespace mkb::audit_detail
