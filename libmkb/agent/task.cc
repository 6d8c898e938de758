#include "libmkb/agent/task.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "libmkb/agent/skill.h"
#include "libmkb/agent/text_protocol.h"
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

  absl::StrAppend(
      &out, "\n## The contract\n\n", "- `kernel.py` (at most ", b.max_kernel_bytes(),
      " bytes) defines `solve(*inputs)`. The "
      "judge imports it as a module and calls `solve` with the list `make_inputs()` returns, "
      "positionally. Tensors arrive as tensors; scalar inputs (marked in the table) arrive as "
      "Python numbers (`float`, `int`, `bool`), by value.\n",
      "- `solve` returns exactly the structure `reference` returns: the same container type, "
      "length and nesting; each tensor a plain `torch.Tensor` with the same shape, dtype and "
      "device.\n",
      "- Allowed: eager PyTorch for glue (allocation, views, layout), Python, and ", dsl,
      "; caching compiled kernels and buffers across calls; specialising on the facts stated as "
      "invariant; any internal precision that meets the tolerance.\n",
      "- Required: every call launches at least one kernel written in ", dsl,
      ", and every returned tensor depends on it.\n",
      "- Forbidden: calling or copying `reference` / `make_inputs`; torch.compile, torch.jit, "
      "Triton, raw CUDA (inline builds, extensions, ctypes, subprocesses); library kernels "
      "(cuBLAS, cuDNN, ATen compute ops) doing the main work; CUDA Graphs; depending on seeds, "
      "call order or timing; touching the judge.\n");
  if (s.cpu_judge) {
    absl::StrAppend(&out,
                    "- This attempt is judged on the CPU (the offline demo judge): there is no "
                    "GPU, and the requirement to launch a ",
                    dsl, " kernel is waived.\n");
  }

  absl::StrAppend(
      &out, "\n## How a submission is judged\n\n",
      "- Correctness: 5 draws, each with fresh inputs from a secret seed. Every floating-point "
      "output must satisfy max|out - anchor| <= 3 * max(max|expected - anchor|, eps(dtype) * "
      "max|anchor|), where `expected` is the reference at the inputs' dtypes and `anchor` the "
      "reference in float64; integer and bool outputs must be exact; any NaN fails. All 5 must "
      "pass, and outputs are checked again on later timing draws. Inputs must come back "
      "unmodified (unless marked in place).\n",
      "- Speed: end-to-end time of one synchronised `solve` call, median of 50 after 10 "
      "warm-up calls, against eager PyTorch (the reference) timed the same way: speedup = "
      "eager / kernel. GPU time is also traced per kernel.\n",
      "- The attempt's score is a fresh regrade, with new seeds, of the `kernel.py` you leave at "
      "the end. Your best submission is recorded too.\n");

  std::vector<v1::PackagePin> toolchain = s.toolchain;
  if (toolchain.empty()) toolchain = DefaultToolchain(s.dsl);
  std::vector<std::string> pins;
  for (const v1::PackagePin& pin : toolchain)
    pins.push_back(absl::StrCat(pin.name(), "==", pin.version()));
  absl::StrAppend(
      &out, "\n## Target\n\n- Device: ", s.target.empty() ? "the judge's GPU" : s.target,
      "\n- Toolchain: ", pins.empty() ? "(none pinned)" : absl::StrJoin(pins, ", "), "\n");

  absl::StrAppend(
      &out, "\n## Tools and budget\n\n",
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
      "` parses, audits, imports and compiles kernel.py for the judge's GPU "
      "architecture (errors with their kernel.py line) and costs no submission. The DSL's guide "
      "is under `docs/`.\n",
      "- `submit`: evaluates the current `kernel.py` on the judge and returns its report, with "
      "the submissions and minutes you have left. You have ",
      b.max_submissions(),
      " counted submissions; one that never reaches evaluation (empty, "
      "unparseable, oversized, a judge failure) is not counted.\n",
      "- `finish`: ends the attempt. The attempt also ends when the time or the submissions run "
      "out.\n",
      "- Time: ", Minutes(b.agent_seconds()), " minutes of wall-clock (", b.agent_seconds(),
      " s); time spent waiting for a free GPU does not count.\n");
  if (b.max_turns() > 0) absl::StrAppend(&out, "- Turns: at most ", b.max_turns(), ".\n");

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
