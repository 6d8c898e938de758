#include "libmkb/judge/static_audit.h"

#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libmkb/judge/python_tokenizer.h"

namespace mkb {
namespace {

using Tokens = std::vector<PythonToken>;

struct Rule {
  const char* prefix;  // dotted module / attribute path; matches itself and anything below it
  const char* code;
  const char* reason;
};

// Modules a kernel may not import (SPEC §2: no other compilers, raw CUDA, processes, network,
// files, threads, introspection; the judge and the problem's reference are off limits).
constexpr Rule kForbiddenModules[] = {
    {"triton", "static.forbidden_import", "Triton is not a variant's DSL"},
    {"torch._dynamo", "static.forbidden_import", "torch.compile machinery is forbidden"},
    {"torch._inductor", "static.forbidden_import", "torch.compile machinery is forbidden"},
    {"torch.utils.cpp_extension", "static.forbidden_import",
     "inline C++/CUDA extensions are forbidden"},
    {"torch.cuda.graphs", "static.forbidden_import", "CUDA Graphs are forbidden"},
    {"ctypes", "static.forbidden_import", "ctypes (raw native calls) is forbidden"},
    {"cffi", "static.forbidden_import", "cffi (raw native calls) is forbidden"},
    {"cupy", "static.forbidden_import", "CuPy (raw CUDA kernels, library ops) is forbidden"},
    {"numba", "static.forbidden_import", "Numba is not a variant's DSL"},
    {"pycuda", "static.forbidden_import", "PyCUDA (raw CUDA) is forbidden"},
    {"cuda.bindings.nvrtc", "static.forbidden_import", "NVRTC (raw CUDA compilation) is forbidden"},
    {"cuda.nvrtc", "static.forbidden_import", "NVRTC (raw CUDA compilation) is forbidden"},
    {"cuda.core", "static.forbidden_import", "cuda.core (raw kernel launches) is forbidden"},
    {"jax", "static.forbidden_import", "JAX is not a variant's DSL"},
    {"tensorflow", "static.forbidden_import", "TensorFlow is not a variant's DSL"},
    {"subprocess", "static.forbidden_import", "subprocesses are forbidden"},
    {"multiprocessing", "static.forbidden_import", "subprocesses are forbidden"},
    {"concurrent", "static.forbidden_import", "threads and processes are forbidden"},
    {"threading", "static.forbidden_import",
     "threads are forbidden (work must finish inside solve)"},
    {"_thread", "static.forbidden_import", "threads are forbidden"},
    {"asyncio", "static.forbidden_import", "event loops are forbidden"},
    {"signal", "static.forbidden_import", "signal handlers are forbidden"},
    {"socket", "static.forbidden_import", "network access is forbidden"},
    {"ssl", "static.forbidden_import", "network access is forbidden"},
    {"http", "static.forbidden_import", "network access is forbidden"},
    {"urllib", "static.forbidden_import", "network access is forbidden"},
    {"requests", "static.forbidden_import", "network access is forbidden"},
    {"pathlib", "static.forbidden_import", "file access is forbidden"},
    {"shutil", "static.forbidden_import", "file access is forbidden"},
    {"tempfile", "static.forbidden_import", "file access is forbidden"},
    {"glob", "static.forbidden_import", "file access is forbidden"},
    {"io", "static.forbidden_import", "file access is forbidden"},
    {"mmap", "static.forbidden_import", "raw memory access is forbidden"},
    {"pickle", "static.forbidden_import",
     "serialisation of live objects is not needed by a kernel"},
    {"marshal", "static.forbidden_import", "code objects are forbidden"},
    {"importlib", "static.dynamic_import", "dynamic imports are forbidden"},
    {"builtins", "static.introspection", "patching builtins is forbidden"},
    {"gc", "static.introspection", "reaching other objects through the collector is forbidden"},
    {"inspect", "static.introspection", "frame and source introspection is forbidden"},
    {"traceback", "static.introspection", "frame introspection is forbidden"},
    {"resource", "static.introspection", "changing the worker's limits is forbidden"},
    {"faulthandler", "static.introspection", "not needed by a kernel"},
    {"metakernelbench", "static.judge_access", "the judge is off limits"},
    {"_mkb_problem", "static.reference_access", "the problem's reference is off limits"},
    {"reference", "static.reference_access", "the problem's reference is off limits"},
};

// Attribute paths a kernel may not touch (calls or references), below allowed modules.
constexpr Rule kForbiddenAttributes[] = {
    {"torch.compile", "static.forbidden_call", "torch.compile is forbidden"},
    {"torch.jit", "static.forbidden_call", "torch.jit is forbidden"},
    {"torch._dynamo", "static.forbidden_call", "torch.compile machinery is forbidden"},
    {"torch._inductor", "static.forbidden_call", "torch.compile machinery is forbidden"},
    {"torch.utils.cpp_extension", "static.forbidden_call", "inline extensions are forbidden"},
    {"torch.library", "static.forbidden_call", "registering custom ops is forbidden"},
    {"torch.ops.load_library", "static.forbidden_call", "loading native libraries is forbidden"},
    {"torch.cuda.CUDAGraph", "static.forbidden_call", "CUDA Graphs are forbidden"},
    {"torch.cuda.graph", "static.forbidden_call", "CUDA Graphs are forbidden"},
    {"torch.cuda.graphs", "static.forbidden_call", "CUDA Graphs are forbidden"},
    {"torch.cuda.make_graphed_callables", "static.forbidden_call", "CUDA Graphs are forbidden"},
    {"torch.cuda.jiterator", "static.forbidden_call", "runtime-compiled CUDA is forbidden"},
    {"torch.use_deterministic_algorithms", "static.judge_access",
     "the judge's numerics settings are off limits"},
    {"torch.utils.deterministic", "static.judge_access",
     "the judge's numerics settings are off limits"},
    {"torch.manual_seed", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.seed", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.initial_seed", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.random", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.get_rng_state", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.set_rng_state", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.cuda.manual_seed", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.cuda.manual_seed_all", "static.seed_access",
     "kernels may not depend on or change seeds"},
    {"torch.cuda.initial_seed", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.cuda.get_rng_state", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.cuda.random", "static.seed_access", "kernels may not depend on or change seeds"},
    {"torch.cuda.set_sync_debug_mode", "static.judge_access",
     "the judge's settings are off limits"},
    {"torch.backends", "static.module_patch",
     "changing torch.backends settings changes the eager baseline"},
    {"torch.set_float32_matmul_precision", "static.module_patch",
     "changes the eager baseline's numerics"},
    {"torch.set_default_dtype", "static.module_patch", "changes the judge's numerics"},
    {"torch.set_default_device", "static.module_patch", "changes the judge's allocations"},
    {"torch.overrides", "static.introspection", "torch function overrides are forbidden"},
    {"torch._C", "static.introspection", "torch internals are off limits"},
    {"os.system", "static.forbidden_call", "subprocesses are forbidden"},
    {"os.popen", "static.forbidden_call", "subprocesses are forbidden"},
    {"os.fork", "static.forbidden_call", "subprocesses are forbidden"},
    {"os.forkpty", "static.forbidden_call", "subprocesses are forbidden"},
    {"os.exec", "static.forbidden_call", "subprocesses are forbidden"},
    {"os.spawn", "static.forbidden_call", "subprocesses are forbidden"},
    {"os.posix_spawn", "static.forbidden_call", "subprocesses are forbidden"},
    {"os.kill", "static.forbidden_call", "signalling processes is forbidden"},
    {"os.killpg", "static.forbidden_call", "signalling processes is forbidden"},
    {"os.write", "static.forbidden_call", "raw descriptor access is forbidden"},
    {"os.read", "static.forbidden_call", "raw descriptor access is forbidden"},
    {"os.open", "static.forbidden_call", "file access is forbidden"},
    {"os.fdopen", "static.forbidden_call", "raw descriptor access is forbidden"},
    {"os.dup", "static.forbidden_call", "raw descriptor access is forbidden"},
    {"os.pipe", "static.forbidden_call", "raw descriptor access is forbidden"},
    {"os.listdir", "static.forbidden_call", "file access is forbidden"},
    {"os.scandir", "static.forbidden_call", "file access is forbidden"},
    {"os.walk", "static.forbidden_call", "file access is forbidden"},
    {"os.remove", "static.forbidden_call", "file access is forbidden"},
    {"os.unlink", "static.forbidden_call", "file access is forbidden"},
    {"os.environ", "static.forbidden_call", "the environment is off limits"},
    {"os.getenv", "static.forbidden_call", "the environment is off limits"},
    {"os.putenv", "static.forbidden_call", "the environment is off limits"},
    {"os.getppid", "static.introspection", "the judge's process is off limits"},
    {"os._exit", "static.forbidden_call", "exiting the worker is forbidden"},
    {"sys.modules", "static.introspection",
     "reaching other modules through sys.modules is forbidden"},
    {"sys._getframe", "static.introspection", "frame introspection is forbidden"},
    {"sys.settrace", "static.introspection", "tracing is forbidden"},
    {"sys.setprofile", "static.introspection", "profiling hooks are forbidden"},
    {"sys.addaudithook", "static.introspection", "audit hooks are the judge's"},
    {"sys.audit", "static.introspection", "audit hooks are the judge's"},
    {"sys.exit", "static.forbidden_call", "exiting the worker is forbidden"},
    {"sys.stdout", "static.forbidden_call", "the worker's streams are the judge's"},
    {"sys.stderr", "static.forbidden_call", "the worker's streams are the judge's"},
    {"sys.meta_path", "static.introspection", "import hooks are forbidden"},
    {"sys.path_hooks", "static.introspection", "import hooks are forbidden"},
    {"sys.path", "static.introspection", "changing the import path is forbidden"},
    {"sys.setrecursionlimit", "static.introspection", "not needed by a kernel"},
    {"time.sleep", "static.forbidden_call", "kernels may not depend on timing"},
};

// Builtins whose call is forbidden outright.
constexpr Rule kForbiddenBuiltins[] = {
    {"eval", "static.dynamic_code", "eval is forbidden"},
    {"exec", "static.dynamic_code", "exec is forbidden"},
    {"compile", "static.dynamic_code", "compiling code at run time is forbidden"},
    {"__import__", "static.dynamic_import", "dynamic imports are forbidden"},
    {"globals", "static.introspection", "reaching module globals is forbidden"},
    {"vars", "static.introspection", "reaching object namespaces is forbidden"},
    {"open", "static.forbidden_call", "file access is forbidden"},
    {"breakpoint", "static.forbidden_call", "debuggers are forbidden"},
    {"input", "static.forbidden_call", "reading input is forbidden"},
    {"exit", "static.forbidden_call", "exiting the worker is forbidden"},
    {"quit", "static.forbidden_call", "exiting the worker is forbidden"},
    {"make_inputs", "static.reference_access", "the problem's make_inputs is off limits"},
    {"reference", "static.reference_access", "the problem's reference is off limits"},
};

// Attributes that reach the interpreter's internals from any object.
constexpr const char* kIntrospectionAttributes[] = {"__globals__",
                                                    "__builtins__",
                                                    "__subclasses__",
                                                    "__code__",
                                                    "__closure__",
                                                    "__bases__",
                                                    "__mro__",
                                                    "__getattribute__",
                                                    "__reduce__",
                                                    "__reduce_ex__",
                                                    "__loader__",
                                                    "__spec__",
                                                    "f_back",
                                                    "f_globals",
                                                    "f_locals",
                                                    "f_builtins",
                                                    "f_code",
                                                    "gi_frame",
                                                    "gi_code",
                                                    "cr_frame",
                                                    "ag_frame",
                                                    "tb_frame",
                                                    "tb_next",
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

const Rule* MatchRule(const std::string& path, const Rule* begin, const Rule* end) {
  const Rule* best = nullptr;
  for (const Rule* rule = begin; rule != end; ++rule) {
    const absl::string_view prefix = rule->prefix;
    if (path == prefix || absl::StartsWith(path, absl::StrCat(prefix, "."))) {
      if (best == nullptr || prefix.size() > absl::string_view(best->prefix).size()) best = rule;
    }
  }
  return best;
}

// os.exec*, os.spawn* families match by prefix of the last component too.
const Rule* MatchAttribute(const std::string& path) {
  if (const Rule* rule =
          MatchRule(path, std::begin(kForbiddenAttributes), std::end(kForbiddenAttributes))) {
    return rule;
  }
  for (const char* family : {"os.exec", "os.spawn", "os.dup", "os.kill"}) {
    if (absl::StartsWith(path, family)) {
      return MatchRule(family, std::begin(kForbiddenAttributes), std::end(kForbiddenAttributes));
    }
  }
  return nullptr;
}

class Auditor {
 public:
  Auditor(absl::string_view source, const StaticAuditOptions& options)
      : tokens_(TokenizePython(source)), options_(options) {}

  std::vector<v1::AuditFinding> Run() {
    CollectImports();
    ScanReferences();
    CheckDsl();
    return std::move(findings_);
  }

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

  void CheckModule(const std::string& module, int line, const std::string& snippet) {
    imported_.insert(module);
    if (const Rule* rule =
            MatchRule(module, std::begin(kForbiddenModules), std::end(kForbiddenModules))) {
      Add(rule->code, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("import of ", module, ": ", rule->reason), snippet);
    }
    if (const Rule* rule = MatchAttribute(module)) {
      Add(rule->code, v1::SEVERITY_VIOLATION, line,
          absl::StrCat("import of ", module, ": ", rule->reason), snippet);
    }
  }

  // Reads a dotted name starting at tokens_[i]; advances i past it.
  std::string DottedName(size_t& i) const {
    std::string name;
    while (i < tokens_.size() && tokens_[i].kind == PythonToken::kName) {
      name += tokens_[i].text;
      if (i + 1 < tokens_.size() && tokens_[i + 1].text == "." && i + 2 < tokens_.size() &&
          tokens_[i + 2].kind == PythonToken::kName) {
        name += ".";
        i += 2;
      } else {
        ++i;
        break;
      }
    }
    return name;
  }

  // import a.b as c, d  /  from a.b import c as d, (e, f)  /  from . import x
  void CollectImports() {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const PythonToken& t = tokens_[i];
      if (t.kind != PythonToken::kName) continue;
      const bool at_statement_start = i == 0 || tokens_[i - 1].kind == PythonToken::kNewline ||
                                      tokens_[i - 1].text == ";" || tokens_[i - 1].text == ":";
      if ((t.text == "def" || t.text == "class") && i + 1 < tokens_.size())
        defined_.insert(tokens_[i + 1].text);
      if (!at_statement_start) continue;
      if (i + 1 < tokens_.size() && tokens_[i + 1].text == "=") defined_.insert(t.text);
      if (t.text == "import") {
        size_t j = i + 1;
        while (j < tokens_.size() && tokens_[j].kind != PythonToken::kNewline &&
               tokens_[j].text != ";") {
          const std::string module = DottedName(j);
          if (module.empty()) {
            ++j;
            continue;
          }
          CheckModule(module, t.line, absl::StrCat("import ", module));
          if (j < tokens_.size() && tokens_[j].text == "as" && j + 1 < tokens_.size()) {
            aliases_[tokens_[j + 1].text] = module;
            j += 2;
          } else {
            const std::string head = module.substr(0, module.find('.'));
            aliases_[head] = head;
          }
          if (j < tokens_.size() && tokens_[j].text == ",") ++j;
        }
      } else if (t.text == "from") {
        size_t j = i + 1;
        std::string module;
        while (j < tokens_.size() && tokens_[j].text == ".") {
          module += ".";
          ++j;
        }
        module += DottedName(j);
        if (absl::StartsWith(module, ".")) {
          Add("static.forbidden_import", v1::SEVERITY_VIOLATION, t.line,
              "relative import: kernel.py must be self-contained",
              absl::StrCat("from ", module, " import ..."));
        }
        CheckModule(module, t.line, absl::StrCat("from ", module, " import ..."));
        if (j >= tokens_.size() || tokens_[j].text != "import") continue;
        ++j;
        while (j < tokens_.size() && tokens_[j].kind != PythonToken::kNewline &&
               tokens_[j].text != ";") {
          if (tokens_[j].text == "(" || tokens_[j].text == ")" || tokens_[j].text == ",") {
            ++j;
            continue;
          }
          if (tokens_[j].text == "*") {
            star_imports_.push_back(module);
            ++j;
            continue;
          }
          if (tokens_[j].kind != PythonToken::kName) {
            ++j;
            continue;
          }
          const std::string name = tokens_[j].text;
          const std::string full = absl::StrCat(module, ".", name);
          CheckModule(full, t.line, absl::StrCat("from ", module, " import ", name));
          std::string bound = name;
          if (j + 2 < tokens_.size() && tokens_[j + 1].text == "as") {
            bound = tokens_[j + 2].text;
            j += 3;
          } else {
            ++j;
          }
          aliases_[bound] = full;
        }
      }
    }
  }

  // Expands the head of a dotted name through the import aliases.
  std::string Resolve(const std::string& dotted) const {
    const size_t dot = dotted.find('.');
    const std::string head = dotted.substr(0, dot);
    auto it = aliases_.find(head);
    if (it == aliases_.end()) return dotted;
    return dot == std::string::npos ? it->second : absl::StrCat(it->second, dotted.substr(dot));
  }

  bool IsAlias(const std::string& dotted) const {
    return aliases_.count(dotted.substr(0, dotted.find('.'))) > 0;
  }

  void ScanReferences() {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const PythonToken& t = tokens_[i];
      // A binary @ follows an operand; a decorator's @ starts a line.
      if (t.kind == PythonToken::kOp && t.text == "@" && i > 0 &&
          (tokens_[i - 1].kind == PythonToken::kName ||
           tokens_[i - 1].kind == PythonToken::kNumber || tokens_[i - 1].text == ")" ||
           tokens_[i - 1].text == "]")) {
        Add("static.library_compute", v1::SEVERITY_WARNING, t.line,
            "matrix product with @ runs a library kernel (cuBLAS); the runtime audit weighs its "
            "share",
            "@");
      }
      if (t.kind != PythonToken::kName) continue;
      const bool after_dot = i > 0 && tokens_[i - 1].text == ".";
      if (after_dot) {
        CheckIntrospectionAttribute(t);
        continue;
      }
      const bool in_import = IsImportStatement(i);
      size_t j = i;
      const std::string dotted = DottedName(j);
      if (in_import) {
        i = j - 1;
        continue;
      }
      for (size_t k = i + 2; k < j; k += 2)
        CheckIntrospectionAttribute(tokens_[k]);  // a.b.__globals__
      const std::string path = Resolve(dotted);
      const bool is_call = j < tokens_.size() && tokens_[j].text == "(";
      const bool is_assignment = j < tokens_.size() && IsAssignmentOperator(tokens_[j].text);
      const std::string snippet = dotted + (is_call ? "(...)" : "");
      if (dotted.find('.') == std::string::npos && !IsAlias(dotted)) {
        CheckBuiltin(dotted, is_call, j, t.line);
      }
      if (IsAlias(dotted) || dotted.find('.') != std::string::npos) {
        if (const Rule* rule = MatchAttribute(path)) {
          Add(rule->code, v1::SEVERITY_VIOLATION, t.line, absl::StrCat(path, ": ", rule->reason),
              snippet);
        } else if (const Rule* rule = IsAlias(dotted)
                                          ? MatchRule(path, std::begin(kForbiddenModules),
                                                      std::end(kForbiddenModules))
                                          : nullptr) {
          Add(rule->code, v1::SEVERITY_VIOLATION, t.line, absl::StrCat(path, ": ", rule->reason),
              snippet);
        }
        // `x: T.let = expr` annotates x; it does not assign to T.let.
        const bool is_annotation = i > 0 && tokens_[i - 1].text == ":";
        if (is_assignment && !is_annotation && IsAlias(dotted) &&
            dotted.find('.') != std::string::npos) {
          Add("static.module_patch", v1::SEVERITY_VIOLATION, t.line,
              absl::StrCat("assigning to ", path, ": patching modules is forbidden"),
              dotted + " = ...");
        }
        if (is_call) {
          for (const char* library : kLibraryCompute) {
            if (path == library || absl::StartsWith(path, absl::StrCat(library, "."))) {
              Add("static.library_compute", v1::SEVERITY_WARNING, t.line,
                  absl::StrCat(path,
                               " runs a library / ATen kernel; the runtime audit weighs its share"),
                  snippet);
              break;
            }
          }
          if (absl::StartsWith(path, "torch.cuda.Stream") ||
              absl::StartsWith(path, "torch.cuda.stream")) {
            Add("static.side_stream", v1::SEVERITY_WARNING, t.line,
                "side streams must be joined before solve returns; the judge checks outputs on the "
                "current stream",
                snippet);
          }
        }
      }
      // The star-imported module's forbidden names used bare ("from torch import *; compile(...)").
      for (const std::string& module : star_imports_) {
        if (const Rule* rule = MatchAttribute(absl::StrCat(module, ".", dotted))) {
          Add(rule->code, v1::SEVERITY_VIOLATION, t.line,
              absl::StrCat(module, ".", dotted, ": ", rule->reason), snippet);
        }
      }
      i = j - 1;
    }
  }

  bool IsImportStatement(size_t i) const {
    // True when tokens_[i] lies in an import statement (between "import"/"from" and the line end).
    for (size_t k = i + 1; k-- > 0;) {
      const PythonToken& t = tokens_[k];
      if (t.kind == PythonToken::kNewline || t.text == ";") return false;
      if ((t.text == "import" || t.text == "from") && t.kind == PythonToken::kName &&
          (k == 0 || tokens_[k - 1].kind == PythonToken::kNewline || tokens_[k - 1].text == ";" ||
           tokens_[k - 1].text == ":")) {
        return true;
      }
    }
    return false;
  }

  static bool IsAssignmentOperator(const std::string& op) {
    static const std::set<std::string> kOps = {"=",  "+=", "-=", "*=", "/=",  "//=", "%=", "**=",
                                               "@=", "&=", "|=", "^=", ">>=", "<<=", ":="};
    return kOps.count(op) > 0;
  }

  void CheckIntrospectionAttribute(const PythonToken& t) {
    for (const char* attribute : kIntrospectionAttributes) {
      if (t.text == attribute) {
        Add("static.introspection", v1::SEVERITY_VIOLATION, t.line,
            absl::StrCat("access to .", t.text, ": reaching interpreter internals is forbidden"),
            "." + t.text);
        return;
      }
    }
  }

  // A bare name: builtins that are forbidden, dynamic getattr / setattr.
  void CheckBuiltin(const std::string& name, bool is_call, size_t after, int line) {
    if (name == "__builtins__" || name == "__loader__" || name == "__spec__") {
      Add("static.introspection", v1::SEVERITY_VIOLATION, line,
          absl::StrCat(name, ": reaching interpreter internals is forbidden"), name);
      return;
    }
    const bool defined_here = defined_.count(name) > 0;
    if (const Rule* rule =
            MatchRule(name, std::begin(kForbiddenBuiltins), std::end(kForbiddenBuiltins))) {
      if (name == rule->prefix && (is_call || absl::StartsWith(rule->code, "static.reference")) &&
          !defined_here) {
        Add(rule->code, v1::SEVERITY_VIOLATION, line, absl::StrCat(name, ": ", rule->reason),
            name + (is_call ? "(...)" : ""));
      }
    }
    if (is_call &&
        (name == "getattr" || name == "setattr" || name == "delattr" || name == "hasattr")) {
      // getattr(obj, "literal") resolves like obj.literal; anything else is dynamic.
      size_t k = after + 1;
      const std::string target = DottedName(k);
      if (k + 1 < tokens_.size() && tokens_[k].text == "," &&
          tokens_[k + 1].kind == PythonToken::kString && !tokens_[k + 1].f_string &&
          k + 2 < tokens_.size() && (tokens_[k + 2].text == ")" || tokens_[k + 2].text == ",")) {
        const std::string attribute = tokens_[k + 1].text;
        const std::string path = absl::StrCat(Resolve(target), ".", attribute);
        if (const Rule* rule = MatchAttribute(path)) {
          Add(rule->code, v1::SEVERITY_VIOLATION, line, absl::StrCat(path, ": ", rule->reason),
              absl::StrCat(name, "(", target, ", \"", attribute, "\")"));
        }
        for (const char* internal : kIntrospectionAttributes) {
          if (attribute == internal) {
            Add("static.introspection", v1::SEVERITY_VIOLATION, line,
                absl::StrCat(name, " of ", attribute,
                             ": reaching interpreter internals is forbidden"),
                name + "(...)");
          }
        }
        if (name != "getattr" && name != "hasattr" && IsAlias(target)) {
          Add("static.module_patch", v1::SEVERITY_VIOLATION, line,
              absl::StrCat(name, " on module ", Resolve(target), ": patching modules is forbidden"),
              name + "(...)");
        }
      } else {
        Add("static.dynamic_attribute", v1::SEVERITY_VIOLATION, line,
            absl::StrCat(name,
                         " with a computed attribute name: the audit cannot see what it reaches"),
            name + "(...)");
      }
    }
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

  Tokens tokens_;
  StaticAuditOptions options_;
  std::map<std::string, std::string> aliases_;  // bound name -> dotted module path
  std::set<std::string> imported_;
  std::set<std::string> defined_;
  std::vector<std::string> star_imports_;
  std::set<std::string> seen_;
  std::vector<v1::AuditFinding> findings_;
};

}  // namespace

std::optional<std::pair<std::string, std::string>> AuditModule(absl::string_view module) {
  const std::string name(module);
  if (const Rule* rule =
          MatchRule(name, std::begin(kForbiddenModules), std::end(kForbiddenModules))) {
    return std::make_pair(std::string(rule->code), std::string(rule->reason));
  }
  if (const Rule* rule = MatchAttribute(name))
    return std::make_pair(std::string(rule->code), std::string(rule->reason));
  return std::nullopt;
}

std::vector<v1::AuditFinding> StaticAudit(absl::string_view source,
                                          const StaticAuditOptions& options) {
  return Auditor(source, options).Run();
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
       "imports a module SPEC §2 forbids (other compilers, raw CUDA, processes, "
       "threads, network, files)"},
      {"static.forbidden_call",
       "calls or references a forbidden function (torch.compile, CUDA Graphs, os.system, "
       "open, ...)"},
      {"static.dynamic_import", "imports modules at run time (__import__, importlib)"},
      {"static.dynamic_code", "runs code built at run time (eval, exec, compile)"},
      {"static.dynamic_attribute", "getattr / setattr with a computed name"},
      {"static.introspection", "reaches interpreter internals (frames, globals, sys.modules, gc)"},
      {"static.module_patch",
       "assigns to attributes of imported modules (patching torch, changing backends)"},
      {"static.judge_access", "touches the judge or its numerics settings"},
      {"static.reference_access", "uses the problem's reference or make_inputs"},
      {"static.seed_access", "reads or sets random seeds"},
      {"static.wrong_dsl", "imports the other variant's DSL"},
      {"static.no_dsl_import", "does not import the variant's DSL"},
      {"static.library_compute",
       "calls library / ATen compute (warning: the runtime audit weighs it)"},
      {"static.side_stream",
       "uses side streams (warning: the judge checks outputs on the current stream)"},
  };
}

}  // namespace mkb
