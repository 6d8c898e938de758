#include "libmkb/judge/static_audit.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "libmkb/judge/python_parser.h"

namespace mkb {
namespace {

// --- the rules ----------------------------------------------------------------------------

// A rule's pattern is a dotted path that matches itself and everything below it; a last
// component "*" matches only what is below ("os.*": os.system, not os itself), one ending in
// "*" a family ("os.exec*": os.execv, os.execlp). The most specific matching pattern decides;
// a rule without a code allows (an exception under a broader rule).
struct Rule {
  const char* pattern;
  const char* code;
  const char* reason;
  // Modules: whether the rule also matches where its first component is reached as an
  // attribute inside a chain (torch.ctypes, x.subprocess). Off for names that are ordinary
  // words as attributes (tensor.select, torch.signal): those are import rules only.
  bool inside_chains = true;
};

constexpr char kImport[] = "static.forbidden_import";
constexpr char kCall[] = "static.forbidden_call";
constexpr char kIntrospection[] = "static.introspection";
constexpr char kDynamicImport[] = "static.dynamic_import";
constexpr char kDynamicCode[] = "static.dynamic_code";
constexpr char kDynamicAttribute[] = "static.dynamic_attribute";
constexpr char kModulePatch[] = "static.module_patch";
constexpr char kJudge[] = "static.judge_access";
constexpr char kReference[] = "static.reference_access";
constexpr char kSeed[] = "static.seed_access";

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
    {"operator.attrgetter", kDynamicAttribute, "attribute access by computed name"},
    {"operator.methodcaller", kDynamicAttribute, "attribute access by computed name"},
    {"types.FunctionType", kDynamicCode, "functions built from code objects are forbidden"},
    {"types.LambdaType", kDynamicCode, "functions built from code objects are forbidden"},
    {"types.CodeType", kDynamicCode, "code objects are forbidden"},
    {"types.FrameType", kIntrospection, "frame introspection is forbidden"},
    {"types.TracebackType", kIntrospection, "frame introspection is forbidden"},
    // os: path helpers only.
    {"os.*", kCall, "os reaches processes, descriptors, files and the environment; only os.path "
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
    {"sys.*", kIntrospection, "the interpreter's state is off limits; only version facts are "
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
constexpr const char* kIntrospectionAttributes[] = {
    "__globals__",  "__builtins__",      "__subclasses__", "__code__",       "__closure__",
    "__bases__",    "__base__",          "__mro__",        "__getattribute__", "__getattr__",
    "__setattr__",  "__delattr__",       "__reduce__",     "__reduce_ex__",  "__loader__",
    "__spec__",     "__traceback__",     "__defaults__",   "__kwdefaults__", "__objclass__",
    "__import__",   "f_back",            "f_globals",      "f_locals",       "f_builtins",
    "f_code",       "f_trace",           "gi_frame",       "gi_code",        "gi_yieldfrom",
    "cr_frame",     "cr_code",           "cr_await",       "ag_frame",       "ag_code",
    "ag_await",     "tb_frame",          "tb_next",        "co_code",        "co_consts",
    "__self__",     "__func__",          "__wrapped__",    "__dict__",       "__class__",
    "__init_subclass__", "__torch_function__", "__torch_dispatch__"};

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

// --- paths --------------------------------------------------------------------------------

// The audit tracks values as dotted paths. The root is a module name bound by an import, or
// kUnknown: an object the audit cannot follow (a parameter, a call result), which may be any
// escaped module. A path longer than kHeadParts + kTailParts components keeps its first
// kHeadParts and last kTailParts, with kGap between (rules are at most five components long,
// so matching keeps its meaning; cycles such as `m = m.x` stay finite).
constexpr char kUnknown[] = "?";
constexpr char kGap[] = "*";
constexpr size_t kHeadParts = 6;
constexpr size_t kTailParts = 3;
// A name, attribute or escaped set holding more paths than this, or a fixed point that needs
// more steps than kMaxSteps, is more than the audit follows: static.too_complex.
constexpr size_t kMaxPathsPerSet = 4096;
constexpr size_t kMaxSteps = 2000000;

using Paths = std::set<std::string>;
using Parts = std::vector<std::string>;

Parts SplitPath(absl::string_view path) { return absl::StrSplit(path, '.'); }

std::string JoinParts(const Parts& parts) { return absl::StrJoin(parts, "."); }

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

  const std::vector<Entry>& entries() const { return entries_; }

 private:
  RuleIndex() {
    for (const Rule& rule : kModuleRules) entries_.push_back({&rule, SplitPath(rule.pattern), true});
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

const Rule* FindRule(const Rule* begin, const Rule* end, absl::string_view name) {
  for (const Rule* rule = begin; rule != end; ++rule) {
    if (name == rule->pattern) return rule;
  }
  return nullptr;
}

template <size_t N>
bool Contains(const char* const (&names)[N], absl::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// --- the tree -----------------------------------------------------------------------------

// Calls `visit` on every node directly below `node` (fields in order, list items in order).
template <typename Visit>
void ForEachChild(const PyNode& node, Visit&& visit) {
  for (const auto& [name, value] : node.fields) {
    if (value.kind == PyValue::Kind::kNode) {
      visit(*value.node);
    } else if (value.kind == PyValue::Kind::kList) {
      for (const PyValue& item : value.items) {
        if (item.kind == PyValue::Kind::kNode) visit(*item.node);
      }
    }
  }
}

std::vector<const PyNode*> NodeItems(const PyNode& node, absl::string_view field) {
  std::vector<const PyNode*> out;
  for (const PyValue& item : node.Items(field)) {
    out.push_back(item.kind == PyValue::Kind::kNode ? item.node.get() : nullptr);
  }
  return out;
}

absl::string_view ContextOf(const PyNode& node) {
  const PyNode* ctx = node.Child("ctx");
  return ctx == nullptr ? "Load" : absl::string_view(ctx->type);
}

bool IsDisplay(const PyNode& node) {
  return node.Is("Tuple") || node.Is("List") || node.Is("Set");
}

// A str constant's value, when the node is one the audit can read exactly.
std::optional<std::string> StringConstant(const PyNode* node) {
  if (node == nullptr || !node->Is("Constant")) return std::nullopt;
  const PyValue* value = node->Get("value");
  if (value == nullptr || value->kind != PyValue::Kind::kStr || value->inexact) return std::nullopt;
  return value->text;
}

// The source-like text of a Name / Attribute chain ("T.cuda.graph"), "" for anything else.
std::string ChainText(const PyNode& node) {
  if (node.Is("Name")) return std::string(node.Str("id"));
  if (node.Is("Attribute")) {
    const PyNode* value = node.Child("value");
    const std::string base = value != nullptr ? ChainText(*value) : "";
    return absl::StrCat(base.empty() ? "(...)" : base, ".", node.Str("attr"));
  }
  return "";
}

// --- scopes: which loads of a builtin's name reach the builtin ----------------------------

// Python resolves a name statically: a function's own names (parameters, assignments, defs,
// imports) never fall back to builtins, nor do an enclosing function's; a module's names do
// until they are bound, and again after `del`. The audit takes a kernel's module-level name
// as its own only where an unconditional top-level statement before the one that uses it
// binds it, and nothing deletes it. Class bodies are not trusted to shadow.
class Scopes {
 public:
  explicit Scopes(const PyNode& module) {
    scopes_.push_back({Scope::kModule, -1});
    const std::vector<const PyNode*> body = NodeItems(module, "body");
    for (size_t i = 0; i < body.size(); ++i) {
      statement_ = static_cast<int>(i);
      if (body[i] == nullptr) continue;
      for (const std::string& name : TopLevelBindings(*body[i])) {
        first_binding_.emplace(name, statement_);
      }
      Visit(*body[i], 0);
    }
  }

  // Whether the Name node (a load) refers to the builtin of that name.
  bool IsBuiltin(const PyNode* name_node) const {
    auto it = loads_.find(name_node);
    if (it == loads_.end()) return true;
    const std::string id(name_node->Str("id"));
    int scope = it->second.first;
    const int statement = it->second.second;
    const Scope* s = &scopes_[scope];
    const auto is_function = [](const Scope& f) {
      return f.kind == Scope::kFunction || f.kind == Scope::kComprehension;
    };
    if (is_function(*s)) {
      if (s->globals.count(id)) return !ModuleShadows(id, statement);
      if (s->bound.count(id) || s->nonlocals.count(id)) return false;
    }
    for (scope = s->parent; scope >= 0; scope = scopes_[scope].parent) {
      const Scope& outer = scopes_[scope];
      if (is_function(outer) && outer.bound.count(id) && !outer.globals.count(id)) return false;
      if (outer.kind == Scope::kModule) break;
    }
    return !ModuleShadows(id, statement);
  }

  // Every name bound anywhere (any scope), for star-import resolution.
  bool BoundAnywhere(const std::string& name) const { return all_bound_.count(name) > 0; }

 private:
  struct Scope {
    enum Kind { kModule, kFunction, kClass, kComprehension } kind;
    int parent;
    std::set<std::string> bound, globals, nonlocals;
  };

  bool ModuleShadows(const std::string& id, int statement) const {
    if (deleted_.count(id)) return false;
    auto it = first_binding_.find(id);
    return it != first_binding_.end() && it->second < statement;
  }

  // Names a module-level statement binds whenever it runs to completion.
  static std::vector<std::string> TopLevelBindings(const PyNode& statement) {
    std::vector<std::string> names;
    if (statement.Is("FunctionDef") || statement.Is("AsyncFunctionDef") ||
        statement.Is("ClassDef")) {
      names.emplace_back(statement.Str("name"));
    } else if (statement.Is("Import") || statement.Is("ImportFrom")) {
      for (const PyNode* alias : NodeItems(statement, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        if (name == "*") continue;
        const absl::string_view asname = alias->Str("asname");
        names.emplace_back(!asname.empty() ? std::string(asname)
                                           : statement.Is("Import") ? name.substr(0, name.find('.'))
                                                                    : name);
      }
    } else if (statement.Is("Assign") || statement.Is("AnnAssign")) {
      if (statement.Is("AnnAssign") && statement.Child("value") == nullptr) return names;
      std::vector<const PyNode*> targets = statement.Is("Assign")
                                               ? NodeItems(statement, "targets")
                                               : std::vector<const PyNode*>{statement.Child("target")};
      for (const PyNode* target : targets) {
        if (target != nullptr && target->Is("Name")) names.emplace_back(target->Str("id"));
      }
    }
    return names;
  }

  int NewScope(Scope::Kind kind, int parent) {
    scopes_.push_back({kind, parent});
    return static_cast<int>(scopes_.size()) - 1;
  }

  void Bind(int scope, const std::string& name) {
    scopes_[scope].bound.insert(name);
    all_bound_.insert(name);
  }

  void BindTargets(const PyNode& target, int scope) {
    if (target.Is("Name")) {
      Bind(scope, std::string(target.Str("id")));
      return;
    }
    if (target.Is("Starred") || target.Is("Tuple") || target.Is("List")) {
      ForEachChild(target, [&](const PyNode& child) { BindTargets(child, scope); });
    }
  }

  void VisitArguments(const PyNode* arguments, int outer, int inner) {
    if (arguments == nullptr) return;
    for (const char* field : {"posonlyargs", "args", "kwonlyargs"}) {
      for (const PyNode* arg : NodeItems(*arguments, field)) {
        if (arg == nullptr) continue;
        Bind(inner, std::string(arg->Str("arg")));
        if (const PyNode* annotation = arg->Child("annotation")) Visit(*annotation, outer);
      }
    }
    for (const char* field : {"vararg", "kwarg"}) {
      if (const PyNode* arg = arguments->Child(field)) {
        Bind(inner, std::string(arg->Str("arg")));
        if (const PyNode* annotation = arg->Child("annotation")) Visit(*annotation, outer);
      }
    }
    for (const char* field : {"defaults", "kw_defaults"}) {
      for (const PyNode* value : NodeItems(*arguments, field)) {
        if (value != nullptr) Visit(*value, outer);
      }
    }
  }

  // Where a walrus binds: the nearest enclosing function or the module (not a comprehension
  // or class).
  int FunctionScopeOf(int scope) const {
    while (scopes_[scope].kind == Scope::kClass || scopes_[scope].kind == Scope::kComprehension) {
      scope = scopes_[scope].parent;
    }
    return scope;
  }

  void Visit(const PyNode& node, int scope) {
    const std::string& type = node.type;
    if (type == "FunctionDef" || type == "AsyncFunctionDef" || type == "Lambda") {
      if (type != "Lambda") Bind(scope, std::string(node.Str("name")));
      for (const PyNode* decorator : NodeItems(node, "decorator_list")) {
        if (decorator != nullptr) Visit(*decorator, scope);
      }
      if (const PyNode* returns = node.Child("returns")) Visit(*returns, scope);
      const int inner = NewScope(Scope::kFunction, scope);
      VisitArguments(node.Child("args"), scope, inner);
      if (type == "Lambda") {
        if (const PyNode* body = node.Child("body")) Visit(*body, inner);
      } else {
        for (const PyNode* statement : NodeItems(node, "body")) {
          if (statement != nullptr) Visit(*statement, inner);
        }
      }
      return;
    }
    if (type == "ClassDef") {
      Bind(scope, std::string(node.Str("name")));
      for (const char* field : {"bases", "keywords", "decorator_list"}) {
        for (const PyNode* child : NodeItems(node, field)) {
          if (child != nullptr) Visit(*child, scope);
        }
      }
      const int inner = NewScope(Scope::kClass, scope);
      for (const PyNode* statement : NodeItems(node, "body")) {
        if (statement != nullptr) Visit(*statement, inner);
      }
      return;
    }
    if (type == "ListComp" || type == "SetComp" || type == "DictComp" || type == "GeneratorExp") {
      // The first iterable is evaluated in the enclosing scope, the rest in the comprehension's.
      const int inner = NewScope(Scope::kComprehension, scope);
      const std::vector<const PyNode*> generators = NodeItems(node, "generators");
      const PyNode* first_iterable = nullptr;
      for (size_t i = 0; i < generators.size(); ++i) {
        if (generators[i] == nullptr) continue;
        if (i == 0) first_iterable = generators[i]->Child("iter");
        if (const PyNode* target = generators[i]->Child("target")) BindTargets(*target, inner);
      }
      if (first_iterable != nullptr) Visit(*first_iterable, scope);
      for (const char* field : {"elt", "key", "value"}) {
        if (const PyNode* child = node.Child(field)) Visit(*child, inner);
      }
      for (const PyNode* generator : generators) {
        if (generator == nullptr) continue;
        ForEachChild(*generator, [&](const PyNode& child) {
          if (&child != first_iterable) Visit(child, inner);
        });
      }
      return;
    }
    if (type == "Name") {
      const absl::string_view ctx = ContextOf(node);
      const std::string id(node.Str("id"));
      if (ctx == "Load") {
        loads_[&node] = {scope, statement_};
      } else {
        Bind(scope, id);
        if (ctx == "Del" && (scopes_[scope].kind == Scope::kModule ||
                             scopes_[scope].globals.count(id))) {
          deleted_.insert(id);
        }
      }
      return;
    }
    if (type == "NamedExpr") {
      if (const PyNode* target = node.Child("target")) {
        Bind(FunctionScopeOf(scope), std::string(target->Str("id")));
      }
      if (const PyNode* value = node.Child("value")) Visit(*value, scope);
      return;
    }
    if (type == "Global" || type == "Nonlocal") {
      for (const PyValue& name : node.Items("names")) {
        (type == "Global" ? scopes_[scope].globals : scopes_[scope].nonlocals).insert(name.text);
      }
      return;
    }
    if (type == "Import" || type == "ImportFrom") {
      for (const PyNode* alias : NodeItems(node, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        const absl::string_view asname = alias->Str("asname");
        if (name == "*") continue;
        Bind(scope, !asname.empty()  ? std::string(asname)
                    : type == "Import" ? name.substr(0, name.find('.'))
                                       : name);
      }
      return;
    }
    if (type == "ExceptHandler") {
      const absl::string_view name = node.Str("name");
      if (!name.empty()) Bind(scope, std::string(name));
    }
    if (type == "MatchAs" || type == "MatchStar") {
      const absl::string_view name = node.Str("name");
      if (!name.empty()) Bind(scope, std::string(name));
    }
    if (type == "MatchMapping") {
      const absl::string_view rest = node.Str("rest");
      if (!rest.empty()) Bind(scope, std::string(rest));
    }
    ForEachChild(node, [&](const PyNode& child) { Visit(child, scope); });
  }

  std::vector<Scope> scopes_;
  int statement_ = 0;
  std::map<std::string, int> first_binding_;  // name -> first unconditional top-level binder
  std::set<std::string> deleted_;
  absl::flat_hash_set<std::string> all_bound_;
  absl::flat_hash_map<const PyNode*, std::pair<int, int>> loads_;  // -> (scope, statement)
};

// --- values: which module paths each name may hold ----------------------------------------

// Builtins that do nothing with a module passed to them but read it (print(torch)).
constexpr const char* kInertBuiltins[] = {"print", "repr", "str",      "format", "id",
                                          "type",  "hash", "bool",     "dir",    "callable",
                                          "isinstance", "issubclass", "len"};

bool IsDunder(absl::string_view name) {
  return name.size() > 4 && absl::StartsWith(name, "__") && absl::EndsWith(name, "__");
}

// A flow-insensitive points-to analysis over module paths. Sinks are names (without regard
// to scope), attribute names (class bodies and attribute stores, whatever the object), the
// return values of the kernel's own functions, and the escaped set. Each binding is a
// constraint `sink ⊇ value(expression)`; a worklist runs them to a fixed point.
//
// The escape rule: a module object -- a path an `import` statement binds (`import torch`,
// `import cuda.bindings.driver as cuda`), through any alias -- may be the base of an attribute
// access, be bound to names and attributes, be passed to the kernel's own functions called by
// name (their parameters then hold it) and be returned from them to such a call. Any other
// use is an escape site (EscapeSite): an argument to a function the audit does not follow, an
// element of a container, a subscript store, *args / **kwargs, a yield, a raise, a class base,
// a return from a function others call. Other module-derived values (functions, classes,
// submodules reached by attribute) may escape: they join the escaped set, and every value the
// audit cannot follow may be any escaped path.
class Values {
 public:
  struct EscapeSite {
    const PyNode* expression;
    std::string how;  // "passed to f(...)"
  };

  Values(const PyNode& module, const Scopes& scopes) : scopes_(scopes) {
    Survey(module, false);
    Collect(module, Context{});
    Solve();
  }

  // The module paths an expression may evaluate to (kUnknown: an object the audit cannot
  // follow).
  const Paths& Of(const PyNode& node) {
    auto it = memo_.find(&node);
    if (it != memo_.end()) return it->second;
    Paths value = Eval(node, nullptr);
    return memo_.emplace(&node, std::move(value)).first->second;
  }

  const Paths& escaped() const { return escaped_; }
  const std::set<std::string>& module_objects() const { return module_objects_; }
  const std::vector<EscapeSite>& escape_sites() const { return escape_sites_; }
  const std::vector<std::string>& star_modules() const { return star_modules_; }
  bool too_complex() const { return too_complex_; }

  // The escaped paths that may still reach a rule when more attributes follow them.
  std::vector<std::string> RelevantEscapes() const {
    std::vector<std::string> out;
    const RuleIndex& rules = RuleIndex::Get();
    for (const std::string& path : escaped_) {
      const Parts parts = SplitPath(path);
      // Only the run after the last gap continues into appended attributes.
      size_t begin = 0;
      for (size_t k = 0; k < parts.size(); ++k) {
        if (parts[k] == kGap) begin = k + 1;
      }
      for (; begin < parts.size(); ++begin) {
        if (rules.IsStem(parts, begin, parts.size())) {
          out.push_back(path);
          break;
        }
      }
    }
    return out;
  }

  bool IsBuiltinCall(const PyNode& call, absl::string_view builtin) const {
    const PyNode* func = call.Child("func");
    return func != nullptr && func->Is("Name") && func->Str("id") == builtin &&
           scopes_.IsBuiltin(func);
  }

 private:
  enum class SinkKind { kName, kAttribute, kReturn, kEscape };
  struct Constraint {
    SinkKind sink;
    std::string key;
    const PyNode* expression;  // nullptr: `fixed` only
    Paths fixed;
  };
  using Dependencies = std::vector<std::string>;  // "n:name", "a:attribute", "r:function"

  struct Context {
    bool in_class = false;      // directly in a class body: names bound are attributes too
    std::string function;       // the enclosing function of the kernel's own ("" at top level)
    bool returns_tracked = false;
  };

  // The kernel's own functions: defs and lambdas bound to a name.
  struct Function {
    const PyNode* node;
    bool method;  // defined in a class body (not a staticmethod): self comes first
    bool decorated;
  };

  // --- what the kernel's functions are and how they are used

  void Survey(const PyNode& node, bool class_body) {
    const std::string& type = node.type;
    if (type == "FunctionDef" || type == "AsyncFunctionDef") {
      bool static_method = false;
      const auto decorators = NodeItems(node, "decorator_list");
      for (const PyNode* decorator : decorators) {
        static_method |= decorator != nullptr && decorator->Is("Name") &&
                         decorator->Str("id") == "staticmethod";
      }
      (class_body ? methods_ : functions_)[std::string(node.Str("name"))].push_back(
          {&node, class_body && !static_method, !decorators.empty()});
    } else if (type == "ClassDef") {
      other_bindings_.insert(std::string(node.Str("name")));
    } else if (type == "Assign") {
      const PyNode* value = node.Child("value");
      if (value != nullptr && value->Is("Lambda")) {
        for (const PyNode* target : NodeItems(node, "targets")) {
          if (target == nullptr || !target->Is("Name")) continue;
          const std::string name(target->Str("id"));
          functions_[name].push_back({value, false, false});
          lambda_names_[value] = name;
          function_targets_.insert(target);
        }
      }
    } else if (type == "Import" || type == "ImportFrom") {
      for (const PyNode* alias : NodeItems(node, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        const std::string asname(alias->Str("asname"));
        other_bindings_.insert(!asname.empty() ? asname
                               : type == "Import" ? name.substr(0, name.find('.'))
                                                  : name);
      }
    } else if (type == "arg") {
      other_bindings_.insert(std::string(node.Str("arg")));
    } else if (type == "ExceptHandler" || type == "MatchAs" || type == "MatchStar") {
      if (!node.Str("name").empty()) other_bindings_.insert(std::string(node.Str("name")));
    } else if (type == "MatchMapping") {
      if (!node.Str("rest").empty()) other_bindings_.insert(std::string(node.Str("rest")));
    } else if (type == "Name") {
      const std::string id(node.Str("id"));
      if (ContextOf(node) == "Load") {
        value_references_.insert(id);
      } else if (!function_targets_.count(&node)) {
        other_bindings_.insert(id);
      }
    } else if (type == "Call") {
      const PyNode* func = node.Child("func");
      ForEachChild(node, [&](const PyNode& child) {
        if (&child != func || !func->Is("Name")) Survey(child, false);
      });
      return;
    }
    const bool body_of_class = type == "ClassDef";
    ForEachChild(node, [&](const PyNode& child) {
      Survey(child, body_of_class || (class_body && IsStatement(child) && type != "FunctionDef" &&
                                      type != "AsyncFunctionDef"));
    });
  }

  // A name bound only to the kernel's own undecorated plain functions: a call of it runs
  // their code, nothing else.
  bool IsLocalFunction(const std::string& name) const {
    auto it = functions_.find(name);
    if (it == functions_.end() || other_bindings_.count(name)) return false;
    return std::none_of(it->second.begin(), it->second.end(),
                        [](const Function& f) { return f.decorated; });
  }

  // ... whose return values reach only its direct callers.
  bool ReturnsTracked(const std::string& name) const {
    return IsLocalFunction(name) && !value_references_.count(name) && !IsDunder(name);
  }

  // --- constraints

  void Add(SinkKind sink, std::string key, const PyNode* expression, Paths fixed = {}) {
    constraints_.push_back({sink, std::move(key), expression, std::move(fixed)});
  }

  void EscapeAt(const PyNode* expression, std::string how) {
    if (expression == nullptr) return;
    if (expression->Is("Starred")) expression = expression->Child("value");
    if (expression == nullptr) return;
    Add(SinkKind::kEscape, "", expression);
    escape_sites_.push_back({expression, std::move(how)});
  }

  // `target = <expression>` (or a fixed value when expression is nullptr).
  void Bind(const PyNode& target, const PyNode* expression, Paths fixed, const Context& context) {
    if (target.Is("Name")) {
      const std::string id(target.Str("id"));
      Add(SinkKind::kName, id, expression, fixed);
      if (context.in_class) Add(SinkKind::kAttribute, id, expression, fixed);
    } else if (target.Is("Attribute")) {
      Add(SinkKind::kAttribute, std::string(target.Str("attr")), expression, fixed);
    } else if (target.Is("Subscript")) {
      EscapeAt(expression, "stored with a subscript");
    } else if (target.Is("Starred")) {
      if (const PyNode* value = target.Child("value")) Bind(*value, nullptr, {kUnknown}, context);
    } else if (target.Is("Tuple") || target.Is("List")) {
      // Unpacking what the audit cannot split: each target may be anything escaped.
      for (const PyNode* elt : NodeItems(target, "elts")) {
        if (elt != nullptr) Bind(*elt, nullptr, {kUnknown}, context);
      }
      EscapeAt(expression, "unpacked");
    }
  }

  // `target = value`, splitting `a, b = x, y` pairwise.
  void Assign(const PyNode& target, const PyNode& value, const Context& context) {
    if ((target.Is("Tuple") || target.Is("List")) && (value.Is("Tuple") || value.Is("List"))) {
      const auto targets = NodeItems(target, "elts");
      const auto values = NodeItems(value, "elts");
      auto starred = [](const std::vector<const PyNode*>& nodes) {
        return std::any_of(nodes.begin(), nodes.end(),
                           [](const PyNode* n) { return n == nullptr || n->Is("Starred"); });
      };
      if (targets.size() == values.size() && !starred(targets) && !starred(values)) {
        consumed_.insert(&value);
        for (size_t i = 0; i < targets.size(); ++i) Assign(*targets[i], *values[i], context);
        return;
      }
    }
    Bind(target, &value, {}, context);
  }

  // `for target in iterable`: the elements of a literal display, else anything escaped.
  void Iterate(const PyNode& target, const PyNode& iterable, const Context& context) {
    if (IsDisplay(iterable) &&
        std::none_of(iterable.Items("elts").begin(), iterable.Items("elts").end(),
                     [](const PyValue& elt) { return elt.node == nullptr || elt.node->Is("Starred"); })) {
      consumed_.insert(&iterable);
      for (const PyNode* elt : NodeItems(iterable, "elts")) Assign(target, *elt, context);
      return;
    }
    Bind(target, nullptr, {kUnknown}, context);
  }

  void Parameters(const PyNode* arguments) {
    if (arguments == nullptr) return;
    std::vector<const PyNode*> positional;
    for (const char* field : {"posonlyargs", "args"}) {
      for (const PyNode* arg : NodeItems(*arguments, field)) positional.push_back(arg);
    }
    const auto defaults = NodeItems(*arguments, "defaults");
    const size_t first_default = positional.size() - std::min(positional.size(), defaults.size());
    for (size_t i = 0; i < positional.size(); ++i) {
      if (positional[i] == nullptr) continue;
      const std::string name(positional[i]->Str("arg"));
      Add(SinkKind::kName, name, nullptr, {kUnknown});
      if (i >= first_default && defaults[i - first_default] != nullptr) {
        Add(SinkKind::kName, name, defaults[i - first_default]);
      }
    }
    const auto kwonly = NodeItems(*arguments, "kwonlyargs");
    const auto kw_defaults = NodeItems(*arguments, "kw_defaults");
    for (size_t i = 0; i < kwonly.size(); ++i) {
      if (kwonly[i] == nullptr) continue;
      const std::string name(kwonly[i]->Str("arg"));
      Add(SinkKind::kName, name, nullptr, {kUnknown});
      if (i < kw_defaults.size() && kw_defaults[i] != nullptr) {
        Add(SinkKind::kName, name, kw_defaults[i]);
      }
    }
    for (const char* field : {"vararg", "kwarg"}) {
      if (const PyNode* arg = arguments->Child(field)) {
        Add(SinkKind::kName, std::string(arg->Str("arg")), nullptr, {kUnknown});
      }
    }
  }

  // Binds the arguments of `call` to the parameters of `function`. Returns false for an
  // argument that lands in *args / **kwargs (a container the audit does not follow).
  bool BindArguments(const PyNode& call, const Function& function, bool through_attribute) {
    const PyNode* arguments = function.node->Child("args");
    if (arguments == nullptr) return false;
    std::vector<std::string> positional;
    for (const char* field : {"posonlyargs", "args"}) {
      for (const PyNode* arg : NodeItems(*arguments, field)) {
        if (arg != nullptr) positional.emplace_back(arg->Str("arg"));
      }
    }
    if (function.method && through_attribute && !positional.empty()) {
      positional.erase(positional.begin());
    }
    std::vector<std::string> named = positional;
    for (const PyNode* arg : NodeItems(*arguments, "kwonlyargs")) {
      if (arg != nullptr) named.emplace_back(arg->Str("arg"));
    }
    bool exact = true;
    const auto args = NodeItems(call, "args");
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == nullptr) continue;
      if (args[i]->Is("Starred")) {  // f(*xs): xs was built (and escaped) elsewhere
        for (const std::string& parameter : positional) {
          Add(SinkKind::kName, parameter, nullptr, {kUnknown});
        }
        break;
      }
      if (i < positional.size()) {
        Add(SinkKind::kName, positional[i], args[i]);
      } else {
        exact = false;
      }
    }
    for (const PyNode* keyword : NodeItems(call, "keywords")) {
      if (keyword == nullptr) continue;
      const std::string parameter(keyword->Str("arg"));
      if (std::find(named.begin(), named.end(), parameter) != named.end()) {
        Add(SinkKind::kName, parameter, keyword->Child("value"));
      } else if (!parameter.empty()) {
        exact = false;
      }
    }
    return exact;
  }

  void CollectCall(const PyNode& node) {
    const PyNode* func = node.Child("func");
    if (func == nullptr) return;
    const auto args = NodeItems(node, "args");
    const auto keywords = NodeItems(node, "keywords");
    // getattr(x, "name") / hasattr: resolved like x.name; setattr(x, "name", v): x.name = v.
    if ((IsBuiltinCall(node, "getattr") || IsBuiltinCall(node, "hasattr")) && args.size() >= 2 &&
        StringConstant(args[1])) {
      return;
    }
    if (IsBuiltinCall(node, "setattr") && args.size() >= 3 && StringConstant(args[1])) {
      Add(SinkKind::kAttribute, *StringConstant(args[1]), args[2]);
      return;
    }
    for (const char* builtin : kAttributeBuiltins) {
      if (IsBuiltinCall(node, builtin)) return;  // with a computed name: dynamic_attribute
    }
    if (func->Is("Name") && scopes_.IsBuiltin(func) && Contains(kInertBuiltins, func->Str("id"))) {
      return;
    }
    const std::string callee = ChainText(*func);
    bool followed = false;
    if (func->Is("Name") || func->Is("Attribute")) {
      const std::string name(func->Is("Name") ? func->Str("id") : func->Str("attr"));
      const auto& table = func->Is("Name") ? functions_ : methods_;
      if (auto it = table.find(name); it != table.end()) {
        bool exact = true;
        for (const Function& function : it->second) {
          exact &= BindArguments(node, function, func->Is("Attribute"));
        }
        followed = exact && func->Is("Name") && IsLocalFunction(name);
      }
    }
    if (followed) return;
    const std::string how =
        absl::StrCat("passed to ", callee.empty() ? "a call" : callee + "(...)",
                     ", which the audit does not follow");
    for (const PyNode* arg : args) EscapeAt(arg, how);
    for (const PyNode* keyword : keywords) {
      if (keyword != nullptr) EscapeAt(keyword->Child("value"), how);
    }
  }

  void Collect(const PyNode& node, const Context& context) {
    const std::string& type = node.type;
    Context inner = context;
    inner.in_class = false;
    if (type == "Import" || type == "ImportFrom") {
      std::string module(node.Str("module"));
      for (const PyNode* alias : NodeItems(node, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        const std::string asname(alias->Str("asname"));
        std::string bound, path;
        if (type == "Import") {
          bound = asname.empty() ? name.substr(0, name.find('.')) : asname;
          path = asname.empty() ? bound : name;
          module_objects_.insert(path);
        } else if (name == "*") {
          star_modules_.push_back(module);
          continue;
        } else {
          bound = asname.empty() ? name : asname;
          path = absl::StrCat(module, ".", name);
        }
        Add(SinkKind::kName, bound, nullptr, {path});
        if (context.in_class) Add(SinkKind::kAttribute, bound, nullptr, {path});
      }
      return;
    }
    if (type == "Assign") {
      if (const PyNode* value = node.Child("value")) {
        for (const PyNode* target : NodeItems(node, "targets")) {
          if (target != nullptr) Assign(*target, *value, context);
        }
      }
    } else if (type == "AnnAssign") {
      const PyNode* target = node.Child("target");
      const PyNode* value = node.Child("value");
      if (target != nullptr && value != nullptr) Assign(*target, *value, context);
    } else if (type == "AugAssign") {
      if (const PyNode* target = node.Child("target")) Bind(*target, nullptr, {kUnknown}, context);
      EscapeAt(node.Child("value"), "used as an operand");
    } else if (type == "NamedExpr") {
      const PyNode* target = node.Child("target");
      const PyNode* value = node.Child("value");
      if (target != nullptr && value != nullptr) Assign(*target, *value, inner);
    } else if (type == "For" || type == "AsyncFor" || type == "comprehension") {
      const PyNode* target = node.Child("target");
      const PyNode* iterable = node.Child("iter");
      if (target != nullptr && iterable != nullptr) {
        Iterate(*target, *iterable, type == "comprehension" ? inner : context);
      }
    } else if (type == "withitem") {
      if (const PyNode* vars = node.Child("optional_vars")) {
        Bind(*vars, nullptr, {kUnknown}, context);
      }
    } else if (type == "ExceptHandler" || type == "MatchAs" || type == "MatchStar") {
      const absl::string_view name = node.Str("name");
      if (!name.empty()) Add(SinkKind::kName, std::string(name), nullptr, {kUnknown});
    } else if (type == "MatchMapping") {
      const absl::string_view rest = node.Str("rest");
      if (!rest.empty()) Add(SinkKind::kName, std::string(rest), nullptr, {kUnknown});
    } else if (type == "Match") {
      EscapeAt(node.Child("subject"), "matched against patterns");
    } else if (type == "Return") {
      if (context.returns_tracked) {
        if (const PyNode* value = node.Child("value")) {
          Add(SinkKind::kReturn, context.function, value);
        }
      } else {
        EscapeAt(node.Child("value"),
                 context.function.empty()
                     ? "returned"
                     : absl::StrCat("returned from ", context.function,
                                    "(), which is called where the audit does not follow"));
      }
    } else if (type == "Yield" || type == "YieldFrom") {
      EscapeAt(node.Child("value"), "yielded");
    } else if (type == "Await") {
      EscapeAt(node.Child("value"), "awaited");
    } else if (type == "Raise") {
      EscapeAt(node.Child("exc"), "raised");
      EscapeAt(node.Child("cause"), "raised");
    } else if (type == "FunctionDef" || type == "AsyncFunctionDef" || type == "Lambda") {
      Context body;
      if (type == "Lambda") {
        auto it = lambda_names_.find(&node);
        body.function = it != lambda_names_.end() ? it->second : "lambda";
        body.returns_tracked = it != lambda_names_.end() && ReturnsTracked(it->second);
      } else {
        const std::string name(node.Str("name"));
        Add(SinkKind::kName, name, nullptr, {kUnknown});
        if (context.in_class) Add(SinkKind::kAttribute, name, nullptr, {kUnknown});
        body.function = name;
        body.returns_tracked = !context.in_class && ReturnsTracked(name);
      }
      Parameters(node.Child("args"));
      for (const PyNode* decorator : NodeItems(node, "decorator_list")) {
        if (decorator != nullptr) Collect(*decorator, inner);
      }
      if (const PyNode* arguments = node.Child("args")) Collect(*arguments, inner);
      if (const PyNode* returns = node.Child("returns")) Collect(*returns, inner);
      if (type == "Lambda") {
        if (const PyNode* value = node.Child("body")) {
          if (body.returns_tracked) {
            Add(SinkKind::kReturn, body.function, value);
          } else {
            EscapeAt(value, "returned from a lambda the audit does not see called");
          }
          Collect(*value, body);
        }
      } else {
        for (const PyNode* statement : NodeItems(node, "body")) {
          if (statement != nullptr) Collect(*statement, body);
        }
      }
      return;
    } else if (type == "ClassDef") {
      const std::string name(node.Str("name"));
      Add(SinkKind::kName, name, nullptr, {kUnknown});
      if (context.in_class) Add(SinkKind::kAttribute, name, nullptr, {kUnknown});
      for (const PyNode* base : NodeItems(node, "bases")) EscapeAt(base, "used as a class base");
      for (const PyNode* keyword : NodeItems(node, "keywords")) {
        if (keyword != nullptr) EscapeAt(keyword->Child("value"), "passed to a metaclass");
      }
      for (const char* field : {"bases", "keywords", "decorator_list"}) {
        for (const PyNode* child : NodeItems(node, field)) {
          if (child != nullptr) Collect(*child, inner);
        }
      }
      Context body = inner;
      body.in_class = true;
      for (const PyNode* statement : NodeItems(node, "body")) {
        if (statement != nullptr) Collect(*statement, body);
      }
      return;
    } else if (type == "Call") {
      CollectCall(node);
    } else if ((IsDisplay(node) && ContextOf(node) == "Load" && !consumed_.count(&node)) ||
               type == "Dict") {
      for (const char* field : {"elts", "keys", "values"}) {
        for (const PyNode* elt : NodeItems(node, field)) EscapeAt(elt, "stored in a container");
      }
    } else if (type == "ListComp" || type == "SetComp" || type == "GeneratorExp") {
      EscapeAt(node.Child("elt"), "stored in a container");
    } else if (type == "DictComp") {
      EscapeAt(node.Child("key"), "stored in a container");
      EscapeAt(node.Child("value"), "stored in a container");
    }
    // Class attributes are the class body's own statements (also inside if / for / with).
    ForEachChild(node, [&](const PyNode& child) {
      Context next = context;
      next.in_class = context.in_class && IsStatement(child);
      Collect(child, next);
    });
  }

  static bool IsStatement(const PyNode& node) {
    static const std::set<std::string, std::less<>> kStatements = {
        "If",        "For",        "AsyncFor", "While",    "With",          "AsyncWith",
        "Try",       "TryStar",    "Match",    "match_case", "ExceptHandler", "withitem",
        "Assign",    "AnnAssign",  "AugAssign", "Import",  "ImportFrom",    "FunctionDef",
        "AsyncFunctionDef", "ClassDef"};
    return kStatements.count(node.type) > 0;
  }

  // `getattr(x, "name"[, default])` / `hasattr(x, "name")` with the builtin: the node x.
  const PyNode* GetattrTarget(const PyNode& call) const {
    if (!IsBuiltinCall(call, "getattr") && !IsBuiltinCall(call, "hasattr")) return nullptr;
    const auto args = NodeItems(call, "args");
    if (args.size() < 2 || args[0] == nullptr || !StringConstant(args[1])) return nullptr;
    return args[0];
  }

  // --- evaluation

  const Paths* Sink(SinkKind kind, const std::string& key) const {
    const auto& map = kind == SinkKind::kName        ? names_
                      : kind == SinkKind::kAttribute ? attributes_
                                                     : returns_;
    auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
  }

  void AddAttribute(const Paths& base, const std::string& attribute, Dependencies* deps,
                    Paths* out) const {
    for (const std::string& path : base) out->insert(AppendToValue(path, attribute));
    if (deps != nullptr) deps->push_back("a:" + attribute);
    if (const Paths* held = Sink(SinkKind::kAttribute, attribute)) {
      out->insert(held->begin(), held->end());
    }
  }

  Paths Eval(const PyNode& node, Dependencies* deps) const {
    Paths out;
    const std::string& type = node.type;
    if (type == "Name") {
      const std::string id(node.Str("id"));
      if (deps != nullptr) deps->push_back("n:" + id);
      if (const Paths* held = Sink(SinkKind::kName, id)) out = *held;
      if (!scopes_.BoundAnywhere(id)) {
        // A name nothing in the file binds: a builtin, one a star import brought, or a module
        // something the audit did not see imported (ctypes.CDLL(None) after a hidden import).
        out.insert(id);
        for (const std::string& module : star_modules_) out.insert(absl::StrCat(module, ".", id));
      }
      return out;
    }
    if (type == "Attribute") {
      if (const PyNode* value = node.Child("value")) {
        AddAttribute(Eval(*value, deps), std::string(node.Str("attr")), deps, &out);
      }
      return out;
    }
    if (type == "Subscript") {
      out.insert(kUnknown);
      const PyNode* value = node.Child("value");
      const auto key = StringConstant(node.Child("slice"));
      if (value != nullptr && key && IsDottedIdentifier(*key)) {
        for (const std::string& path : Eval(*value, deps)) {
          if (IsUnknownRooted(path)) continue;
          // A module's mapping indexed by name (sys.modules["os"], m.__dict__["x"]).
          out.insert(AppendToValue(path, *key));
          out.insert(*key);
        }
      }
      return out;
    }
    if (type == "Call") {
      if (const PyNode* target = GetattrTarget(node)) {
        const auto args = NodeItems(node, "args");
        const std::string attribute = *StringConstant(args[1]);
        if (IsIdentifier(attribute)) {
          AddAttribute(Eval(*target, deps), attribute, deps, &out);
        } else {
          out.insert(kUnknown);
        }
        if (args.size() > 2 && args[2] != nullptr) {
          for (const std::string& path : Eval(*args[2], deps)) out.insert(path);
        }
        return out;
      }
      out.insert(kUnknown);
      const PyNode* func = node.Child("func");
      if (func != nullptr && func->Is("Name") && ReturnsTracked(std::string(func->Str("id")))) {
        const std::string name(func->Str("id"));
        if (deps != nullptr) deps->push_back("r:" + name);
        if (const Paths* held = Sink(SinkKind::kReturn, name)) {
          out.insert(held->begin(), held->end());
        }
      }
      return out;
    }
    if (type == "NamedExpr" || type == "Starred") {
      const PyNode* value = node.Child("value");
      return value != nullptr ? Eval(*value, deps) : out;
    }
    if (type == "IfExp" || type == "BoolOp") {
      const PyNode* test = node.Child("test");
      ForEachChild(node, [&](const PyNode& child) {
        if (&child == test) return;
        for (const std::string& path : Eval(child, deps)) out.insert(path);
      });
      return out;
    }
    // Values that are never modules: literals, strings, comparisons, functions, containers
    // (whose elements were escape sites when they were built), operators.
    static const std::set<std::string, std::less<>> kNotModules = {
        "Constant", "JoinedStr", "FormattedValue", "Compare",  "Lambda",       "Tuple",
        "List",     "Set",       "Dict",           "ListComp", "SetComp",      "DictComp",
        "GeneratorExp", "Slice"};
    if (kNotModules.count(type)) return out;
    out.insert(kUnknown);  // BinOp, UnaryOp, Await, Yield, ...: the audit cannot follow it
    return out;
  }

  void Solve() {
    absl::flat_hash_map<std::string, std::vector<size_t>> readers;
    std::deque<size_t> work;
    std::vector<bool> queued(constraints_.size(), true);
    std::vector<bool> indexed(constraints_.size(), false);
    for (size_t i = 0; i < constraints_.size(); ++i) work.push_back(i);
    size_t steps = 0;
    while (!work.empty()) {
      if (++steps > kMaxSteps) {
        too_complex_ = true;
        return;
      }
      const size_t index = work.front();
      work.pop_front();
      queued[index] = false;
      const Constraint& constraint = constraints_[index];
      Paths value = constraint.fixed;
      if (constraint.expression != nullptr) {
        Dependencies deps;
        for (const std::string& path : Eval(*constraint.expression, &deps)) value.insert(path);
        if (!indexed[index]) {
          indexed[index] = true;
          for (const std::string& dep : deps) readers[dep].push_back(index);
        }
      }
      Paths* sink = nullptr;
      std::string changed;
      switch (constraint.sink) {
        case SinkKind::kName:
          sink = &names_[constraint.key];
          changed = "n:" + constraint.key;
          break;
        case SinkKind::kAttribute:
          sink = &attributes_[constraint.key];
          changed = "a:" + constraint.key;
          break;
        case SinkKind::kReturn:
          sink = &returns_[constraint.key];
          changed = "r:" + constraint.key;
          break;
        case SinkKind::kEscape:
          sink = &escaped_;
          break;
      }
      bool grew = false;
      for (const std::string& path : value) {
        // The escaped set holds what unknown values may be: module objects are escape sites
        // instead (reported), unknown objects add nothing.
        if (constraint.sink == SinkKind::kEscape &&
            (IsUnknownRooted(path) || module_objects_.count(path))) {
          continue;
        }
        grew |= sink->insert(path).second;
      }
      if (sink->size() > kMaxPathsPerSet) {
        too_complex_ = true;
        return;
      }
      if (!grew || changed.empty()) continue;
      auto it = readers.find(changed);
      if (it == readers.end()) continue;
      for (size_t reader : it->second) {
        if (!queued[reader]) {
          queued[reader] = true;
          work.push_back(reader);
        }
      }
    }
  }

  const Scopes& scopes_;
  std::map<std::string, std::vector<Function>> functions_, methods_;
  std::map<const PyNode*, std::string> lambda_names_;
  std::set<const PyNode*> function_targets_;
  std::set<std::string> other_bindings_, value_references_;
  std::vector<Constraint> constraints_;
  std::set<const PyNode*> consumed_;  // displays split by an assignment or a for loop
  absl::flat_hash_map<std::string, Paths> names_, attributes_, returns_;
  Paths escaped_;
  std::set<std::string> module_objects_;
  std::vector<EscapeSite> escape_sites_;
  std::vector<std::string> star_modules_;
  bool too_complex_ = false;
  absl::flat_hash_map<const PyNode*, Paths> memo_;
};

// --- the audit ----------------------------------------------------------------------------

// PEP 263: an encoding declaration in the first two lines. The worker imports kernel.py from
// its file, so the declared codec decides what runs; the audit reads the text as UTF-8.
std::optional<std::string> DeclaredEncoding(absl::string_view source) {
  if (absl::StartsWith(source, "\xEF\xBB\xBF")) source.remove_prefix(3);
  const std::string head = absl::StrReplaceAll(source.substr(0, 4096), {{"\r\n", "\n"}});
  std::vector<absl::string_view> lines = absl::StrSplit(head, absl::ByAnyChar("\r\n"));
  int seen = 0;
  for (absl::string_view line : lines) {
    if (seen++ == 2) break;
    const absl::string_view stripped = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::StartsWith(stripped, "#")) continue;
    for (size_t at = stripped.find("coding"); at != absl::string_view::npos;
         at = stripped.find("coding", at + 1)) {
      size_t k = at + 6;
      if (k >= stripped.size() || (stripped[k] != ':' && stripped[k] != '=')) continue;
      ++k;
      while (k < stripped.size() && (stripped[k] == ' ' || stripped[k] == '\t')) ++k;
      size_t end = k;
      while (end < stripped.size() &&
             (absl::ascii_isalnum(stripped[end]) || stripped[end] == '-' || stripped[end] == '_' ||
              stripped[end] == '.')) {
        ++end;
      }
      if (end > k) return std::string(stripped.substr(k, end - k));
    }
  }
  return std::nullopt;
}

bool IsUtf8Name(std::string name) {
  name = absl::AsciiStrToLower(name);
  std::replace(name.begin(), name.end(), '_', '-');
  return name == "utf-8" || absl::StartsWith(name, "utf-8-") || name == "utf8" || name == "u8" ||
         name == "utf";
}

class Auditor {
 public:
  Auditor(absl::string_view source, const PyNode& module, const StaticAuditOptions& options)
      : source_(source), module_(module), options_(options) {}

  std::vector<v1::AuditFinding> Run() {
    CheckEncoding();
    Scopes scopes(module_);
    scopes_ = &scopes;
    Values values(module_, scopes);
    values_ = &values;
    if (values.too_complex()) {
      Add("static.too_complex", v1::SEVERITY_VIOLATION, 0,
          "the audit cannot follow the module aliasing in this file (too many paths)", "");
    }
    relevant_escapes_ = values.RelevantEscapes();
    CheckEscapes();
    Check(module_);
    CheckDsl();
    return std::move(findings_);
  }

  void AddUnparsable(const std::string& message) {
    Add("static.unparsable", v1::SEVERITY_VIOLATION, 0,
        absl::StrCat("the audit's parser cannot read kernel.py (", message,
                     "); what it cannot read, it does not pass"),
        message);
  }

  std::vector<v1::AuditFinding> TakeFindings() { return std::move(findings_); }

 private:
  void Add(const std::string& code, v1::FindingSeverity severity, int line,
           const std::string& message, const std::string& snippet) {
    if (findings_.size() >= 64) return;
    if (!seen_.insert(absl::StrCat(code, ":", line)).second) return;
    v1::AuditFinding finding;
    finding.set_code(code);
    finding.set_severity(severity);
    finding.set_phase(v1::PHASE_STATIC_AUDIT);
    finding.set_message(message);
    finding.set_evidence(line > 0 ? absl::StrCat(options_.filename, ":", line, ": ", snippet)
                                  : absl::StrCat(options_.filename, ": ", snippet));
    findings_.push_back(std::move(finding));
  }

  void CheckEncoding() {
    const auto encoding = DeclaredEncoding(source_);
    if (encoding && !IsUtf8Name(*encoding)) {
      Add("static.source_encoding", v1::SEVERITY_VIOLATION, 0,
          absl::StrCat("kernel.py declares the encoding '", *encoding,
                       "': Python would decode it differently from the UTF-8 text audited"),
          absl::StrCat("coding: ", *encoding));
    }
  }

  // Matches the rules against every run of components of `path` (a path the kernel reaches)
  // and reports each forbidden one. `what` is how the kernel wrote it.
  void CheckPath(const std::string& path, int line, const std::string& what) {
    const Parts parts = SplitPath(path);
    const RuleIndex& rules = RuleIndex::Get();
    for (size_t begin = 0; begin < parts.size(); ++begin) {
      if (parts[begin] == kGap || parts[begin] == kUnknown) continue;
      size_t end = begin;
      while (end < parts.size() && parts[end] != kGap) ++end;
      const bool inside_chain = begin > 0;
      const RuleIndex::Entry* entry = rules.Best(parts, begin, end, inside_chain);
      if (entry == nullptr || entry->rule->code == nullptr) continue;
      std::string shown = path;
      if (IsUnknownRooted(shown)) shown = shown.substr(std::min<size_t>(2, shown.size()));
      Add(entry->rule->code, v1::SEVERITY_VIOLATION, line,
          absl::StrCat(shown, shown == what || what.empty() ? "" : absl::StrCat(" (", what, ")"),
                       ": ", entry->rule->reason),
          what.empty() ? shown : what);
    }
  }

  // CheckPath for a path the kernel reaches through a value; an unknown root may be any
  // escaped module.
  void CheckReach(const std::string& path, int line, const std::string& what) {
    CheckPath(path, line, what);
    if (!IsUnknownRooted(path)) return;
    const std::string rest = path.size() > 1 ? path.substr(2) : "";
    if (rest.empty()) return;
    for (const std::string& escaped : relevant_escapes_) {
      CheckPath(absl::StrCat(escaped, ".", rest), line, what);
    }
  }


  // A module object where the audit cannot follow it (the escape rule, class Values).
  void CheckEscapes() {
    for (const Values::EscapeSite& site : values_->escape_sites()) {
      for (const std::string& path : values_->Of(*site.expression)) {
        if (!values_->module_objects().count(path)) continue;
        const std::string what = ChainText(*site.expression);
        Add("static.module_escape", v1::SEVERITY_VIOLATION, site.expression->line,
            absl::StrCat("the module ", path, what.empty() || what == path ? "" : " (" + what + ")",
                         " is ", site.how, ": what is reached through it cannot be audited"),
            what.empty() ? path : what);
        break;
      }
    }
  }

  // An attribute store or delete on `base`: patching a module (or a class of one), through
  // any alias the audit follows. (A store on a value it cannot follow is not attributed: the
  // runtime audit and the process boundary bound what a patch of the kernel's own process
  // gains.)
  void CheckPatch(const PyNode& base, absl::string_view attribute, int line,
                  const std::string& what) {
    for (const std::string& path : values_->Of(base)) {
      if (IsUnknownRooted(path)) continue;
      Add(kModulePatch, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("assigning to ", path, ".", attribute, ": patching modules is forbidden"),
          what + " = ...");
      return;
    }
  }

  void CheckIntrospectionAttribute(absl::string_view attribute, int line, const std::string& what) {
    if (Contains(kIntrospectionAttributes, attribute)) {
      Add(kIntrospection, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("access to .", attribute, ": reaching interpreter internals is forbidden"),
          what.empty() ? absl::StrCat(".", attribute) : what);
    }
  }

  void CheckModule(const std::string& module, int line, const std::string& snippet) {
    imported_.insert(module);
    const Parts parts = SplitPath(module);
    const RuleIndex::Entry* entry = RuleIndex::Get().Best(parts, 0, parts.size(), false);
    if (entry != nullptr && entry->rule->code != nullptr) {
      Add(entry->rule->code, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("import of ", module, ": ", entry->rule->reason), snippet);
    }
    // Forbidden modules reached inside the imported path (from torch import ctypes).
    CheckPath(module, line, snippet);
  }

  void CheckImport(const PyNode& node) {
    const int line = node.line;
    if (node.Is("Import")) {
      for (const PyNode* alias : NodeItems(node, "names")) {
        if (alias == nullptr) continue;
        const std::string name(alias->Str("name"));
        CheckModule(name, line, absl::StrCat("import ", name));
      }
      return;
    }
    const std::string module(node.Str("module"));
    const PyValue* level = node.Get("level");
    const bool relative = level != nullptr && level->text != "0";
    if (relative) {
      Add(kImport, v1::SEVERITY_VIOLATION, line, "relative import: kernel.py must be self-contained",
          absl::StrCat("from ", std::string(std::stoi(level->text), '.'), module, " import ..."));
    }
    if (!module.empty()) CheckModule(module, line, absl::StrCat("from ", module, " import ..."));
    for (const PyNode* alias : NodeItems(node, "names")) {
      if (alias == nullptr || module.empty()) continue;
      const std::string name(alias->Str("name"));
      if (name == "*") continue;
      const std::string full = absl::StrCat(module, ".", name);
      CheckModule(full, line, absl::StrCat("from ", module, " import ", name));
    }
  }

  void CheckName(const PyNode& node, bool is_call_target) {
    if (ContextOf(node) != "Load") return;
    const std::string id(node.Str("id"));
    const int line = node.line;
    if (Contains(kInterpreterGlobals, id)) {
      Add(kIntrospection, v1::SEVERITY_VIOLATION, line,
          absl::StrCat(id, ": reaching interpreter internals is forbidden"), id);
      return;
    }
    const bool builtin = scopes_->IsBuiltin(&node);
    if (builtin) {
      if (const Rule* rule = FindRule(std::begin(kBuiltinRules), std::end(kBuiltinRules), id)) {
        Add(rule->code, v1::SEVERITY_VIOLATION, line,
            absl::StrCat(id, ": ", rule->reason,
                         is_call_target ? "" : " (referenced, not only called)"),
            id + (is_call_target ? "(...)" : ""));
      }
      if (Contains(kAttributeBuiltins, id) && !is_call_target) {
        Add(kDynamicAttribute, v1::SEVERITY_VIOLATION, line,
            absl::StrCat(id, " used as a value: the audit cannot see what it reaches"), id);
      }
    }
    // Names a star import may have bound (from torch import *; compile(...)).
    if (!values_->star_modules().empty() && !scopes_->BoundAnywhere(id)) {
      for (const std::string& module : values_->star_modules()) {
        CheckPath(absl::StrCat(module, ".", id), line, id);
      }
    }
  }

  // getattr / setattr / delattr / hasattr called directly.
  void CheckAttributeBuiltinCall(const PyNode& call) {
    const PyNode* func = call.Child("func");
    const std::string name(func->Str("id"));
    const auto args = NodeItems(call, "args");
    const int line = call.line;
    const auto attribute = args.size() >= 2 ? StringConstant(args[1]) : std::nullopt;
    if (!attribute || args[0] == nullptr || args[0]->Is("Starred")) {
      Add(kDynamicAttribute, v1::SEVERITY_VIOLATION, line,
          absl::StrCat(name, " with a computed attribute name: the audit cannot see what it reaches"),
          name + "(...)");
      return;
    }
    const std::string what = absl::StrCat(name, "(", ChainText(*args[0]), ", \"", *attribute, "\")");
    if (!IsIdentifier(*attribute)) {
      Add(kDynamicAttribute, v1::SEVERITY_VIOLATION, line,
          absl::StrCat(name, " of '", *attribute, "', which is not an identifier"), what);
      return;
    }
    CheckIntrospectionAttribute(*attribute, line, what);
    for (const std::string& path : values_->Of(*args[0])) {
      CheckReach(Append(path, *attribute), line, what);
    }
    if (name == "setattr" || name == "delattr") CheckPatch(*args[0], *attribute, line, what);
  }

  void CheckAttribute(const PyNode& node) {
    const std::string attribute(node.Str("attr"));
    const int line = node.line;
    const std::string what = ChainText(node);
    CheckIntrospectionAttribute(attribute, line, what);
    const PyNode* value = node.Child("value");
    if (value == nullptr) return;
    for (const std::string& path : values_->Of(*value)) {
      CheckReach(Append(path, attribute), line, what);
    }
    if (ContextOf(node) != "Load") CheckPatch(*value, attribute, line, what);
  }

  void CheckSubscript(const PyNode& node) {
    const PyNode* value = node.Child("value");
    const auto key = StringConstant(node.Child("slice"));
    if (value == nullptr || !key || !IsDottedIdentifier(*key)) return;
    for (const std::string& path : values_->Of(*value)) {
      if (IsUnknownRooted(path)) continue;
      const std::string what = absl::StrCat(ChainText(*value), "[\"", *key, "\"]");
      CheckPath(Append(path, *key), node.line, what);
      CheckPath(*key, node.line, what);
    }
  }

  void CheckCall(const PyNode& node) {
    const PyNode* func = node.Child("func");
    if (func == nullptr) return;
    if (func->Is("Name") && Contains(kAttributeBuiltins, func->Str("id")) &&
        scopes_->IsBuiltin(func)) {
      CheckAttributeBuiltinCall(node);
    }
    const std::string what = ChainText(*func) + "(...)";
    for (const std::string& path : values_->Of(*func)) {
      if (IsUnknownRooted(path)) continue;
      for (const char* library : kLibraryCompute) {
        if (path == library || absl::StartsWith(path, absl::StrCat(library, "."))) {
          Add("static.library_compute", v1::SEVERITY_WARNING, node.line,
              absl::StrCat(path, " runs a library / ATen kernel; the runtime audit weighs its share"),
              what);
          break;
        }
      }
      if (absl::StartsWith(path, "torch.cuda.Stream") ||
          absl::StartsWith(path, "torch.cuda.stream")) {
        Add("static.side_stream", v1::SEVERITY_WARNING, node.line,
            "side streams must be joined before solve returns; the judge checks outputs on the "
            "current stream",
            what);
      }
    }
  }

  void Check(const PyNode& node) {
    const std::string& type = node.type;
    if (type == "Import" || type == "ImportFrom") {
      CheckImport(node);
    } else if (type == "Attribute") {
      CheckAttribute(node);
    } else if (type == "Subscript") {
      CheckSubscript(node);
    } else if (type == "Call") {
      CheckCall(node);
      // The callee position: a forbidden builtin called, getattr called directly.
      const PyNode* func = node.Child("func");
      if (func != nullptr && func->Is("Name")) CheckName(*func, true);
      ForEachChild(node, [&](const PyNode& child) {
        if (&child != func || !func->Is("Name")) Check(child);
      });
      return;
    } else if (type == "Name") {
      CheckName(node, false);
    } else if (type == "match_case" || type == "MatchClass") {
      // `case C(attr=p)` reads attr of the subject: forbidden names are forbidden there too.
      for (const PyValue& attribute : node.Items("kwd_attrs")) {
        CheckIntrospectionAttribute(attribute.text, node.line, "case ...(" + attribute.text + "=...)");
      }
    } else if (type == "BinOp") {
      const PyNode* op = node.Child("op");
      if (op != nullptr && op->Is("MatMult")) {
        Add("static.library_compute", v1::SEVERITY_WARNING, node.line,
            "matrix product with @ runs a library kernel (cuBLAS); the runtime audit weighs its "
            "share",
            "@");
      }
    }
    ForEachChild(node, [&](const PyNode& child) { Check(child); });
  }

  void CheckDsl() {
    if (options_.dsl == v1::DSL_UNSPECIFIED) return;
    auto imports = [&](absl::string_view root) {
      for (const std::string& module : imported_) {
        if (module == root || absl::StartsWith(module, absl::StrCat(root, "."))) return true;
      }
      return false;
    };
    const bool cute = imports("cutlass");
    const bool tvm = imports("tvm");
    const bool own = options_.dsl == v1::CUTEDSL ? cute : tvm;
    const bool other = options_.dsl == v1::CUTEDSL ? tvm : cute;
    const char* own_name =
        options_.dsl == v1::CUTEDSL ? "CuTe DSL (import cutlass)" : "TVM TIRx (import tvm)";
    const char* other_name = options_.dsl == v1::CUTEDSL ? "tvm" : "cutlass";
    if (other) {
      Add("static.wrong_dsl", v1::SEVERITY_VIOLATION, 0,
          absl::StrCat("imports ", other_name, ": a variant may use only its own DSL, ", own_name),
          other_name);
    }
    if (!own) {
      Add("static.no_dsl_import",
          options_.require_dsl ? v1::SEVERITY_VIOLATION : v1::SEVERITY_SKIPPED, 0,
          absl::StrCat("kernel.py does not import ", own_name,
                       options_.require_dsl ? "; every call must launch a kernel written in it"
                                            : " (not required on this device)"),
          "imports: " + absl::StrJoin(imported_, ", "));
    }
  }

  absl::string_view source_;
  const PyNode& module_;
  StaticAuditOptions options_;
  const Scopes* scopes_ = nullptr;
  Values* values_ = nullptr;
  std::vector<std::string> relevant_escapes_;
  std::set<std::string> imported_;
  std::set<std::string> seen_;
  std::vector<v1::AuditFinding> findings_;
};

}  // namespace

std::optional<std::pair<std::string, std::string>> AuditModule(absl::string_view module) {
  const Parts parts = SplitPath(module);
  const RuleIndex::Entry* entry = RuleIndex::Get().Best(parts, 0, parts.size(), false);
  if (entry == nullptr || entry->rule->code == nullptr) return std::nullopt;
  return std::make_pair(std::string(entry->rule->code), std::string(entry->rule->reason));
}

std::vector<v1::AuditFinding> StaticAudit(absl::string_view source, const PyNode& module,
                                          const StaticAuditOptions& options) {
  return Auditor(source, module, options).Run();
}

std::vector<v1::AuditFinding> StaticAudit(absl::string_view source,
                                          const StaticAuditOptions& options) {
  absl::StatusOr<std::unique_ptr<PyNode>> module = ParsePython(source);
  if (!module.ok()) {
    PyNode empty;
    empty.type = "Module";
    Auditor auditor(source, empty, options);
    auditor.AddUnparsable(std::string(module.status().message()));
    return auditor.TakeFindings();
  }
  return StaticAudit(source, **module, options);
}

void ApplyAuditPolicy(const v1::AuditPolicy& policy, std::vector<v1::AuditFinding>* findings) {
  const std::set<std::string> allow(policy.allow().begin(), policy.allow().end());
  const std::set<std::string> deny(policy.deny().begin(), policy.deny().end());
  for (v1::AuditFinding& finding : *findings) {
    if (finding.severity() == v1::SEVERITY_SKIPPED) continue;
    if (deny.count(finding.code())) {
      finding.set_severity(v1::SEVERITY_VIOLATION);
    } else if (allow.count(finding.code()) ||
               (policy.permissive() && finding.phase() == v1::PHASE_STATIC_AUDIT &&
                finding.severity() == v1::SEVERITY_VIOLATION)) {
      finding.set_severity(v1::SEVERITY_WARNING);
    }
  }
}

std::vector<std::pair<std::string, std::string>> StaticAuditCodes() {
  return {
      {"static.forbidden_import",
       "imports or reaches a module SPEC §2 forbids (other compilers, raw CUDA, kernel "
       "libraries, processes, threads, network, files), also inside a chain (torch.ctypes)"},
      {"static.forbidden_call",
       "calls or references a forbidden function (torch.compile, CUDA Graphs, os.system, "
       "open, ...), through any alias or module"},
      {"static.dynamic_import", "imports modules at run time (__import__, importlib, pkgutil)"},
      {"static.dynamic_code", "runs code built at run time (eval, exec, compile, code objects)"},
      {"static.dynamic_attribute",
       "reaches attributes by computed name (getattr / setattr with a non-literal name, getattr "
       "passed as a value, operator.attrgetter)"},
      {"static.introspection", "reaches interpreter internals (frames, globals, sys.modules, gc)"},
      {"static.module_escape",
       "passes a module object (bound by import) where the audit cannot follow it: to a "
       "function it does not see, into a container, *args, a yield or raise"},
      {"static.module_patch",
       "assigns to attributes of imported modules (patching torch, changing backends), through "
       "any alias"},
      {"static.judge_access", "touches the judge, its profilers or its numerics settings"},
      {"static.reference_access", "uses the problem's reference or make_inputs"},
      {"static.seed_access", "reads or sets random seeds"},
      {"static.source_encoding",
       "declares a source encoding other than UTF-8 (Python would run other text than the "
       "audited one)"},
      {"static.unparsable",
       "source the audit's parser cannot read the way CPython does (C++ front end only)"},
      {"static.too_complex",
       "module aliasing beyond what the audit follows (more than 4096 paths for one name)"},
      {"static.wrong_dsl", "imports the other variant's DSL"},
      {"static.no_dsl_import", "does not import the variant's DSL"},
      {"static.library_compute",
       "calls library / ATen compute (warning: the runtime audit weighs it)"},
      {"static.side_stream",
       "uses side streams (warning: the judge checks outputs on the current stream)"},
  };
}

}  // namespace mkb
