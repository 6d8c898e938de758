#include "libmkb/agent/task.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "libmkb/agent/skill.h"
#include "libmkb/agent/text_protocol.h"
#include "libmkb/judge/static_audit.h"
#include "libmkb/judge/verdict_builder.h"
#include "libmkb/model/defaults.h"
#include "libmkb/model/names.h"

namespace mkb {
namespace {

std::string DslImport(v1::Dsl dsl) {
  switch (dsl) {
    case v1::CUTEDSL:
      return "`import cutlass`, `import cutlass.cute as cute` (package nvidia-cutlass-dsl)";
    case v1::TIRX:
      return "TVMScript TIRx from apache-tvm (`import tvm`, `from tvm.script import tirx as T`)";
    default:
      return "";
  }
}

std::string Shape(const v1::TensorSpec& t) {
  return absl::StrCat("[", absl::StrJoin(t.shape(), ", "), "]");
}

void TensorTable(std::string* out, const char* title,
                 const google::protobuf::RepeatedPtrField<v1::TensorSpec>& tensors) {
  absl::StrAppend(out, "\n", title, ":\n\n| name | dtype | shape | notes |\n|---|---|---|---|\n");
  for (const v1::TensorSpec& t : tensors) {
    std::string notes = t.description();
    if (t.exact()) absl::StrAppend(&notes, notes.empty() ? "" : "; ", "compared exactly");
    if (t.in_place()) absl::StrAppend(&notes, notes.empty() ? "" : "; ", "updated in place");
    if (t.scalar()) {
      const std::string type = PythonScalarTypeName(t.dtype());
      absl::StrAppend(&notes, notes.empty() ? "" : "; ", "a Python ", type, ", not a tensor",
                      t.has_value()
                          ? absl::StrCat("; always ", PythonScalarLiteral(t.dtype(), t.value()))
                          : "");
      absl::StrAppend(out, "| `", t.name(), "` | ", type, " | scalar | ", notes, " |\n");
      continue;
    }
    absl::StrAppend(out, "| `", t.name(), "` | ", DTypeName(t.dtype()), " | ", Shape(t), " | ",
                    notes, " |\n");
  }
}

// A name as Markdown code (`__init__` would otherwise read as bold "init").
void Backticked(std::string* out, const std::string& name) { absl::StrAppend(out, "`", name, "`"); }

std::string Minutes(double seconds) { return absl::StrFormat("%g", std::round(seconds / 6) / 10); }

}  // namespace

std::string DslDisplayName(v1::Dsl dsl) {
  switch (dsl) {
    case v1::CUTEDSL:
      return "CuTe DSL";
    case v1::TIRX:
      return "TVM TIRx";
    default:
      return "(no DSL)";
  }
}

std::string SystemPrompt(const TaskSettings& s) {
  const std::string dsl = DslDisplayName(s.dsl);
  std::string out = absl::StrCat(
      "You are an expert GPU kernel engineer, working alone in a sandboxed workspace. Your job: "
      "write kernel.py in ",
      dsl,
      " for the problem described in TASK.md, make it correct, then "
      "make it fast; and keep SKILL.md up to date with what you learn that would help a later "
      "attempt at the same problem in another DSL.\n\n"
      "TASK.md holds the problem, the reference implementation, the kernel contract, how "
      "submissions are judged, your budget and the rules for SKILL.md. You have three tools: "
      "bash (a shell in the workspace, no GPU and no network), submit (evaluates kernel.py on the "
      "judge and reports back) and finish (ends the attempt). The clock runs while you think "
      "and while commands run; the kernel.py you leave at the end is what is scored.\n");
  if (s.text_protocol) absl::StrAppend(&out, "\n", TextProtocolInstructions());
  return out;
}

std::string FirstUserMessage(const std::string& task_markdown) {
  return absl::StrCat("Here is TASK.md (it is also in the workspace):\n\n", task_markdown,
                      "\nBegin.");
}

std::string RenderTask(const v1::Problem& p, const TaskSettings& s,
                       const std::string& received_skill) {
  const v1::Budget b = WithDefaults(s.budget);
  const std::string dsl = DslDisplayName(s.dsl);
  std::string out;
  absl::StrAppend(&out, "# Task: ", p.title(), "\n\nProblem ", absl::StrFormat("%02d", p.number()),
                  " `", p.slug(), "` (", FamilyName(p.family()), "). Write `kernel.py` in **", dsl,
                  "** (", DslImport(s.dsl), ") so that `solve(*inputs)` computes what ",
                  "`reference(*inputs)` below computes, correctly and as fast as you can.\n");

  absl::StrAppend(&out, "\n## The problem\n\n", absl::StripTrailingAsciiWhitespace(p.description()),
                  "\n");
  TensorTable(&out, "Inputs (in the order solve receives them)", p.inputs());
  TensorTable(&out, "Outputs", p.outputs());
  const char* container = p.output_container() == v1::SINGLE_TENSOR ? "a single tensor"
                          : p.output_container() == v1::LIST        ? "a list of the outputs"
                                                                    : "a tuple of the outputs";
  absl::StrAppend(&out, "\n`solve` returns ", container, ", in this order.\n");
  if (!p.invariants().empty()) {
    absl::StrAppend(&out, "\nFacts you may specialise on (invariant across draws):\n");
    for (const std::string& fact : p.invariants()) absl::StrAppend(&out, "- ", fact, "\n");
  }
  if (!p.input_conditioning().empty()) {
    absl::StrAppend(&out, "\nInput conditioning: ", p.input_conditioning(), "\n");
  }

  absl::StrAppend(&out, "\n## The workload the judge uses: `", s.workload, "`\n\n");
  for (const v1::Workload& w : p.workloads()) {
    if (w.name() != s.workload) continue;
    absl::StrAppend(&out, w.description(), "\n\n");
    for (const auto& [key, value] :
         std::map<std::string, int64_t>(w.params().begin(), w.params().end())) {
      const auto minimum = w.param_minimums().find(key);
      if (minimum != w.param_minimums().end()) {
        absl::StrAppend(&out, "- `", key, "` = ", minimum->second, "..", value,
                        " (drawn: it varies between draws)\n");
        continue;
      }
      absl::StrAppend(&out, "- `", key, "` = ", value, "\n");
    }
    if (w.roofline().min_bytes() > 0) {
      absl::StrAppendFormat(&out,
                            "\nLeast work any implementation does: %.4g bytes moved, %.4g flops.\n",
                            w.roofline().min_bytes(), w.roofline().flops());
    }
  }

  absl::StrAppend(&out, "\n## Reference (`reference.py`)\n\n",
                  "`reference(*inputs)` defines the result; `make_inputs(workload, device)` builds "
                  "the inputs the judge passes to `solve` (with a secret seed per draw).\n\n"
                  "```python\n",
                  absl::StripTrailingAsciiWhitespace(p.reference_source()), "\n```\n");

  const v1::JudgeConfig judge = WithDefaults(v1::JudgeConfig());
  absl::StrAppend(
      &out, "\n## The contract\n\n", "- `kernel.py` (at most ", b.max_kernel_bytes(),
      " bytes) is the whole submission. It defines `solve(*inputs)`; the judge imports it as a "
      "module and calls `solve` positionally with exactly the list `make_inputs()` returns. "
      "Tensors "
      "arrive as tensors; scalar inputs (marked in the table) arrive as Python numbers (`float`, "
      "`int`, `bool`), by value. Nothing else you write here is present when it is judged: "
      "kernel.py must not depend on other files you create.\n",
      "- `solve` returns exactly the structure `reference` returns: the same container types, "
      "lengths and nesting (nested tuples and lists included); each tensor a plain `torch.Tensor` "
      "with the same shape, dtype and device.\n",
      "- `solve` is called many times, each time on fresh, independently drawn inputs. A ", dsl,
      " kernel may be compiled on first use and the compiled kernel cached and reused; every "
      "call must still launch it and recompute every output from that call's arguments.\n",
      "- Specialise only on facts that hold on every legal draw of `make_inputs()` (fixed shapes, "
      "dtypes, constants, index structures) and that its source or the invariants above prove; "
      "anything that may vary between draws must be read from the current call's arguments.\n",
      "- You may cache compiled kernels, static metadata and output or scratch buffers; never a "
      "numerical result that depends on an input.\n");
  absl::StrAppend(
      &out, "\n## What counts as a ", dsl, " kernel\n\n",
      "- Allowed: eager PyTorch and plain Python for every remaining part of the computation "
      "(allocation, views, layout changes, dtype conversions, dispatch on shapes and dtypes); "
      "values flowing freely between eager operations and ",
      dsl, " kernels; any number of ", dsl,
      " kernels using the DSL's own operations, hardware intrinsics, tensor cores, asynchronous "
      "copies and mixed precision; an internal algorithm and precision other than the "
      "reference's, as long as the outputs meet the tolerance. ATen and the libraries eager "
      "operations call (cuBLAS, cuDNN) are allowed.\n",
      "- Required: every call launches at least one kernel of your own written in ", dsl,
      ", and at least one returned output tensor depends on a value that kernel computed or "
      "moved during that call. The ",
      dsl,
      " part may be small, even pure data movement, but it must do part of the computation: "
      "bypassing it and returning the eager result must not give the same valid outputs. It does "
      "not count to compile a kernel without launching it, to launch it for some inputs only, to "
      "discard its result, to recompute and overwrite its contribution, or to route an already "
      "valid eager result through a copy, cast or layout change. A later eager operation may "
      "consume or transform the kernel's result. A submission without a working ",
      dsl, " contribution is invalid and scores 0, however correct and fast it is.\n",
      "- Forbidden: calling `reference`, `make_inputs` or any helper of reference.py, or reusing "
      "their results (you may read them, reproduce their logic in kernel.py and copy their "
      "constants into it; the judge's kernel process cannot import reference.py); torch.compile, "
      "torch.jit, Triton and raw CUDA C/C++, also through inline builds, extensions, driver-API "
      "modules, ctypes or subprocesses; ",
      dsl,
      " kernels taken from a kernel library (those vendored in PyTorch included) instead of "
      "written in kernel.py; CUDA Graphs (they remove launch overhead the eager baseline pays); "
      "depending on seeds, call order, the timing phase, judge state or the results of earlier "
      "calls; modifying or circumventing the judge; importing modules other than torch, "
      "numpy, the variant's DSL and its runtime, and these of Python's standard library: ",
      absl::StrJoin(KernelStdlibRoots(), ", "),
      " (others, such as sympy, jinja2, PyYAML, re, json or xml, are refused); defining or "
      "binding a protocol method (a `__x__` name) other than ",
      absl::StrJoin(KernelProtocolMethods(), ", ", Backticked),
      "; deriving a class from a library class other than ",
      absl::StrJoin(KernelBaseClasses(), ", ", Backticked),
      " (your own classes and builtin types are fine); binding a `_sunder_` name; the DSL's "
      "private names (a leading underscore); a pointer made from an integer address "
      "(`make_ptr`), and any memory access (a load, store, copy, atomic or print of a tensor) "
      "in host code (in CuTe DSL, a `@cute.jit` function outside its kernels; in TIRx, a "
      "buffer read or written outside the device code, or a pointer turned into a number): "
      "host code makes layouts, views and launches, and memory is touched in kernels; native "
      "code other than what the DSL compiles (a shared library of your own, machine code made "
      "executable, a TVM-FFI function made from an address); a pointer made from a number "
      "(a stream or ctypes object) passed to a TVM-FFI function other than one the DSL "
      "compiled for you; changing the DSL's own modules or classes.\n");
  if (s.cpu_judge) {
    absl::StrAppend(&out,
                    "- This attempt is judged on the CPU (the offline demo judge): there is no "
                    "GPU, and the requirement to launch a ",
                    dsl, " kernel is waived.\n");
  }

  absl::StrAppend(
      &out, "\n## How a submission is judged\n\n", "- Correctness: ", judge.correctness_draws(),
      " draws, each with fresh inputs from a secret seed, and all must pass. The structure, "
      "shapes, dtypes and devices must match exactly. Integer and bool outputs must equal "
      "`expected`, the reference at the inputs' own dtypes, element for element. Every other "
      "output is compared with `anchor`, the reference run with every float32 / float16 / "
      "bfloat16 tensor input upcast to float64 (other inputs, scalars included, unchanged): it "
      "passes iff max|out - anchor| <= 3 * max(max|expected - anchor|, eps(dtype) * "
      "max|anchor|); an output more accurate than `expected` always passes, empty outputs pass, "
      "any NaN fails. The internal precision is yours (tensor cores, TF32, mixed precision); but "
      "for exactly compared outputs and for steps that quantise, round or convert dtypes, "
      "mathematically equal expressions can give different discrete results: follow the "
      "reference's order of operations.\n",
      "- Stricter than the published harness: memory solve allocates through torch is "
      "pre-filled with poison (NaN, or the largest integer), so unwritten elements fail; inputs "
      "must come back unmodified (unless marked in place); reading the reference or the seeds is "
      "a policy violation.\n",
      "- Speed, per timing draw: the inputs are built untimed; then the device is synchronised, "
      "a start event recorded, `solve` called once, the whole device synchronised and the end "
      "event read. The time includes Python dispatch inside `solve`, every launch and all GPU "
      "work of eager PyTorch and ",
      dsl, ". After ", judge.warmup_calls(), " warm-up calls, the median over ",
      judge.timing_draws(),
      " fresh draws. The eager baseline is `reference` timed the same way on the same seeds, at "
      "the inputs' dtypes under the reference numerics (TF32 off, reduced-precision reductions "
      "off, float32 matmul \"highest\"); the float64 anchor is for correctness only. speedup = "
      "eager / kernel, uncapped (1.0x is no ceiling), recorded only when the submission passed. "
      "Outputs are checked again on ",
      judge.recheck_draws(), " secretly chosen timing draws and on the ",
      judge.fastest_recheck_draws(),
      " fastest; a divergence fails. GPU time is also traced per kernel "
      "(CUPTI) and reported beside it.\n",
      "- Passed means correctness passed and timing completed; it does not by itself mean faster "
      "than eager: read the speedup.\n",
      "- The report: whether kernel.py imported, correct draws, passed, the first mismatch (which "
      "output, what differs, and for floating-point outputs how far the error is over the "
      "allowance), the kernel's and eager's median times and the speedup, tracebacks of "
      "exceptions, the reason of any other failure (a timeout, a crash), and the tails of the "
      "kernel process's stdout and stderr. The kernel runs in a process of its own; importing "
      "kernel.py may take at most ",
      absl::StrFormat("%g", judge.import_timeout_s()), " s, one call ",
      absl::StrFormat("%g", judge.call_timeout_s()), " s and the whole evaluation ",
      absl::StrFormat("%g", judge.total_timeout_s()), " s, or the submission fails.\n");

  std::vector<v1::PackagePin> toolchain = s.toolchain;
  if (toolchain.empty()) toolchain = DefaultToolchain(s.dsl);
  std::vector<std::string> pins;
  for (const v1::PackagePin& pin : toolchain)
    pins.push_back(absl::StrCat(pin.name(), "==", pin.version()));
  absl::StrAppend(&out,
                  "\n## Target\n\n- Device: ", s.target.empty() ? "the judge's GPU" : s.target,
                  "\n- Toolchain: ", pins.empty() ? "(none pinned)" : absl::StrJoin(pins, ", "),
                  " (the same versions here and in the judge)\n");

  absl::StrAppend(
      &out, "\n## Budget and the final score\n\n", "- You have ", b.max_submissions(),
      " counted submissions. One that never reaches evaluation (empty, unparseable, oversized, "
      "a judge failure) is returned with the reason and not counted. After the last one no more "
      "feedback is given; the final regrade still runs.\n",
      "- Time: ", Minutes(b.agent_seconds()), " minutes of wall-clock (", b.agent_seconds(),
      " s): thinking, commands and waiting for reports count; time spent waiting for a free GPU "
      "does not. Every report says how many submissions and minutes are left.\n",
      "- Submissions are feedback only. The score is a fresh regrade, with new seeds, of the "
      "`kernel.py` left on disk when the attempt ends (you finish, or the time or submissions "
      "run out); your best submission is recorded too. Finishing early earns nothing: spend "
      "the budget on improving the kernel, keep a copy of the best working version, and make "
      "sure kernel.py holds it before you finish.\n");
  if (b.max_turns() > 0) absl::StrAppend(&out, "- Turns: at most ", b.max_turns(), ".\n");

  absl::StrAppend(
      &out, "\n## Tools\n\n",
      "- `bash`: runs one command in this folder, in a sandbox: no GPU, no network, ",
      b.sandbox_cpus(), " CPUs, ", b.sandbox_memory_bytes() >> 30,
      " GB of memory; a command "
      "is killed after ",
      absl::StrFormat("%g", b.command_timeout_s()),
      " s; only this folder is writable. Each "
      "command starts afresh here (cd and variables do not carry over; files do). Use it to "
      "read, write and edit files and to compile offline: `mkb check kernel.py --dsl $MKB_DSL "
      "--problem ",
      p.slug(),
      "` parses, audits, imports and compiles kernel.py for the judge's GPU architecture, "
      "calling your `solve` on the CPU tensors of the problem's small workload and launching "
      "nothing (errors with their kernel.py line); it costs no submission. ",
      dsl,
      " reads kernel source from files: define kernels in .py files, not in heredocs or "
      "`python -c` strings. The DSL's guide is under `docs/`.\n",
      "- `submit`: evaluates a snapshot of the current `kernel.py` on the judge and returns its "
      "report; edits made while it runs do not change what is evaluated.\n",
      "- `finish`: ends the attempt. The attempt also ends when the time or the submissions run "
      "out.\n");

  absl::StrAppend(
      &out, "\n## A way to work\n\n",
      "1. Read the reference and `make_inputs` first: the inputs and outputs, the whole "
      "computation, the invariant facts, what is drawn at random, and the correctness rule for "
      "every output.\n",
      "2. Split the reference into a dataflow and candidate kernels, and find the likely "
      "bottleneck on the target GPU; settle doubts that change the design from the guide or with "
      "one submission that tests a stated hypothesis.\n",
      "3. Make the first version valid from the start: eager PyTorch for the computation plus the "
      "smallest genuine ",
      dsl,
      " kernel whose result reaches a returned output. Get import, interface, structure and "
      "numerics right first; then move more of the work into ",
      dsl, " and optimise.\n",
      "4. Before each submission run every check that needs no GPU (`mkb check`, imports, "
      "tracing, generated code, structure on the small workload).\n",
      "5. Submit a first candidate before a quarter of the time has passed, even a plain slow "
      "kernel: a correct slow kernel scores, an unfinished fast one does not. Then fix failures "
      "in this order: import, structure, correctness, speed. Change one thing per experiment and "
      "say beforehand what you expect.\n",
      "6. After each report, add only the new kernel knowledge and its evidence to SKILL.md, and "
      "check that kernel.py still holds the best version.\n",
      "7. In the last five minutes stop risky experiments, do the final checks and keep the best "
      "version.\n");

  absl::StrAppend(&out, "\n## SKILL.md\n\n", SkillRules());

  absl::StrAppend(&out, "\n## Files here\n\n- `TASK.md`: this file.\n",
                  "- `kernel.py`: your kernel (a placeholder to replace).\n",
                  "- `SKILL.md`: your notes for the other DSL (empty).\n");
  for (const std::string& guide : s.guides) {
    absl::StrAppend(&out, "- `", guide, "`: a guide to ", dsl, " under this contract.\n");
  }
  if (!received_skill.empty()) {
    absl::StrAppend(&out, "\n", RenderReceivedSkill([&] {
      v1::Skill skill;
      skill.set_text(received_skill);
      return skill;
    }()));
  }
  return out;
}

}  // namespace mkb
