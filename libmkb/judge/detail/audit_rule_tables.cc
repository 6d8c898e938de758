#include "libmkb/judge/detail/audit_rule_tables.h"

#include "absl/strings/str_cat.h"
#include "libmkb/judge/detail/audit_codes.h"

namespace mkb::audit_detail {
namespace {

constexpr char kNoFiles[] = "file access is forbidden";
constexpr char kNoProcesses[] = "subprocesses are forbidden";
constexpr char kNoThreads[] = "threads are forbidden (work must finish inside solve)";
constexpr char kNoInterpreters[] =
    "other interpreters are forbidden (their code and threads are outside the judge's watch)";
constexpr char kNoTestModules[] =
    "CPython's test modules reach raw memory and interpreter internals";
constexpr char kNoNetwork[] = "network access is forbidden";
constexpr char kNoSeeds[] = "kernels may not depend on or change seeds";
constexpr char kNoGraphs[] = "CUDA Graphs are forbidden";
constexpr char kNoCompile[] = "torch.compile machinery is forbidden";
constexpr char kArrayInterface[] =
    "an array interface describes memory by a raw address (raw memory access is forbidden)";
constexpr char kRawAddress[] =
    "torch's storage and tensor internals by a raw address (raw memory access is forbidden)";
constexpr char kNativeFile[] =
    "torch opens the file or shared memory in C++ (file access is forbidden)";
constexpr char kFreedUnder[] =
    "memory freed or shrunk under the tensors that view it (raw memory access is forbidden)";
constexpr char kUncheckedView[] =
    "a view whose strides or offset ATen does not bound-check (raw memory access is forbidden)";
constexpr char kSparse[] =
    "sparse tensors: ATen does not bound-check their indices (raw memory access is forbidden)";
constexpr char kNoRawCuda[] =
    "raw CUDA modules, launches and graphs through the driver / runtime API are forbidden";
constexpr char kDslPrivate[] =
    "the DSL's private internals (its compiler's state and configuration, its IR builders, which "
    "write memory accesses of any address into the host code it compiles) are off limits: a "
    "kernel uses the DSL's public API";
constexpr char kDslInternals[] =
    "the DSL's compiler singleton and its configuration are off limits (a kernel uses the DSL's "
    "public API)";
constexpr char kNoLibrary[] = "DSL kernels from a kernel library are forbidden";
constexpr char kForeignApi[] =
    "ctypes' and cffi's foreign calls and raw memory (native calls and raw memory access are "
    "forbidden)";
constexpr char kBorrowedCompare[] =
    "a comparison or reflected-operator hook CPython or numpy calls on objects it may hold "
    "borrowed (raw memory access is forbidden)";
constexpr char kTorchOutsideAten[] =
    "torch's operators outside aten are off limits (several trust their offsets and index "
    "mappings: raw memory access is forbidden)";
constexpr char kUncheckedIndex[] =
    "an ATen kernel that does not bound-check its indices (raw memory access is forbidden)";
// torch's private operators and helpers (a name with one leading underscore): ATen's private
// operators are the helpers its public ones call after checking their inputs, and several trust
// them (red team rounds 24-26, 2026-12-06: _cummax_helper's stride, the fused optimisers' state
// sizes, _convert_indices_from_csr_to_coo's values, each raw memory). As a class, with the
// exceptions kPrivateTorchAllowed names.
constexpr char kPrivateOp[] =
    "torch's private operators trust their callers to have checked their inputs (raw memory "
    "access is forbidden); use the public operator";
constexpr char kExternCall[] =
    "a TIR call of a native symbol or packed function by name: compiled for the host, it calls "
    "anything in the process (native calls are forbidden)";

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
    // mock's patchers read and replace attributes named as text (patch.object(o, name)).
    {"unittest.mock", kImport, "mock's patchers reach attributes by computed names"},
    // The test loader imports and reads attributes by names given as text (loadTestsFromName).
    {"unittest", kDynamicImport, "its loaders import and resolve names given as text"},
    {"_operator", kImport, "the C module behind operator: getters by computed names"},
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
    // Processes and CPUs managed through a C extension that raises no audit event
    // (psutil._pslinux.cext.proc_cpu_affinity_set widened the CPU judge's pin; red team,
    // 2026-12-05 evening).
    {"psutil", kImport, "process and CPU management is forbidden"},
    // The pure-Python twin of io (its FileIO opens and truncates descriptors; a red team truncated
    // the host's input segment through it, 2026-12-05 evening).
    {"_pyio", kImport, "the pure-Python io opens files and descriptors"},
    {"_posixsubprocess", kImport, kNoProcesses},
    {"multiprocessing", kImport, kNoProcesses},
    {"_multiprocessing", kImport, kNoProcesses},
    {"concurrent", kImport, "threads and processes are forbidden"},
    {"threading", kImport, kNoThreads},
    {"_thread", kImport, "threads are forbidden"},
    // Other interpreters in the worker: their code and threads are outside the kernel's thread
    // and its census; CPython's test modules reach raw memory and interpreter internals.
    {"_xxsubinterpreters", kImport, kNoInterpreters},
    {"_xxinterpchannels", kImport, kNoInterpreters},
    {"_interpreters", kImport, kNoInterpreters},
    {"_interpchannels", kImport, kNoInterpreters},
    {"_interpqueues", kImport, kNoInterpreters},
    {"_testcapi", kImport, kNoTestModules},
    {"_testinternalcapi", kImport, kNoTestModules},
    {"_testmultiphase", kImport, kNoTestModules},
    {"_testsinglephase", kImport, kNoTestModules},
    {"_testbuffer", kImport, kNoTestModules},
    {"_testimportmultiple", kImport, kNoTestModules},
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
    // Loaders and test tools that hand back a module named as text (yaml's !!python/module tag,
    // _pytest.monkeypatch.resolve: red team, 2026-12-06).
    {"yaml", kDynamicImport, "YAML's loaders build modules and objects from text"},
    {"jinja2", kDynamicAttribute,
     "Jinja's environments read attributes by names given as text and compile templates"},
    {"_yaml", kDynamicImport, "YAML's loaders build modules and objects from text"},
    {"_pytest", kDynamicImport, "pytest's helpers import and resolve names given as text"},
    {"pytest", kDynamicImport, "pytest's helpers import and resolve names given as text"},
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
    {"metakernelbench", kJudge, "the judge is off limits"},
    {"_mkb_problem", kReference, "the problem's reference is off limits"},
    {"reference", kReference, "the problem's reference is off limits", false},
};

// Attribute paths a kernel may not touch (calls or references), below allowed modules.
constexpr Rule kAttributeRules[] = {
    {"torch.compile", kCall, "torch.compile is forbidden"},
    {"torch.compiler", kCall, kNoCompile},
    {"torch.jit", kCall, "torch.jit is forbidden"},
    // TorchScript's entry points re-exported at torch's top level.
    {"torch.CompilationUnit", kCall, "TorchScript is forbidden (it compiles code from text)"},
    {"torch.fork", kCall, "TorchScript's fork is forbidden (its tasks run on native threads)"},
    {"torch.wait", kCall, "TorchScript's fork is forbidden (its tasks run on native threads)"},
    {"torch.import_ir_module*", kCall, "TorchScript is forbidden (it loads compiled code)"},
    {"torch._dynamo", kCall, kNoCompile},
    {"torch._inductor", kCall, kNoCompile},
    {"torch.export", kCall, kNoCompile},
    {"torch._export", kCall, kNoCompile},
    {"torch.fx", kCall, "torch.fx generates and executes Python source"},
    // torch's symbolic scalars: torch's C++ asks a node's Python methods (is_int, guard_int, ...)
    // while it walks a list of sizes by borrowed pointer, its length read before (eleventh
    // session: a node that emptied the list made view() read past its end).
    {"torch.SymInt", kCall, kNoCompile},
    {"torch.SymFloat", kCall, kNoCompile},
    {"torch.SymBool", kCall, kNoCompile},
    {"torch.types.Sym*", kCall, kNoCompile},
    // Private names of torch's namespaces and operator tables (more specific rules above and
    // below decide torch._C, torch._dynamo and the like; kPrivateTorchAllowed the exceptions).
    {"torch._*", kCall, kPrivateOp},
    // And below torch's public modules (eleventh session's second red team:
    // torch.masked.maskedtensor._ops_refs' function table, written with a handler of the kernel's
    // that freed an argument torch's __torch_function__ dispatch still pointed to).
    {"torch.*._*", kCall, kPrivateOp},
    {"torch.*.*._*", kCall, kPrivateOp},
    {"torch.*.*.*._*", kCall, kPrivateOp},
    // Prototype tensor subclasses whose Python hooks call entries of tables any code can write.
    {"torch.masked", kCall,
     "masked tensors are forbidden (their hooks call tables any code writes)"},
    {"torch.sparse.semi_structured", kCall, kSparse},
    {"torch.ops.aten._*", kCall, kPrivateOp},
    {"torch.Tensor._*", kCall, kPrivateOp},
    {"torch.nn.Module.compile", kCall, "Module.compile is torch.compile"},
    {"torch.utils.cpp_extension", kCall, "inline extensions are forbidden"},
    {"torch.utils.collect_env", kCall, kNoProcesses},
    {"torch.utils.benchmark", kCall, "its timers compile and execute code strings"},
    {"torch.utils._python_dispatch", kIntrospection, "dispatch modes are forbidden"},
    // Public modules whose helpers enter a dispatch mode that calls back into the kernel's code
    // inside torch's C++ (adversarial case dispatch_mode_list_walk).
    {"torch.utils.checkpoint", kCall, "dispatch modes are forbidden"},
    {"torch.utils.flop_counter", kCall, "dispatch modes are forbidden"},
    {"torch.utils.module_tracker", kCall, "dispatch modes are forbidden"},
    {"torch.autograd.graph.allow_mutation_on_saved_tensors", kCall, "dispatch modes are forbidden"},
    {"torch.library", kCall, "registering custom ops is forbidden"},
    {"torch._library", kCall, "registering custom ops is forbidden"},
    {"torch._ops", kCall, "torch's operator registry is off limits"},
    {"torch.ops.load_library", kCall, "loading native libraries is forbidden"},
    {"torch.ops.import_module", kDynamicImport, "dynamic imports are forbidden"},
    {"torch.classes.load_library", kCall, "loading native libraries is forbidden"},
    {"torch.hub", kCall, "downloading and running code is forbidden"},
    {"torch.package", kCall, "unpickling runs code; loading packages is forbidden"},
    {"torch.sparse", kCall, kSparse},
    {"torch.frombuffer", kCall, kFreedUnder},
    {"torch.asarray", kCall, kFreedUnder},
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
    // enum_object_hook and _dict_deserialize import a module and read attributes named as text
    // (red team, 2026-12-06: sys.modules and os.close reached past every rule, 77-81x).
    {"torch.utils._pytree", kIntrospection,
     "torch internals are off limits (torch.utils._pytree imports modules named as text)"},
    {"torch.utils._config_module", kIntrospection,
     "torch internals are off limits (torch.utils._config_module imports modules named as text)"},
    // _import_dotted_name resolves a dotted name given as text (torch._C's raw-pointer
    // constructors, say) where no rule reads it.
    {"torch._utils", kIntrospection,
     "torch internals are off limits (torch._utils resolves dotted names given as text)"},
    {"torch.set_num_threads", kModulePatch,
     "the eager baseline runs with the judge's thread count; changing it changes the comparison"},
    {"torch.set_num_interop_threads", kModulePatch,
     "the eager baseline runs with the judge's thread count; changing it changes the comparison"},
    {"torch.cuda.CUDAGraph", kCall, kNoGraphs},
    {"torch.cuda.graph*", kCall, kNoGraphs},
    {"torch.cuda.make_graphed_callables", kCall, kNoGraphs},
    {"torch.cuda.jiterator", kCall, "runtime-compiled CUDA is forbidden"},
    {"torch.use_deterministic_algorithms", kJudge, "the judge's numerics settings are off limits"},
    {"torch.utils.deterministic", kJudge, "the judge's numerics settings are off limits"},
    // Reading them is off limits too: the judge's poisoned correctness calls turn deterministic
    // mode on, so reading it would tell a correctness draw from a timed one.
    {"torch.are_deterministic_algorithms_enabled", kJudge,
     "the judge's numerics settings are off limits (reading them tells its draws apart)"},
    {"torch.is_deterministic_algorithms_warn_only_enabled", kJudge,
     "the judge's numerics settings are off limits (reading them tells its draws apart)"},
    {"torch.get_deterministic_debug_mode", kJudge,
     "the judge's numerics settings are off limits (reading them tells its draws apart)"},
    {"torch.set_deterministic_debug_mode", kJudge, "the judge's numerics settings are off limits"},
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
    // torch._C under other names (red team, 2026-12-05 evening: torch._python_dispatcher.C and
    // torch._tensor._C reached _dispatch_library and set_num_threads past the rule above): any
    // module's _C inside a chain, and the modules of torch that import it as another name (the
    // third, torch.utils.benchmark, is forbidden above).
    {"_C", kIntrospection, "torch internals are off limits (torch._C under another module)"},
    {"torch._python_dispatcher", kIntrospection, "torch internals are off limits"},
    {"torch._C_for_compiled_check", kIntrospection, "torch internals are off limits"},
    {"numpy.ctypeslib", kCall, "raw memory access is forbidden"},
    // Raw memory with no ctypes and no audit event: a strided view is not bounded by its buffer.
    {"numpy.lib.stride_tricks.as_strided", kCall,
     "raw memory access is forbidden (a strided view reaches past its buffer)"},
    {"numpy.lib.stride_tricks.DummyArray", kCall,
     "raw memory access is forbidden (it wraps an array interface)"},
    // Operators torch registers outside aten (torch 2.11's namespaces; the worker refuses each
    // namespace the dispatcher lists at run time, whatever the version): the quantized embedding
    // bags read their indices behind the offsets they are given (seventh session's red team,
    // 2026-12-06: torch.ops.quantized.embedding_bag_byte_rowwise_offsets, passed strict), and no
    // kernel needs one. A namespace the kernel defines with torch.library is not among them.
    {"torch.ops.quantized", kCall, kTorchOutsideAten},
    {"torch.ops._quantized", kCall, kTorchOutsideAten},
    {"torch.ops.quantized_decomposed", kCall, kTorchOutsideAten},
    {"torch.ops.quantization", kCall, kTorchOutsideAten},
    {"torch.ops.prims", kCall, kTorchOutsideAten},
    {"torch.ops.debugprims", kCall, kTorchOutsideAten},
    {"torch.ops.rngprims", kCall, kTorchOutsideAten},
    {"torch.ops.symm_mem", kCall, kTorchOutsideAten},
    {"torch.ops.static_runtime", kCall, kTorchOutsideAten},
    {"torch.ops.onednn", kCall, kTorchOutsideAten},
    {"torch.ops.mkldnn", kCall, kTorchOutsideAten},
    {"torch.ops.mkldnn_prepacked", kCall, kTorchOutsideAten},
    {"torch.ops.mkl", kCall, kTorchOutsideAten},
    {"torch.ops.prepacked", kCall, kTorchOutsideAten},
    {"torch.ops.sparse", kCall, kTorchOutsideAten},
    {"torch.ops.inductor", kCall, kTorchOutsideAten},
    {"torch.ops.profiler", kCall, kTorchOutsideAten},
    {"torch.ops.c10d", kCall, kTorchOutsideAten},
    {"torch.ops._c10d_functional", kCall, kTorchOutsideAten},
    {"torch.ops._c10d_functional_autograd", kCall, kTorchOutsideAten},
    {"torch.ops._dtensor", kCall, kTorchOutsideAten},
    {"torch.ops._test", kCall, kTorchOutsideAten},
    {"torch.ops.debug_mode_ops", kCall, kTorchOutsideAten},
    {"torch.ops.export", kCall, kTorchOutsideAten},
    {"torch.ops.fbgemm", kCall, kTorchOutsideAten},
    // numpy's implementation modules: the same as_strided under numpy.lib._stride_tricks_impl
    // passed strict (seventh session's red team, 2026-12-06). No kernel needs numpy's private
    // modules.
    {"numpy.lib._*", kCall, "numpy's private implementation modules are off limits"},
    {"numpy._core", kCall, "numpy's private implementation modules are off limits"},
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
    // The DSLs' private names: their compilers' state and configuration (CuTe DSL's _get_dsl,
    // whose envar a red team rewrote, thirteenth session) and their IR builders (cutlass._mlir's
    // llvm dialect writes loads and stores of any address into the DSL's host code).
    {"cutlass._*", kCall, kDslPrivate},
    {"cutlass.*._*", kCall, kDslPrivate},
    {"cutlass.*.*._*", kCall, kDslPrivate},
    {"cutlass.*.*.*._*", kCall, kDslPrivate},
    {"cutlass.*.*.*.*._*", kCall, kDslPrivate},
    {"tvm._*", kCall, kDslPrivate},
    {"tvm.*._*", kCall, kDslPrivate},
    {"tvm.*.*._*", kCall, kDslPrivate},
    {"tvm.*.*.*._*", kCall, kDslPrivate},
    {"tvm_ffi._*", kCall, kDslPrivate},
    {"tvm_ffi.*._*", kCall, kDslPrivate},
    {"tvm_ffi.*.*._*", kCall, kDslPrivate},
    {"torch.distributions.utils.lazy_property", kDynamicAttribute,
     "sets an attribute under its function's __name__ (a setattr by a name given at run time)"},
    {"tvm.support.nvcc", kCall, "compiling raw CUDA source is forbidden"},
    {"tvm.contrib.nvcc", kCall, "compiling raw CUDA source is forbidden"},
    {"tvm.contrib.cc", kCall, "compiling native code is forbidden"},
    {"tvm.rpc", kCall, kNoNetwork},
    // TVMScript from text: the parser evaluates the text's expressions with builtins at hand,
    // none of which the static audit reads (red team, 2026-12-06: a deputy set-up passed as a
    // string). Kernels define their functions with the decorators, which parse kernel.py.
    {"tvm.script.from_source", kCall, "parsing source text at run time is forbidden"},
    {"tvm.script.parse", kCall, "parsing source text at run time is forbidden"},
    {"tvm.script.parser.parse", kCall, "parsing source text at run time is forbidden"},
    {"tvm.runtime.load_module", kCall, "loading native modules is forbidden"},
    {"tvm.runtime.module.load_module", kCall, "loading native modules is forbidden"},
    {"tvm.get_global_func", kDynamicAttribute, "FFI functions looked up by name reach anything"},
    {"tvm.ffi.get_global_func", kDynamicAttribute,
     "FFI functions looked up by name reach anything"},
    {"tvm_ffi.get_global_func", kDynamicAttribute,
     "FFI functions looked up by name reach anything"},
    // Every FFI function of a namespace installed as globals of a module by name (red team,
    // fourteenth session: tvm_ffi.init_ffi_api("runtime", __name__) put
    // runtime.TVMTensorCopyToBytes in kernel.py's globals with no get_global_func in its source,
    // and it copied to any address, strict), and the registry's list of names.
    {"tvm_ffi.init_ffi_api", kCall, "FFI functions looked up by name reach anything"},
    {"tvm_ffi.registry.init_ffi_api", kCall, "FFI functions looked up by name reach anything"},
    {"tvm.ffi.init_ffi_api", kCall, "FFI functions looked up by name reach anything"},
    {"tvm_ffi.list_global_func_names", kCall, "FFI functions looked up by name reach anything"},
    {"tvm_ffi.registry.list_global_func_names", kCall,
     "FFI functions looked up by name reach anything"},
    // The same through tvm_ffi's registry module (red team, 2026-12-06: not flagged).
    {"tvm_ffi.registry.get_global_func", kDynamicAttribute,
     "FFI functions looked up by name reach anything"},
    {"tvm_ffi.registry.register_global_func", kCall,
     "overriding the DSL's own functions is forbidden"},
    {"tvm_ffi.registry.register_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm_ffi.load_module", kCall, "loading native modules is forbidden"},
    // The same loader under its other names (red team, 2026-12-06: not flagged; the worker's
    // noexec view then failed the load of a library the kernel wrote).
    {"tvm_ffi.module.load_module", kCall, "loading native modules is forbidden"},
    {"tvm_ffi.cpp.extension.load_module", kCall, "loading native modules is forbidden"},
    {"tvm_ffi._ffi_api.ModuleLoadFromFile", kCall, "loading native modules is forbidden"},
    {"tvm.runtime.module._load_module", kCall, "loading native modules is forbidden"},
    {"tvm.runtime.load_static_library", kCall, "loading native modules is forbidden"},
    {"tvm.runtime.module.load_static_library", kCall, "loading native modules is forbidden"},
    // Registering a global function can replace the DSL's own hooks (its CUDA compile
    // callback, for one): raw CUDA in the DSL's name.
    {"tvm.register_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm.register_global_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm.ffi.register_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm.ffi.register_global_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm_ffi.register_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"tvm_ffi.register_global_func", kCall, "overriding the DSL's own functions is forbidden"},
    {"weakref.finalize", kCall, "callbacks that run after solve returns are forbidden"},
    // A weak reference's callback runs when its object dies: after solve returns, when the judge
    // drops the call's inputs or outputs (red team, 2026-12-05 evening: a callback of C callables
    // wrote the answer into the exported outputs). Weak references have no use in a kernel.
    {"weakref.ref", kCall, "weak-reference callbacks run after solve returns"},
    {"weakref.WeakMethod", kCall, "weak-reference callbacks run after solve returns"},
    {"weakref.KeyedRef", kCall, "weak-reference callbacks run after solve returns"},
    {"_weakref", kCall, "weak-reference callbacks run after solve returns"},
    // CPython 3.11 and 3.12 compare (and operate on) a proxy's referent by a borrowed pointer,
    // and itertools.groupby its saved and current keys: a comparison that drops the last
    // reference frees what it compares (ninth session's fourth red team, 2026-12-07: raw memory
    // with allowed modules only, passed strict at 17-25x). The worker holds them at run time too.
    {"weakref.proxy", kCall, kBorrowedCompare},
    {"itertools.groupby", kCall, kBorrowedCompare},
    {"codecs.open", kCall, kNoFiles},
    {"logging.FileHandler", kCall, kNoFiles},
    {"logging.handlers", kCall, "log handlers write files and sockets"},
    {"logging.config", kDynamicImport,
     "it imports and resolves names given as text (ext://, (), class names)"},
    // dataclasses' private helpers: _set_new_attribute is a setattr by computed name (a red team
    // put a str-subclass key into a module's namespace with it, 2026-12-05 evening).
    {"dataclasses._*", kDynamicAttribute,
     "dataclasses' private helpers set attributes by computed names"},
    // They read each field's attribute by the field's name, which a kernel can set after the
    // class exists (dataclasses.fields(C)[0].name = text: round 19, 2026-12-06, read numpy's
    // .ctypes helper through replace with no getattr in the source).
    {"dataclasses.replace", kDynamicAttribute,
     "it reads attributes by field names, which can be changed at run time"},
    {"dataclasses.asdict", kDynamicAttribute,
     "it reads attributes by field names, which can be changed at run time"},
    {"dataclasses.astuple", kDynamicAttribute,
     "it reads attributes by field names, which can be changed at run time"},
    {"warnings._getcategory", kDynamicImport, "it imports and resolves a name given as text"},
    {"operator.attrgetter", kDynamicAttribute, "attribute access by computed name"},
    {"operator.methodcaller", kDynamicAttribute, "attribute access by computed name"},
    // Formatter.get_field walks a dotted path of attributes given as text and hands back the
    // object; update_wrapper copies (and sets) attributes named in its arguments.
    {"string.Formatter", kDynamicAttribute, "attribute access by a computed dotted name"},
    {"functools.update_wrapper", kDynamicAttribute,
     "attribute copies by computed names (assigned=, updated=)"},
    {"functools.wraps", kDynamicAttribute,
     "attribute copies by computed names (assigned=, updated=)"},
    // The C module behind operator: the same getters by other names.
    {"_operator.attrgetter", kDynamicAttribute, "attribute access by computed name"},
    {"_operator.methodcaller", kDynamicAttribute, "attribute access by computed name"},
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

// Attributes that reach the interpreter's internals from any object. (__annotations__: what a
// function's annotations hold; `def f(a: os)` made os a value the audit lost, red team
// 2026-12-06, 65-76x.)
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
                                                    "__getstate__",
                                                    "__setstate__",
                                                    "__loader__",
                                                    "__spec__",
                                                    "__traceback__",
                                                    "__defaults__",
                                                    "__kwdefaults__",
                                                    "__annotations__",
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

// Names flagged wherever they appear (attribute, binding, definition, keyword or string), with
// why: each reaches raw memory or a file through any object that has it, where a rule on a
// dotted path (torch.UntypedStorage.from_file) misses an instance, an alias or a subclass.
//  * The array-interface protocols: an object that carries one describes memory by a raw
//    address, which numpy, torch and the DSLs wrap unchecked (no ctypes, no audit event).
//  * torch's members that adopt or read a raw address (a storage whose StorageImpl is forged in
//    a tensor's own bytes reads and writes any of the worker's memory), or that open a file or
//    shared memory in C++ (no audit event). The worker refuses them at run time too.
constexpr RawName kRawNames[] = {
    // CuTe DSL's pointer from an integer address: a @cute.jit function is host code compiled to
    // native code in the worker, and a tensor over such a pointer reads and writes any address
    // there with no audit event (red team, thirteenth session: the signal table of the
    // interpreter written, the answer computed on the main thread after the clock, 7.4x strict
    // on the CPU judge). A kernel's pointers come from its tensors (from_dlpack, .iterator).
    {"make_ptr",
     "a DSL pointer made from an integer address (the DSL's host code reads and writes any "
     "address through it: raw memory access is forbidden; a kernel's pointers come from its "
     "tensors, e.g. from_dlpack(t).iterator)"},
    // CuTe DSL's singleton and its configuration, reached through a jit function's own
    // attributes (_dsl_cls) where the private-name rule sees no DSL path (red team, thirteenth
    // session: the compile's arch rewritten in strict mode).
    {"_get_dsl", kDslInternals},
    {"_dsl_cls", kDslInternals},
    {"_dsl_object", kDslInternals},
    {"envar", kDslInternals},
    // A conversion hook CPython's C code calls while it holds a buffer's address (gh-91153:
    // bytearray's assignment; red team round 3, 2026-12-06, raw memory in pure Python). No
    // kernel needs a class that is an integer.
    {"__index__",
     "a conversion hook CPython calls while it holds a buffer's address (raw memory access is "
     "forbidden)"},
    // The same with array('d')'s __float__ (round 4: the array shrunk under a pending write).
    {"__float__",
     "a conversion hook CPython calls while it holds a buffer's address (raw memory access is "
     "forbidden)"},
    {"__complex__",
     "a conversion hook CPython calls while it holds a buffer's address (raw memory access is "
     "forbidden)"},
    {"__int__",
     "a conversion hook CPython calls while it holds a buffer's address (raw memory access is "
     "forbidden)"},
    // Rich comparisons: CPython 3.11 and 3.12 compare items they hold borrowed (list_richcompare,
    // deque.index, OrderedDict equality); a comparison that empties the containers and returns
    // NotImplemented frees them, and the reflected method then runs on freed memory (red team
    // round 6, 2026-12-06: a fake bytearray over the whole address space, passed strict in pure
    // Python). No kernel needs to define how its objects compare; behind this rule the worker
    // makes those comparisons hold what they compare (_core.hold_compared_items, 2026-12-07).
    {"__eq__", kBorrowedCompare},
    {"__ne__", kBorrowedCompare},
    {"__lt__", kBorrowedCompare},
    {"__le__", kBorrowedCompare},
    {"__gt__", kBorrowedCompare},
    {"__ge__", kBorrowedCompare},
    // numpy's protocol hooks: numpy calls them inside its comparisons and operations, while the
    // interpreter may hold the other operand borrowed (a property for __array_priority__ on an
    // ndarray subclass ran the kernel's code inside a comparison and freed the other operand:
    // ninth session's fourth red team, 2026-12-07). No kernel needs to define them.
    // Reflected operators: CPython calls them with the left operand, which a C routine may hold
    // borrowed and the left operand's own method may have freed (itertools.accumulate's running
    // total: ninth session's fifth red team, 2026-12-07, 17.5-18.8x strict). No kernel needs one.
    {"__radd__", kBorrowedCompare},
    {"__rsub__", kBorrowedCompare},
    {"__rmul__", kBorrowedCompare},
    {"__rmatmul__", kBorrowedCompare},
    {"__rtruediv__", kBorrowedCompare},
    {"__rfloordiv__", kBorrowedCompare},
    {"__rmod__", kBorrowedCompare},
    {"__rdivmod__", kBorrowedCompare},
    {"__rpow__", kBorrowedCompare},
    {"__rlshift__", kBorrowedCompare},
    {"__rrshift__", kBorrowedCompare},
    {"__rand__", kBorrowedCompare},
    {"__rxor__", kBorrowedCompare},
    {"__ror__", kBorrowedCompare},
    {"__array_priority__", kBorrowedCompare},
    {"__array_ufunc__", kBorrowedCompare},
    {"__array_function__", kBorrowedCompare},
    {"__array_wrap__", kBorrowedCompare},
    {"__array_finalize__", kBorrowedCompare},
    {"__array_prepare__", kBorrowedCompare},
    {"__array_interface__", kArrayInterface},
    {"__array_struct__", kArrayInterface},
    {"__cuda_array_interface__", kArrayInterface},
    {"_set_cdata", kRawAddress},
    {"_cdata", kRawAddress},
    {"_new_with_weak_ptr", kRawAddress},
    {"_free_weak_ref", kRawAddress},
    {"_weak_ref", kRawAddress},
    {"_expired", kRawAddress},
    {"_wrap_tensor_impl", kRawAddress},
    {"_tensor_impl_raw_handle", kRawAddress},
    {"_construct_storage_from_data_pointer", kRawAddress},
    {"_construct_CUDA_Tensor_From_Storage_And_Metadata", kRawAddress},
    {"from_file", kNativeFile},
    {"_new_with_file", kNativeFile},
    {"_set_from_file", kNativeFile},
    {"_new_shared_cuda", kNativeFile},
    {"_new_using_fd_cpu", kNativeFile},
    {"_new_shared_fd_cpu", kNativeFile},
    {"_new_using_filename_cpu", kNativeFile},
    {"_new_shared_filename_cpu", kNativeFile},
    {"_load_jit_module_from_file", kNativeFile},
    {"_load_mobile_module_from_file", kNativeFile},
    {"PyTorchFileReader", kNativeFile},
    // Sparse tensors: ATen's kernels on one do not bound-check its indices (red team round 7: an
    // index rewritten in place through indices() added to any address). Their constructors,
    // conversions, resizes, layouts and index accessors (but indices and values themselves,
    // common names in honest code: the worker refuses those at run time).
    {"sparse_coo_tensor", kSparse},
    {"_sparse_coo_tensor_unsafe", kSparse},
    {"_sparse_coo_tensor_with_dims", kSparse},
    {"_sparse_coo_tensor_with_dims_and_tensors", kSparse},
    {"sparse_compressed_tensor", kSparse},
    {"_sparse_compressed_tensor_unsafe", kSparse},
    {"sparse_csr_tensor", kSparse},
    {"_sparse_csr_tensor_unsafe", kSparse},
    {"sparse_csc_tensor", kSparse},
    {"_sparse_csc_tensor_unsafe", kSparse},
    {"sparse_bsr_tensor", kSparse},
    {"_sparse_bsr_tensor_unsafe", kSparse},
    {"sparse_bsc_tensor", kSparse},
    {"_sparse_bsc_tensor_unsafe", kSparse},
    {"to_sparse", kSparse},
    {"to_sparse_coo", kSparse},
    {"to_sparse_csr", kSparse},
    {"to_sparse_csc", kSparse},
    {"to_sparse_bsr", kSparse},
    {"to_sparse_bsc", kSparse},
    {"_to_sparse", kSparse},
    {"sparse_resize_", kSparse},
    {"sparse_resize_and_clear_", kSparse},
    {"resize_as_sparse_", kSparse},
    {"sparse_coo", kSparse},
    {"sparse_csr", kSparse},
    {"sparse_csc", kSparse},
    {"sparse_bsr", kSparse},
    {"sparse_bsc", kSparse},
    {"_indices", kSparse},
    {"_values", kSparse},
    {"crow_indices", kSparse},
    {"col_indices", kSparse},
    {"ccol_indices", kSparse},
    {"row_indices", kSparse},
    // Memory freed or shrunk under a live tensor (red team round 8): a storage's size or
    // reference count set by hand, an array resized whatever views it.
    {"resize_storage_bytes_", kFreedUnder},
    // A tensor grown by resize_ under a DLPack alias of it (red team rounds 20a and 21,
    // 2026-12-06: the freed bytes still viewed, raw memory).
    {"resize_", kFreedUnder},
    {"resize_as_", kFreedUnder},
    // A storage moved into shared memory in place, or freed by its address (round 23).
    {"_share_fd_cpu_", kFreedUnder},
    {"_share_filename_cpu_", kFreedUnder},
    {"_free_And_Remove_DeleterFn", kFreedUnder},
    // A tensor given another storage in place, and ATen kernels that trust index data (round 24).
    {"_swap_tensor_impl", kFreedUnder},
    {"set_data", kFreedUnder},  // the operator behind `.data =` (seventh session)
    {"swap_tensors", kFreedUnder},
    {"embedding_bag", kUncheckedIndex},  // its forward reads the indices at unchecked offsets
    {"segment_reduce", kUncheckedIndex},
    {"_segment_reduce_backward", kUncheckedIndex},
    {"_cummax_helper", kUncheckedIndex},
    {"_cummin_helper", kUncheckedIndex},
    {"_convert_indices_from_csr_to_coo", kSparse},
    {"_convert_indices_from_coo_to_csr", kSparse},
    {"_fused_adam_", kUncheckedIndex},
    {"_fused_adamw_", kUncheckedIndex},
    {"_fused_sgd_", kUncheckedIndex},
    {"_fused_adagrad_", kUncheckedIndex},
    {"_shared_decref", kFreedUnder},
    {"_shared_incref", kFreedUnder},
    {"refcheck", kFreedUnder},
    // Views whose bounds ATen does not check (red team round 9): any strides, any offset.
    {"_reshape_alias", kUncheckedView},
    {"_reshape_alias_copy", kUncheckedView},
    {"_alloc_from_pool", kUncheckedView},
    // ctypes' API and cffi's, by name: a module object reaches the kernel through any library
    // helper that imports by a name given as text (sympy.external.import_module,
    // jinja2.utils.import_string: red team, 2026-12-06, 5.2-5.6x strict, the interpreter's
    // Py_AddPendingCall called on the main thread after the clock), and ctypes' foreign calls
    // and memmove raise no audit event. Whatever route brought the module, these names do the
    // harm (generic ones, cast and pointer, are left to the module rules).
    {"pythonapi", kForeignApi},
    {"PyDLL", kForeignApi},
    {"pydll", kForeignApi},
    {"CDLL", kForeignApi},
    {"cdll", kForeignApi},
    {"LibraryLoader", kForeignApi},
    {"CFUNCTYPE", kForeignApi},
    {"PYFUNCTYPE", kForeignApi},
    {"WINFUNCTYPE", kForeignApi},
    {"memmove", kForeignApi},
    {"memset", kForeignApi},
    {"string_at", kForeignApi},
    {"wstring_at", kForeignApi},
    {"addressof", kForeignApi},
    {"from_address", kForeignApi},
    {"in_dll", kForeignApi},
    {"byref", kForeignApi},
    {"POINTER", kForeignApi},
    {"py_object", kForeignApi},
    {"c_void_p", kForeignApi},
    {"c_char_p", kForeignApi},
    {"c_wchar_p", kForeignApi},
    {"PyObj_FromPtr", kForeignApi},
    {"_FuncPtr", kForeignApi},
    {"_CFuncPtr", kForeignApi},
    {"_SimpleCData", kForeignApi},
    {"_Pointer", kForeignApi},
    {"_dlopen", kForeignApi},
    {"dlopen", kForeignApi},
    {"dlsym", kForeignApi},
    {"call_function", kForeignApi},
    {"call_cdeclfunction", kForeignApi},
    {"ctypeslib", kForeignApi},
    {"as_ctypes", kForeignApi},
    {"FFI", kForeignApi},
    // ctypes' base classes and the attributes that define a foreign function or a C type: a
    // subclass of _ctypes.CFuncPtr with _flags_ set is a callable at any address (red team,
    // 2026-12-06, its _ctypes reached through yaml's !!python/module tag).
    {"CFuncPtr", kForeignApi},
    {"_flags_", kForeignApi},
    {"_restype_", kForeignApi},
    {"_argtypes_", kForeignApi},
    {"restype", kForeignApi},
    {"argtypes", kForeignApi},
    {"errcheck", kForeignApi},
    {"_fields_", kForeignApi},
    {"_type_", kForeignApi},
    {"_length_", kForeignApi},
    // tvm_ffi's calls of a raw address, with no ctypes (both DSLs ship tvm_ffi).
    // ctypes' C types, and numpy's ctypes helper's cast (red team, 2026-12-06: the ctypes module
    // reached as an array's .ctypes helper's _ctypes, through a getattr deputy; cast(address,
    // POINTER(c_uint64)) wrote the interpreter's pending-call queue, no audit event).
    {"c_bool", kForeignApi},
    {"c_byte", kForeignApi},
    {"c_ubyte", kForeignApi},
    {"c_char", kForeignApi},
    {"c_wchar", kForeignApi},
    {"c_short", kForeignApi},
    {"c_ushort", kForeignApi},
    {"c_int", kForeignApi},
    {"c_uint", kForeignApi},
    {"c_long", kForeignApi},
    {"c_ulong", kForeignApi},
    {"c_longlong", kForeignApi},
    {"c_ulonglong", kForeignApi},
    {"c_size_t", kForeignApi},
    {"c_ssize_t", kForeignApi},
    {"c_float", kForeignApi},
    {"c_double", kForeignApi},
    {"c_longdouble", kForeignApi},
    {"c_int8", kForeignApi},
    {"c_int16", kForeignApi},
    {"c_int32", kForeignApi},
    {"c_int64", kForeignApi},
    {"c_uint8", kForeignApi},
    {"c_uint16", kForeignApi},
    {"c_uint32", kForeignApi},
    {"c_uint64", kForeignApi},
    {"c_buffer", kForeignApi},
    {"data_as", kForeignApi},
    {"shape_as", kForeignApi},
    {"strides_as", kForeignApi},
    {"__from_extern_c__", kForeignApi},
    {"__from_mlir_packed_safe_call__", kForeignApi},
    // ctypes' other names for its types, and _ctypes' reference counting (red team, 2026-12-06:
    // _ctypes.Py_DECREF freed a live bytearray, a forged header took its block).
    {"c_voidp", kForeignApi},
    {"Py_INCREF", kForeignApi},
    {"Py_DECREF", kForeignApi},
    // TIR's calls of a symbol or packed function named by a string (red team, 2026-12-06: TIR
    // compiled for the CPU called dlsym and memcpy through T.call_extern, 3.4-3.9x strict).
    {"call_extern", kExternCall},
    {"call_pure_extern", kExternCall},
    {"call_llvm_intrin", kExternCall},
    {"call_llvm_pure_intrin", kExternCall},
    {"call_packed", kExternCall},
    {"call_cpacked", kExternCall},
    {"call_packed_lowered", kExternCall},
    {"call_cpacked_lowered", kExternCall},
    {"tvm_call_packed", kExternCall},
    {"tvm_call_cpacked", kExternCall},
};

// Library helpers that read an attribute by a name given as text (jinja2's Environment.getattr
// and getitem, a torch module's attrgetter): an attribute, or an imported name, that contains
// one of these (case aside), or is getitem. A red team reached ctypes through jinja2's, 2026-12-06.
constexpr const char* kAttributeHelperParts[] = {"getattr", "setattr", "delattr", "attrgetter",
                                                 "methodcaller"};

// Library helpers that import a module, or resolve an object, by a name given as text: any
// attribute or imported name that contains "import" (case aside: import_module, import_string,
// _import, lazy_import) or is one of these. Each hands back a module object the audit cannot
// follow (a red team reached ctypes through sympy's and jinja2's, 2026-12-06).
constexpr const char* kImportHelperNames[] = {
    "locate", "resolve_name", "_resolve_name", "load_entry_point", "entry_points", "EntryPoint",
    "get_class", "load_class", "load_object", "module_from_spec", "spec_from_loader", "find_spec",
    "load_module", "exec_module", "find_loader", "reload",
    // optparse.Values.read_module: imports a module named as text and copies its namespace
    // (red team, 2026-12-06: ctypes reached so).
    "read_module"};

// Library compute that only the runtime audit can weigh (its share of GPU time).
constexpr const char* kLibraryComputeCalls[] = {"torch.matmul",
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

// Paths that make or enter a side stream: any path starting with one of these.
constexpr const char* kSideStreamPrefixes[] = {"torch.cuda.Stream", "torch.cuda.stream"};

// The private names of torch that are allowed: torch's checks, the private operators its public
// Python functions call (torch.unique, torch.lu, F.interpolate, F.pad, weight_norm), the vendor
// GEMMs the suite's eager code uses (torch._scaled_mm), and queries of a tensor's flags. The
// runtime refuses every other private ATen operator on torch's namespaces, its tensor type and
// torch.ops.aten (the worker, PrivateTorchAllowed), the static audit every other private name
// under torch, torch.ops.aten and torch.Tensor.
constexpr const char* kPrivateTorchAllowed[] = {
    "_assert",
    "_assert_async",
    "_check",
    "_check_with",
    "_check_index",
    "_check_value",
    "_check_type",
    "_check_is_size",
    "_check_not_implemented",
    "_check_tensor_all",
    "_check_tensor_all_with",
    "_unique",
    "_unique2",
    "_lu_with_info",
    "_upsample_bicubic2d_aa",
    "_upsample_bilinear2d_aa",
    "_upsample_nearest_exact1d",
    "_upsample_nearest_exact2d",
    "_upsample_nearest_exact3d",
    "_pad_circular",
    "_pad_enum",
    "_scaled_mm",
    "_scaled_mm_v2",
    "_int_mm",
    "_weight_norm",  // nn.utils.weight_norm and parametrizations.weight_norm
    "_addmm_activation",
    "_local_scalar_dense",
    "_version",
    "_is_zerotensor",
    "_is_all_true",
    "_is_any_true",
    "_conj",
    "_conj_physical",
    "_neg_view",
    "_lazy_clone",
    "_autocast_to_full_precision",
    "_autocast_to_reduced_precision",
    "_debug_has_internal_overlap",
    "_has_compatible_shallow_copy_type",
    "_has_same_storage_numel",
    "_nnpack_available",
    "_sleep",  // torch.cuda._sleep: a GPU spin of the given cycles
};

}  // namespace

bool IsPrivateOpRule(const Rule& rule) { return rule.reason == kPrivateOp; }
bool IsDslPrivateRule(const Rule& rule) { return rule.reason == kDslPrivate; }
absl::Span<const char* const> PrivateTorchAllowed() { return kPrivateTorchAllowed; }
constexpr const char* kToolchainRoots[] = {
    "torch",   "numpy",     "cutlass",           "cuda", "nvidia", "nvidia_cutlass_dsl", "tvm",
    "tvm_ffi", "ml_dtypes", "typing_extensions",
};
constexpr const char* kStdlibRoots[] = {
    "__future__",  "abc",       "bisect",    "cmath",      "collections", "contextlib", "copy",
    "dataclasses", "enum",      "functools", "heapq",      "itertools",   "math",       "operator",
    "os",          "posixpath", "random",    "statistics", "string",      "struct",     "sys",
    "textwrap",    "time",      "types",     "typing",     "warnings",    "weakref",
};

absl::Span<const char* const> KernelToolchainRoots() { return kToolchainRoots; }
absl::Span<const char* const> KernelStdlibRoots() { return kStdlibRoots; }

bool KernelMayImport(absl::string_view root) {
  for (const char* name : kToolchainRoots)
    if (root == name) return true;
  for (const char* name : kStdlibRoots)
    if (root == name) return true;
  return false;
}

std::string NotImportableReason(absl::string_view root) {
  std::string stdlib;
  for (const char* name : kStdlibRoots) absl::StrAppend(&stdlib, stdlib.empty() ? "" : ", ", name);
  return absl::StrCat(
      root,
      " is not among the modules a kernel may import: torch, numpy, the variant's DSL and its "
      "runtime, and the standard library's ",
      stdlib, " (its other modules are C routines and classes that reach raw memory for a kernel)");
}

namespace {

// Protocol methods (CPython's, numpy's and torch's hooks: __len__, __getitem__, __iter__,
// __hash__, __add__, __bool__, __set_name__, ...) are called from C, and C code may hold what it
// passes them borrowed: a hook that frees it hands the C code freed memory. Each red team round
// found another such routine (list and deque comparisons, cmp_to_key, groupby, accumulate's
// reflected __radd__; tenth session, 2026-12-07: numpy's array coercion keeps a list's item
// array borrowed across an item's __len__, which emptied the list: raw memory, 17-18.5x strict).
// Rather than name the hooks one routine at a time, kernel.py may define or bind only these:
// construction and calling, printing, context managers, a finaliser, and the CuTe DSL's protocol
// for a class passed to a jit function as its MLIR values. No shipped solution defines any.
constexpr const char* kProtocolMethodsAllowed[] = {
    "__init__",
    "__call__",
    "__post_init__",
    "__repr__",
    "__str__",
    "__enter__",
    "__exit__",
    "__del__",
    "__extract_mlir_values__",
    "__new_from_mlir_values__",
    "__get_mlir_types__",
    "__extract_mlir_attributes__",
};
// Module-level names, and the test of the module's name.
constexpr const char* kModuleDundersAllowed[] = {
    "__all__", "__version__", "__author__", "__doc__", "__name__", "__main__",
};

// Derivable library classes, by exact name. A library class brings protocol methods written in
// Python that read attributes of the instance, which the kernel's subclass may define as
// properties: statistics.NormalDist's inherited __rmul__ reads _mu, collections.abc.Set's
// comparisons call the subclass's __len__ and __iter__ (tenth session's red team, 2026-12-07);
// a CuTe DSL class (cute.nvgpu.cpasync.TmaInfo) iterates by yielding a property the subclass
// made, which numpy's array coercion ran holding a list's items borrowed (raw memory in strict
// mode: the second round that day, against prefixes "cutlass." and "tvm."); typing's aliases
// (typing.Sequence) derive from collections.abc's classes, and enum.Flag brings operators that
// read _value_. Builtin types (their methods are C) and the kernel's own classes are derivable
// too.
constexpr const char* kBaseClassesAllowed[] = {
    "torch.nn.Module",
    "torch.nn.modules.module.Module",
    "torch.autograd.Function",
    "torch.autograd.function.Function",
    "typing.NamedTuple",
    "typing.Generic",
    "abc.ABC",
    "enum.Enum",
    "enum.IntEnum",
};

}  // namespace

const char kSunderHook[] =
    "a library class's reserved _sunder_ name (enum's _name_ and _value_, which Enum's __hash__, "
    "__repr__ and __reduce_ex__ read, written in Python; ctypes' _fields_ and _type_): bound by "
    "kernel.py (a property on its Enum class, made after the class exists), it runs the "
    "kernel's code inside C code that calls those methods holding what it passes borrowed (raw "
    "memory access is forbidden)";

const char kProtocolHook[] =
    "a protocol method CPython, numpy or torch calls from C code that may hold what it passes "
    "borrowed (raw memory access is forbidden): kernel.py may define only __init__, __call__, "
    "__post_init__, __repr__, __str__, __enter__, __exit__, __del__ and the CuTe DSL's "
    "__extract_mlir_values__, __new_from_mlir_values__, __get_mlir_types__, "
    "__extract_mlir_attributes__";

absl::Span<const char* const> ProtocolMethodsAllowed() { return kProtocolMethodsAllowed; }
absl::Span<const char* const> ModuleDundersAllowed() { return kModuleDundersAllowed; }
absl::Span<const char* const> BaseClassesAllowed() { return kBaseClassesAllowed; }

absl::Span<const Rule> ModuleRules() { return kModuleRules; }
absl::Span<const Rule> AttributeRules() { return kAttributeRules; }
absl::Span<const Rule> BuiltinRules() { return kBuiltinRules; }
absl::Span<const char* const> InterpreterGlobals() { return kInterpreterGlobals; }
absl::Span<const char* const> AttributeBuiltins() { return kAttributeBuiltins; }
absl::Span<const char* const> IntrospectionAttributes() { return kIntrospectionAttributes; }
absl::Span<const RawName> RawNames() { return kRawNames; }
absl::Span<const char* const> ImportHelperNames() { return kImportHelperNames; }
absl::Span<const char* const> AttributeHelperParts() { return kAttributeHelperParts; }
absl::Span<const char* const> LibraryComputeCalls() { return kLibraryComputeCalls; }
absl::Span<const char* const> InertBuiltins() { return kInertBuiltins; }
absl::Span<const char* const> SideStreamPrefixes() { return kSideStreamPrefixes; }

}  // namespace mkb::audit_detail
