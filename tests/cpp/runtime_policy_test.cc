#include "libmkb/judge/runtime_policy.h"

#include <catch2/catch_test_macros.hpp>

#include "absl/strings/match.h"

namespace {

mkb::RuntimePolicyConfig Config() {
  mkb::RuntimePolicyConfig c;
  c.kernel_path = "/w/work/kernel.py";
  c.dsl = mkb::v1::CUTEDSL;
  c.stdlib_roots = {"/py/lib/python3.11"};
  c.code_roots = {"/venv/lib/python3.11/site-packages", "/usr"};
  c.dsl_roots = {"/dsl/cutedsl"};
  c.judge_roots = {"/src/metakernelbench/judge"};
  c.writable_roots = {"/w/work", "/tmp"};
  c.readable_paths = {"/dev/urandom"};
  return c;
}

mkb::AuditCaller Kernel() { return {"/w/work/kernel.py", "solve", "/w/work/kernel.py"}; }
mkb::AuditCaller Torch() {
  const std::string f = "/venv/lib/python3.11/site-packages/torch/fx/graph_module.py";
  return {f, "_exec", f};
}
mkb::AuditCaller Dsl() {
  const std::string f = "/dsl/cutedsl/cutlass/base_dsl/jit_executor.py";
  return {f, "run_compiled_program", f};
}
mkb::AuditCaller Stdlib(const std::string& module, const mkb::AuditCaller& above) {
  mkb::AuditCaller caller{"/py/lib/python3.11/" + module, "f", above.library_file};
  caller.direct_source_line = "    module = _sys._getframe(1).f_globals.get('__name__')";
  return caller;
}
// The innermost frame's line as a frame reader's own call of sys._getframe.
mkb::AuditCaller ReadsFrame(mkb::AuditCaller caller) {
  caller.direct_source_line = "        return sys._getframe(depth + 1).f_globals.get('__name__')";
  return caller;
}
mkb::AuditCaller Import() {
  return {"<frozen importlib._bootstrap_external>", "source_to_code", ""};
}

bool Allowed(const std::string& event, const mkb::AuditCaller& caller, const std::string& a0 = "",
             const std::string& a1 = "") {
  return mkb::DecideAuditEvent(Config(), event, caller, a0, a1).allow;
}

}  // namespace

TEST_CASE("processes, signals and the network are refused whoever asks") {
  for (const auto& caller : {Kernel(), Torch(), Dsl()}) {
    CHECK_FALSE(Allowed("subprocess.Popen", caller, "id"));
    CHECK_FALSE(Allowed("os.system", caller, "id"));
    CHECK_FALSE(Allowed("os.exec", caller, "/bin/sh"));
    CHECK_FALSE(Allowed("os.posix_spawn", caller));
    CHECK_FALSE(Allowed("os.fork", caller));
    CHECK_FALSE(Allowed("os.kill", caller));
    CHECK_FALSE(Allowed("socket.connect", caller));
    CHECK_FALSE(Allowed("sys.settrace", caller));
  }
  CHECK(mkb::DecideAuditEvent(Config(), "subprocess.Popen", Torch(), "id", "").code ==
        "runtime.subprocess");
}

TEST_CASE(
    "code made at run time runs only where the import system, a code generator of the "
    "standard library or the DSL's compiler makes it") {
  // A torch helper exec-ing generated code (torch.fx): refused, though it is library code.
  CHECK_FALSE(Allowed("exec", Torch(), "<eval_with_key>"));
  CHECK_FALSE(Allowed("compile", Stdlib("codeop.py", Kernel()), "src", "<input>"));
  CHECK_FALSE(Allowed("exec", Kernel(), "<string>"));
  // The DSL compiling what it generated; namedtuple / dataclasses.
  CHECK(Allowed("exec", Dsl(), "/w/work/kernel.py"));
  CHECK(Allowed("exec", Stdlib("collections/__init__.py", Kernel()), "<string>"));
  CHECK(Allowed("exec", Stdlib("dataclasses.py", Kernel()), "<string>"));
  // Imports: installed packages and kernel.py, never code from the workspace.
  CHECK(Allowed("exec", Import(), "/venv/lib/python3.11/site-packages/numpy/__init__.py"));
  CHECK(Allowed("compile", Import(), "source", "/dsl/cutedsl/cutlass/__init__.py"));
  CHECK(Allowed("exec", Import(), "/w/work/kernel.py"));
  CHECK_FALSE(Allowed("exec", Import(), "/w/work/helper_mod.py"));
  CHECK_FALSE(Allowed("exec", Import(), "/tmp/x.py"));
  // A DSL toolchain bound read-only under the private /tmp is code, not the workspace.
  mkb::RuntimePolicyConfig under_tmp = Config();
  under_tmp.dsl_roots = {"/tmp/mkb-dsl/cutedsl"};
  CHECK(mkb::DecideAuditEvent(under_tmp, "compile", Import(), "src",
                              "/tmp/mkb-dsl/cutedsl/cutlass/arith.py")
            .allow);
  CHECK_FALSE(
      mkb::DecideAuditEvent(under_tmp, "open", Kernel(), "/tmp/mkb-dsl/cutedsl/x", "w").allow);
  CHECK(mkb::DecideAuditEvent(under_tmp, "open", Kernel(), "/tmp/scratch", "w").allow);
  CHECK(Allowed("marshal.loads", Import()));
  CHECK_FALSE(Allowed("marshal.loads", Kernel()));
  CHECK_FALSE(Allowed("pickle.find_class", Torch(), "posix", "system"));
}

TEST_CASE("an installed module may build code while it is imported; nothing else rides on that") {
  const std::string mp = "/venv/lib/python3.11/site-packages/mpmath/ctx_mp_python.py";
  const std::string typing = "/py/lib/python3.11/typing.py";
  // mpmath's module body calls a helper of its own that execs the operators it builds.
  mkb::AuditCaller building{mp, "binary_op", mp, {mp, mp}};
  CHECK(Allowed("exec", building, "<string>"));
  CHECK(Allowed("exec", {typing, "f", mp, {typing, mp, mp}}, "<string>"));  // through the stdlib
  // The same helper called after the import (no module body under it): refused.
  CHECK_FALSE(Allowed("exec", {mp, "binary_op", mp}, "<string>"));
  // kernel.py's own import, a kernel frame anywhere in the chain, code made at run time in it,
  // a module of the workspace: refused.
  CHECK_FALSE(Allowed("exec", {mp, "binary_op", mp, {mp, "/w/work/kernel.py"}}, "<string>"));
  CHECK_FALSE(Allowed("exec",
                      {"/w/work/kernel.py", "<module>", "/w/work/kernel.py", {"/w/work/kernel.py"}},
                      "<string>"));
  CHECK_FALSE(Allowed("exec", {mp, "binary_op", mp, {mp, "<string>", mp}}, "<string>"));
  CHECK_FALSE(Allowed("compile", {"/w/work/lib.py", "f", "/w/work/lib.py", {"/w/work/lib.py"}},
                      "src", "<string>"));
  CHECK_FALSE(Allowed("exec", {"/tmp/m.py", "f", "/tmp/m.py", {"/tmp/m.py"}}, "<string>"));
}

TEST_CASE("frames and the collector: only for named readers and the DSL's own code") {
  CHECK_FALSE(Allowed("sys._getframe", Kernel()));
  CHECK_FALSE(Allowed("object.__getattr__", Kernel(), "", "tb_frame"));
  CHECK_FALSE(Allowed("object.__getattr__", Torch(), "", "gi_frame"));
  CHECK(Allowed("object.__getattr__", Torch(), "", "__code__"));      // a code object: no frame
  CHECK(Allowed("object.__getattr__", Torch(), "", "__defaults__"));  // values, no frame
  CHECK(Allowed("object.__getattr__", Kernel(), "", "__kwdefaults__"));
  CHECK_FALSE(Allowed("object.__getattr__", Kernel(), "", "f_back"));
  CHECK_FALSE(Allowed("gc.get_objects", Kernel()));
  CHECK_FALSE(Allowed("sys._getframe", Torch()));
  CHECK_FALSE(Allowed("sys._getframe", Stdlib("inspect.py", Kernel())));  // hands frames back
  CHECK(Allowed("sys._getframe", Stdlib("inspect.py", Dsl())));           // the DSL asked
  CHECK(Allowed("sys._getframe", Stdlib("collections/__init__.py", Kernel())));
  CHECK(Allowed("sys._getframe", Stdlib("warnings.py", Kernel())));
  const std::string te = "/venv/lib/python3.11/site-packages/typing_extensions.py";
  CHECK(Allowed("sys._getframe", ReadsFrame({te, "_caller", te})));  // typing's backport
  // A reader is trusted where its own line calls sys._getframe, not where it iterates a lazy map
  // of the caller's that calls it (namedtuple('T', map(box.append, map(sys._getframe, [1])))
  // handed the frame out: the red team's round 4).
  mkb::AuditCaller iterating = Stdlib("collections/__init__.py", Kernel());
  iterating.direct_source_line = "        field_names = list(map(str, field_names))";
  CHECK_FALSE(Allowed("sys._getframe", iterating));
  CHECK(Allowed("object.__getattr__", {"/src/metakernelbench/judge/worker.py", "format_error",
                                       "/src/metakernelbench/judge/worker.py"}));
}

TEST_CASE("native code is the DSL runtime's only") {
  CHECK(Allowed("ctypes.call_function", Dsl()));
  CHECK_FALSE(Allowed("ctypes.dlopen", Kernel(), ""));
  CHECK_FALSE(Allowed("ctypes.dlopen", Torch(), "/w/work/evil.so"));
  CHECK(mkb::DecideAuditEvent(Config(), "ctypes.dlopen", Kernel(), "", "").code ==
        "runtime.native_code");
}

TEST_CASE("the interpreter's C API through ctypes, once kernel.py is loaded: never") {
  // The DSL's native layer inside an entry point, where its ctypes is trusted: a C callable of
  // the kernel's it called there looked up Py_AddPendingCall (red team, 2026-12-06).
  mkb::AuditCaller native = Dsl();
  native.kernel_started = true;
  native.in_dsl_entry = true;
  native.library_native = true;
  CHECK(Allowed("ctypes.dlsym", native, "<CDLL 'libcuda.so.1'>", "cuLaunchKernel"));
  for (const char* name : {"Py_AddPendingCall", "PyThreadState_SetAsyncExc", "_PyEval_X"}) {
    CHECK_FALSE(Allowed("ctypes.dlsym", native, "<PyDLL 'None'>", name));
    CHECK_FALSE(Allowed("ctypes.dlsym/handle", native, "fd:1", name));
    CHECK(mkb::DecideAuditEvent(Config(), "ctypes.dlsym", native, "", name).code ==
          "runtime.native_code");
  }
  // As the DSL's modules load, before kernel.py: its own look-ups (cutlass_function.py).
  CHECK(Allowed("ctypes.dlsym", Dsl(), "<PyDLL 'None'>", "PyCapsule_GetPointer"));
}

TEST_CASE("the ctypes guard's events: the DSL's native layer, and installed modules as they load") {
  // Memory through a stored address and foreign calls (bindings/ctypes_guard.cc), once kernel.py
  // is loaded: the DSL's native layer inside an entry point, as its foreign calls need.
  mkb::AuditCaller native = Dsl();
  native.kernel_started = true;
  native.in_dsl_entry = true;
  native.library_native = true;
  mkb::AuditCaller kernel = Kernel();
  kernel.kernel_started = true;
  mkb::AuditCaller torch = Torch();
  torch.kernel_started = true;
  for (const char* event : {"ctypes.memory/pointer item", "ctypes.foreign_call"}) {
    CHECK(Allowed(event, native));
    CHECK_FALSE(Allowed(event, kernel));
    CHECK_FALSE(Allowed(event, torch));  // a library called at run time: a deputy
    CHECK(mkb::DecideAuditEvent(Config(), event, kernel, "", "").code == "runtime.native_code");
    // The DSL's module outside its entry points: what kernel.py calls, a deputy too.
    mkb::AuditCaller outside = native;
    outside.in_dsl_entry = false;
    CHECK_FALSE(Allowed(event, outside));
    // An installed module's import, every frame down to its body installed (scipy's
    // _ccallback casts as it loads): the kernel only chose the import.
    mkb::AuditCaller loading = torch;
    loading.import_chain = {torch.library_file, "/venv/lib/python3.11/site-packages/torch/fx/x.py"};
    CHECK(Allowed(event, loading));
    loading.import_chain.push_back("/w/work/kernel.py");  // a body of the kernel's: no
    CHECK_FALSE(Allowed(event, loading));
  }
  // The reason names the operation.
  CHECK(absl::StrContains(
      mkb::DecideAuditEvent(Config(), "ctypes.memory/pointer item", kernel, "", "").reason,
      "pointer item through a ctypes object"));
  // Older ctypes events keep their rule: no import-time trust for a library outside the DSL.
  mkb::AuditCaller loading = torch;
  loading.import_chain = {torch.library_file};
  CHECK_FALSE(Allowed("ctypes.dlopen", loading, "/lib/x.so"));
}

TEST_CASE("tvm.compile: no call of a native symbol by name, and the GPU's target only") {
  // What the shipped TIRx solutions compile: CUDA, the DSL's own intrinsics.
  CHECK(mkb::TirCompileRefusal({"tirx.cuda.__shfl_xor_sync", "tirx.cuda_warp_reduce"}, {"cuda"})
            .empty());
  // T.call_extern and its kin, in either namespace (red team, 2026-12-06).
  for (const char* op : {"tirx.call_extern", "tir.call_pure_extern", "tirx.call_llvm_intrin",
                         "tir.tvm_call_packed", "tvm_call_cpacked_lowered", "tirx.tvm_struct_get",
                         "tir.tvm_struct_set", "tirx.tvm_stack_alloca", "reinterpret_to_handle",
                         "cast_to_handle", "unmatched_handle_param", "let_handle"}) {
    CHECK(absl::StrContains(mkb::TirCompileRefusal({op}, {"cuda"}), "native symbol"));
  }
  // A reinterpret that is no pointer (a bit cast of a number) is the kernel's own business.
  CHECK(mkb::TirCompileRefusal({"tirx.reinterpret"}, {"cuda"}).empty());
  // Host code that reads or writes a buffer, or makes a number of a pointer (red team,
  // fourteenth session: a host buffer indexed by an offset from its own address, strict).
  for (const char* op :
       {"host_buffer_access", "handle_to_number", "handle_buffer", "disabled_pass"}) {
    CHECK(absl::StrContains(mkb::TirCompileRefusal({"tirx.reinterpret", op}, {"cuda"}),
                            "TIR host code"));
  }
  // A CPU target (its host code indexes buffers unchecked), or none at all.
  CHECK(absl::StrContains(mkb::TirCompileRefusal({}, {"llvm"}), "'llvm' target"));
  CHECK(absl::StrContains(mkb::TirCompileRefusal({}, {"cuda", "c"}), "'c' target"));
  CHECK_FALSE(mkb::TirCompileRefusal({}, {}).empty());
}

TEST_CASE("CuTe DSL host code: no native symbol called by name") {
  // cute.ffi declares libc's memcpy / mmap without a body and calls it (red team, fourteenth
  // session): the facts reader names such a declaration.
  CHECK(absl::StrContains(
      mkb::CuteHostRefusal({"func.func", "func.external_declaration", "func.call"}),
      "native symbol"));
  CHECK(mkb::CuteHostRefusal({"func.func", "func.call", "func.return"}).empty());
}

TEST_CASE("A library loaded once kernel.py may run: installed and read-only") {
  mkb::RuntimePolicyConfig config;
  config.dsl_roots = {"/work/.dsl/cutedsl"};
  config.writable_roots = {"/work/ws", "/tmp"};
  CHECK(mkb::InstalledLibrary(config, "/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  CHECK(mkb::InstalledLibrary(config, "/work/.dsl/cutedsl/nvidia_cutlass_dsl/lib/libx.so"));
  // What the kernel could have written (red team, fourteenth session: a memfd through
  // TVM-FFI's loader, passed permissive), and relative names.
  CHECK_FALSE(mkb::InstalledLibrary(config, "/work/ws/poke.so"));
  CHECK_FALSE(mkb::InstalledLibrary(config, "/tmp/poke.so"));
  CHECK_FALSE(mkb::InstalledLibrary(config, "/memfd:poke (deleted)"));
  CHECK_FALSE(mkb::InstalledLibrary(config, "poke.so"));
}

TEST_CASE("CuTe DSL host code: layouts, views and launches, no memory access") {
  // The host ops of the 14 shipped solutions and of a TMA descriptor's builder (a Hopper GEMM's).
  const std::vector<std::string> honest = {
      "arith.constant",
      "arith.cmpi",
      "cuda.cast",
      "cuda.launch_cfg.create",
      "cuda.launch_cfg.cooperative",
      "cuda.launch_cfg.programmatic_stream_serialization_allowed",
      "cuda.launch_ex",
      "cuda.return_if_error",
      "cute.add_offset",
      "cute.get_iter",
      "cute.make_view",
      "cute.recast_iter",
      "cute.kernel_smem_size",
      "cute.print",
      "func.func",
      "func.return",
      "scf.if",
      "scf.yield",
      "cute.composition",
      "cute.deref_arith_tuple_iter",
      "cute.make_identity_layout",
      "cute.static",
      "cute_nvgpu.atom.make_non_exec_tiled_tma_load",
      "builtin.unrealized_conversion_cast",
      "cute.ptrtoint"};
  CHECK(mkb::CuteHostRefusal(honest).empty());
  // What a store, copy, fill, print of a tensor, atomic or pointer from an integer emits in a
  // @cute.jit function (red teams, thirteenth session), and any dialect written by hand.
  for (const char* op :
       {"cute.memref.store", "cute.memref.load_vec", "cute.memref.alloca", "cute.copy",
        "cute.print_view", "cute.inttoptr", "nvvm.atomicrmw", "llvm.store", "llvm.call",
        "vector.load", "memref.store", "cute.gemm", "cute.print_through_pointer"}) {
    INFO(op);
    CHECK_FALSE(mkb::CuteHostRefusal({"arith.constant", op}).empty());
  }
}

TEST_CASE("imports: never the judge or the other DSL; a forbidden module only from a library") {
  CHECK_FALSE(Allowed("import", Kernel(), "metakernelbench.judge.worker"));
  CHECK_FALSE(Allowed("import", Torch(), "metakernelbench"));
  CHECK_FALSE(Allowed("import", Dsl(), "tvm"));  // the other DSL for a CuTe DSL variant
  CHECK(Allowed("import", Dsl(), "tvm_ffi"));
  CHECK_FALSE(Allowed("import", Kernel(), "triton"));
  CHECK(Allowed("import", {"/dsl/cutedsl/cutlass/x.py", "f", "/dsl/cutedsl/cutlass/x.py"},
                "cuda.bindings.nvrtc"));
  CHECK(Allowed("import", Kernel(), "numpy"));
}

TEST_CASE("extension modules load from installed code only, whoever imports them") {
  // The import statement's event has no file; the extension loader's names the one it loads.
  CHECK(Allowed("import", Kernel(), "_decimal", "/py/lib/python3.11/lib-dynload/_decimal.so"));
  CHECK(Allowed("import", Torch(), "torch._C", "/venv/lib/python3.11/site-packages/torch/_C.so"));
  CHECK(Allowed("import", Dsl(), "cutlass._mlir._mlir_libs._cutlass_ir",
                "/dsl/cutedsl/cutlass/_mlir/_mlir_libs/_cutlass_ir.so"));
  // The DSL's import retry with kernel.py's folder first loaded one the kernel wrote there.
  CHECK_FALSE(Allowed("import", Dsl(), "mkbx", "/w/work/mkbx.so"));
  CHECK_FALSE(Allowed("import", Kernel(), "mkbx", "/tmp/mkbx.so"));
  CHECK_FALSE(Allowed("import", Kernel(), "mkbx", "/proc/self/fd/5"));
  CHECK_FALSE(Allowed("import", Kernel(), "mkbx", "mkbx.so"));
  CHECK_FALSE(Allowed("import", Kernel(), "mkbx",
                      "/venv/lib/python3.11/site-packages/../../../../w/work/mkbx.so"));
  CHECK(mkb::DecideAuditEvent(Config(), "import", Dsl(), "mkbx", "/w/work/mkbx.so").code ==
        "runtime.native_code");
}

TEST_CASE("the import system reads code from installed trees and kernel.py only") {
  mkb::AuditCaller loader = Import();
  loader.direct_function = "get_data";
  CHECK(Allowed("open", loader, "/venv/lib/python3.11/site-packages/torch/__init__.py", "r"));
  CHECK(Allowed("open", loader, "/w/work/kernel.py", "r"));
  CHECK(Allowed("open", loader, "/w/work/__pycache__/kernel.cpython-311.pyc", "r"));
  // A module the kernel wrote: bytecode (whose code object names any file it likes) or source.
  CHECK_FALSE(Allowed("open", loader, "/w/work/mkbx.pyc", "r"));
  CHECK_FALSE(Allowed("open", loader, "/w/work/__pycache__/mkbx.cpython-311.pyc", "r"));
  CHECK_FALSE(Allowed("open", loader, "/w/work/__pycache__/kernel.cpython-311.pyc/x.pyc", "r"));
  CHECK_FALSE(Allowed("open", loader, "/tmp/m.py", "r"));
  CHECK(mkb::DecideAuditEvent(Config(), "open", loader, "/w/work/mkbx.pyc", "r").code ==
        "runtime.dynamic_code");
  // The same file read by the kernel's own code is a read in the workspace.
  CHECK(Allowed("open", Kernel(), "/w/work/mkbx.pyc", "r"));
  // zipimport reads an archive the same way.
  const mkb::AuditCaller zip = {"<frozen zipimport>", "_get_module_code", ""};
  CHECK_FALSE(Allowed("open", zip, "/w/work/x.zip", "rb"));
  CHECK(Allowed("open", zip, "/venv/lib/python3.11/site-packages/egg.zip", "rb"));
}

TEST_CASE("a path with .. components is under no root, whatever it starts with") {
  const std::string evil = "/dsl/cutedsl/cutlass/../../../w/work/x.zip/../../../usr/zz/evil.py";
  CHECK_FALSE(mkb::PathUnder(evil, {"/dsl/cutedsl"}));
  CHECK_FALSE(mkb::PathUnder(evil, {"/usr"}));
  CHECK_FALSE(mkb::PathUnder("/usr/lib/../../w/work/x.py", {"/usr"}));
  CHECK(mkb::PathUnder("/usr/./lib/x.py", {"/usr"}));  // cannot climb out
  CHECK(mkb::PathUnder("/usr/lib/x.py", {"/usr"}));
  CHECK_FALSE(mkb::InstalledCode(Config(), evil));
  // exec of a code object so named, from the import system: not installed code.
  CHECK_FALSE(Allowed("exec", Import(), evil));
  // a frame so named lends no trust to ctypes.
  const mkb::AuditCaller named = {evil, "f", evil};
  CHECK_FALSE(Allowed("ctypes.dlsym", named, "Py_AddPendingCall"));
}

TEST_CASE("files: reads in the toolchain and the workspace, writes in the workspace only") {
  CHECK(Allowed("open", Kernel(), "/w/work/kernel.py", "r"));
  CHECK(Allowed("open", Kernel(), "/venv/lib/python3.11/site-packages/torch/__init__.py", "rb"));
  CHECK(Allowed("open", Torch(), "/w/work/cache/x", "w"));
  CHECK_FALSE(Allowed("open", Torch(), "/venv/lib/python3.11/site-packages/x", "w"));
  CHECK_FALSE(Allowed("open", Kernel(), "/work/main/problems/mlp_norm/28/reference.py", "r"));
  CHECK_FALSE(Allowed("open", Kernel(), "/proc/self/mem", "rb"));
  CHECK_FALSE(Allowed("open", Dsl(), "/proc/1/mem", "rb"));
  CHECK_FALSE(Allowed("open", Kernel(), "/w/work/../../etc/shadow", "r"));
  CHECK(Allowed("open", Kernel(), "/dev/urandom", "rb"));
  CHECK(Allowed("open", Kernel(), "fd:7", "w"));
  CHECK(Allowed("open", Kernel(), "/w/work/x", "flags:0"));
  CHECK_FALSE(Allowed("open", Kernel(), "/usr/lib/x", "flags:65"));  // O_WRONLY|O_CREAT
  CHECK_FALSE(Allowed("os.remove", Kernel(), "/usr/lib/x"));
  CHECK(Allowed("os.remove", Kernel(), "/w/work/x"));
  CHECK_FALSE(Allowed("os.listdir", Kernel(), "/work/main"));
}

TEST_CASE("PathUnder matches whole components") {
  CHECK(mkb::PathUnder("/a/b/c", {"/a/b"}));
  CHECK(mkb::PathUnder("/a/b", {"/a/b"}));
  CHECK_FALSE(mkb::PathUnder("/a/bc", {"/a/b"}));
  CHECK(mkb::PathUnder("/a/b/c", {"/"}));
}

TEST_CASE("the judge's own files are trusted only when the judge asks of its own accord") {
  const std::string worker = "/src/metakernelbench/judge/worker.py";
  const mkb::AuditCaller judge{worker, "_format", worker};
  CHECK(Allowed("sys._getframe", judge));
  CHECK(Allowed("ctypes.dlopen", judge, "libc.so.6"));
  // kernel.py called a judge function that calls back (a C callable in between adds no frame):
  // the event's nearest frame is the judge's, but the kernel asked.
  mkb::AuditCaller deputy = judge;
  deputy.kernel_started = true;
  CHECK_FALSE(Allowed("sys._getframe", deputy));
  CHECK_FALSE(Allowed("ctypes.dlopen", deputy, "libc.so.6"));
  CHECK_FALSE(Allowed("exec", deputy, "<string>"));
  CHECK_FALSE(Allowed("os.putenv", deputy, "X"));
  // Once kernel.py's import has begun, the stack proves nothing: a finaliser the kernel left (a
  // functools.partial over C callables, fired when the worker drops an output) runs in the
  // worker's frames with no kernel frame (the red team's round 3: sys._getframe so allowed
  // handed out the worker's frame). The judge is trusted for nothing then.
  mkb::AuditCaller finaliser = judge;
  finaliser.kernel_started = true;
  CHECK_FALSE(Allowed("sys._getframe", finaliser));
  CHECK_FALSE(Allowed("ctypes.dlopen", finaliser, ""));
  CHECK_FALSE(Allowed("gc.get_objects", finaliser));
  // The DSL's code stays trusted with kernel.py on the stack below its entry point: the kernel
  // calls its compiler.
  mkb::AuditCaller dsl = Dsl();
  dsl.kernel_started = true;
  dsl.in_dsl_entry = true;
  CHECK(Allowed("sys._getframe", dsl));
  // The judge's code is imported by the worker before kernel.py; once kernel.py's import has
  // begun, a module of the judge's files is refused under any name.
  mkb::AuditCaller import = Import();
  const std::string values = "/src/metakernelbench/judge/values.py";
  CHECK(Allowed("exec", import, values));
  import.kernel_started = true;
  CHECK_FALSE(Allowed("exec", import, values));
  CHECK_FALSE(Allowed("compile", import, "source", values));
  CHECK(mkb::DecideAuditEvent(Config(), "exec", import, values, "").code ==
        "runtime.forbidden_import");
  CHECK(Allowed("exec", import, "/venv/lib/python3.11/site-packages/numpy/__init__.py"));
  CHECK(Allowed("exec", import, "/w/work/kernel.py"));
}

TEST_CASE("standard-library frame readers are trusted only where they hand no frame back") {
  const std::string logging = "/py/lib/python3.11/logging/__init__.py";
  // logging.currentframe() (a lambda over sys._getframe) returns the frame: called by the kernel
  // it is a frame handed over (the red team walked from it to the worker's clock).
  mkb::AuditCaller currentframe{logging, "<lambda>", "/w/work/kernel.py"};
  currentframe.direct_source_line = "    currentframe = lambda: sys._getframe(1)";
  currentframe.parent_file = "/w/work/kernel.py";
  currentframe.parent_function = "solve";
  CHECK_FALSE(Allowed("sys._getframe", currentframe));
  // The same lambda called by findCaller (a log record's location) keeps it.
  mkb::AuditCaller find_caller = currentframe;
  find_caller.parent_file = logging;
  find_caller.parent_function = "findCaller";
  CHECK(Allowed("sys._getframe", find_caller));
  // functools reads no frame of its own; wraps(obj, assigned=(...)) reads what it is told to.
  CHECK_FALSE(Allowed("object.__getattr__", Stdlib("functools.py", Kernel()), "", "tb_frame"));
  CHECK_FALSE(Allowed("sys._getframe", Stdlib("functools.py", Kernel())));
  // A restricted attribute is never read for the caller by a named reader either.
  CHECK_FALSE(Allowed("object.__getattr__", Stdlib("typing.py", Kernel()), "", "gi_frame"));
  CHECK(Allowed("sys._getframe", Stdlib("typing.py", Kernel())));
  CHECK(Allowed("sys._getframemodulename", Stdlib("collections/__init__.py", Kernel())));
}

TEST_CASE("the collector is the judge's own, never the DSL's") {
  mkb::AuditCaller dsl = Dsl();
  dsl.kernel_started = true;  // kernel.py called a DSL function that calls gc.get_objects back
  CHECK_FALSE(Allowed("gc.get_objects", dsl));
  CHECK_FALSE(Allowed("gc.get_referrers", Dsl()));
  CHECK_FALSE(Allowed("gc.get_objects", Stdlib("functools.py", Kernel())));
  const std::string worker = "/src/metakernelbench/judge/worker.py";
  CHECK(Allowed("gc.get_objects", mkb::AuditCaller{worker, "f", worker}));
}

TEST_CASE(
    "the DSL's code is trusted for itself only: before kernel.py, at import, in its entries") {
  const std::string timer = "/dsl/cutedsl/cutlass/base_dsl/utils/timer.py";
  const std::string ctypes = "/py/lib/python3.11/ctypes/__init__.py";
  // Before kernel.py's import began the DSL runs for the judge (the worker imports it).
  mkb::AuditCaller judge_time = Dsl();
  CHECK(Allowed("ctypes.dlopen", judge_time, "libcuda.so.1"));
  // kernel.py calls a DSL helper that calls back what it is handed (CuTe DSL's
  // timer(enable=False)(ctypes.CDLL)(None)): the innermost frame outside the standard library is
  // the DSL's, but no entry point of the DSL's is between it and kernel.py.
  mkb::AuditCaller deputy{ctypes, "__init__", timer};
  deputy.kernel_started = true;
  CHECK_FALSE(Allowed("ctypes.dlopen", deputy, ""));
  CHECK_FALSE(Allowed("ctypes.call_function", deputy, "0x7f00"));
  CHECK_FALSE(Allowed("sys._getframe", deputy));
  CHECK_FALSE(Allowed("code.__new__", deputy, "/dsl/cutedsl/cutlass/base_dsl/utils/timer.py"));
  CHECK_FALSE(Allowed("function.__new__", deputy));
  CHECK_FALSE(Allowed("pickle.find_class", deputy, "os", "system"));
  CHECK(mkb::DecideAuditEvent(Config(), "ctypes.dlopen", deputy, "", "").code ==
        "runtime.native_code");
  // The same DSL code inside an entry point of the DSL's (compile, a compiled function's call)
  // with nothing of the kernel's in between: trusted.
  mkb::AuditCaller inside = deputy;
  inside.in_dsl_entry = true;
  inside.library_native = true;  // the DSL's native layer (its executor) asked
  CHECK(Allowed("ctypes.dlopen", inside, ""));
  // Inside the entry, DSL code that uses no ctypes of its own: the compiler's tracer calling the
  // function it was given to compile, a functools.partial over ctypes.memmove.
  mkb::AuditCaller tracer = inside;
  tracer.library_native = false;
  CHECK_FALSE(Allowed("ctypes.call_function", tracer, "0x7f00"));
  CHECK(Allowed("sys._getframe", tracer));
  CHECK(Allowed("sys._getframe", inside));
  CHECK(Allowed("exec", inside, "<string>"));
  // The DSL's front ends (a decorator, a decorated function's call) define and trace kernels
  // for kernel.py: frames and generated code, never native code (a front end that calls what it
  // is handed, cute.jit(functools.partial(ctypes.CDLL, None)), lends no ctypes).
  mkb::AuditCaller front_end = deputy;
  front_end.in_dsl_front_end = true;
  CHECK(Allowed("sys._getframe", front_end));
  CHECK(Allowed("exec", front_end, "<string>"));
  CHECK_FALSE(Allowed("ctypes.dlopen", front_end, ""));
  CHECK_FALSE(Allowed("mmap.__new__", front_end));
  // A module of the DSL's imported after kernel.py's import began (every frame down to the
  // module body installed): trusted, as any installed module's import-time code.
  const std::string mod = "/dsl/cutedsl/cutlass/cute/nvgpu/x.py";
  mkb::AuditCaller importing{ctypes, "__init__", mod, {ctypes, mod}};
  importing.kernel_started = true;
  CHECK(Allowed("ctypes.dlopen", importing, "libcuda.so.1"));
  // The collector stays the judge's, even inside an entry point.
  CHECK_FALSE(Allowed("gc.get_objects", inside));
  // Another library's code inside the DSL's entry is no DSL code.
  mkb::AuditCaller torch = Torch();
  torch.kernel_started = true;
  torch.in_dsl_entry = true;
  CHECK_FALSE(Allowed("ctypes.dlopen", torch, ""));
}

TEST_CASE("installed code is what the kernel cannot have written") {
  const mkb::RuntimePolicyConfig c = Config();
  CHECK(mkb::InstalledCode(c, "/py/lib/python3.11/inspect.py"));
  CHECK(mkb::InstalledCode(c, "/dsl/cutedsl/cutlass/cute/__init__.py"));
  CHECK(mkb::InstalledCode(c, "/src/metakernelbench/judge/dsl_entry.py"));
  CHECK(mkb::InstalledCode(c, "<frozen importlib._bootstrap>"));
  CHECK_FALSE(mkb::InstalledCode(c, "/w/work/kernel.py"));
  CHECK_FALSE(mkb::InstalledCode(c, "/w/work/helper.py"));
  CHECK_FALSE(mkb::InstalledCode(c, "/tmp/x.py"));
  CHECK_FALSE(mkb::InstalledCode(c, "<string>"));
  CHECK_FALSE(mkb::InstalledCode(c, ""));
  CHECK_FALSE(mkb::InstalledCode(c, "/elsewhere/x.py"));
}

TEST_CASE("the DSLs' front ends are named functions of the variant's DSL") {
  mkb::RuntimePolicyConfig c = Config();
  const std::string cutlass = "/dsl/cutedsl/nvidia_cutlass_dsl/dsl_packages/cutlass/";
  CHECK(mkb::DslFrontEnd(c, cutlass + "cutlass_dsl/cutlass.py", "jit"));
  CHECK(mkb::DslFrontEnd(c, cutlass + "cutlass_dsl/cutlass.py", "kernel"));
  CHECK(mkb::DslFrontEnd(c, cutlass + "base_dsl/dsl.py", "jit_wrapper"));
  CHECK_FALSE(mkb::DslFrontEnd(c, cutlass + "base_dsl/utils/timer.py", "func_wrapper"));
  CHECK_FALSE(mkb::DslFrontEnd(c, cutlass + "base_dsl/dsl.py", "_func"));
  // The same names outside the DSL's tree, or of the other DSL: no front end.
  CHECK_FALSE(mkb::DslFrontEnd(c, "/w/work/cutlass/cutlass_dsl/cutlass.py", "jit"));
  CHECK_FALSE(mkb::DslFrontEnd(c, "/dsl/cutedsl/tvm/tirx/script/parser/entry.py", "prim_func"));
  c.dsl = mkb::v1::TIRX;
  c.dsl_roots = {"/dsl/tirx"};
  CHECK(mkb::DslFrontEnd(c, "/dsl/tirx/tvm/tirx/script/parser/entry.py", "prim_func"));
  CHECK(mkb::DslFrontEnd(c, "/dsl/tirx/tvm/script/parser/ir/entry.py", "ir_module"));
  CHECK_FALSE(mkb::DslFrontEnd(c, "/dsl/tirx/tvm/runtime/module.py", "__call__"));
}

TEST_CASE("a function's code is replaced only by the DSL, and never with installed code") {
  // The kernel grafting the DSL entry wrapper's code (or code compiled under a DSL file's name)
  // onto a function of its own.
  CHECK_FALSE(Allowed("object.__setattr__", Kernel(), "/w/work/kernel.py", "__code__"));
  CHECK_FALSE(Allowed("object.__setattr__", Torch(), "/w/work/kernel.py", "__code__"));
  mkb::AuditCaller front_end = Dsl();
  front_end.kernel_started = true;
  front_end.in_dsl_front_end = true;  // CuTe DSL's jit_wrapper swapping in the preprocessed code
  CHECK(Allowed("object.__setattr__", front_end, "/w/work/kernel.py", "__code__"));
  CHECK(Allowed("object.__setattr__", front_end, "<preprocessed>", "__code__"));
  // One of the DSL's own @jit functions re-preprocessed: code of its own file (no file given).
  CHECK(Allowed("object.__setattr__", front_end, "", "__code__"));
  CHECK_FALSE(Allowed("object.__setattr__", front_end, "/src/metakernelbench/judge/dsl_entry.py",
                      "__code__"));
  CHECK_FALSE(
      Allowed("object.__setattr__", front_end, "/dsl/cutedsl/cutlass/cute/runtime.py", "__code__"));
  // Other attributes are not this rule's.
  CHECK(Allowed("object.__setattr__", Kernel(), "", "__name__"));
}

TEST_CASE("ATen's private operators are refused but the static audit's exceptions") {
  const std::vector<std::string> refused = mkb::RefusedPrivateOperators(
      {"add", "_chunk_cat", "__and__", "_unique2", "_scaled_mm", "_cummax_helper", "_chunk_cat"});
  CHECK(refused == std::vector<std::string>{"_chunk_cat", "_cummax_helper"});
}
