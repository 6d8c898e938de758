// Skills, TASK.md, the text protocol and the scripted model's script.
#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include "libmkb/agent/scripted_model.h"
#include "libmkb/agent/skill.h"
#include "libmkb/agent/task.h"
#include "libmkb/agent/text_protocol.h"
#include "libmkb/core/sha256.h"
#include "libmkb/suite/suite.h"

namespace {

const std::string kSuite = std::string(MKB_SOURCE_DIR) + "/problems";

const mkb::v1::Problem& Problem28() {
  static const auto* problem = new mkb::v1::Problem(
      *mkb::LoadProblem(kSuite + "/mlp_norm/28_fused_add_rmsnorm_h4096_llama31_8b_bf16"));
  return *problem;
}

}  // namespace

TEST_CASE("a skill is capped, hashed and flagged") {
  const mkb::v1::Skill skill = mkb::MakeSkill("- the gain is applied after the norm\n", 16384);
  CHECK(skill.sha256() == mkb::Sha256Hex(skill.text()));
  CHECK(skill.bytes() == static_cast<int64_t>(skill.text().size()));
  CHECK_FALSE(skill.flags().empty());
  CHECK_FALSE(skill.flags().truncated());
  CHECK_FALSE(skill.flags().contains_code());

  CHECK(mkb::MakeSkill(" \n\t", 100).flags().empty());

  // Cut at the cap, never inside a UTF-8 sequence ("é" is two bytes).
  const mkb::v1::Skill cut = mkb::MakeSkill("aé", 2);
  CHECK(cut.text() == "a");
  CHECK(cut.flags().truncated());
  CHECK(cut.sha256() == mkb::Sha256Hex("a"));
}

TEST_CASE("code in a skill is flagged with evidence") {
  for (const char* code :
       {"```python\nx = 1\n```", "def solve(x):", "import cutlass.cute as cute",
        "    out = torch.empty_like(x)", "$ pip install triton",
        "for i in range(8):", "use cute.arch.sync_threads() after the copy", "@T.prim_func"}) {
    INFO(code);
    const mkb::v1::Skill skill = mkb::MakeSkill(code, 16384);
    CHECK(skill.flags().contains_code());
    CHECK_FALSE(skill.flags().code_evidence().empty());
  }
  const std::string prose =
      "# Findings\n\n- Observed: one row per block was 1.4x faster than two rows (hidden 4096).\n"
      "- Why: the reduction needs all 4096 elements; with two rows the block ran out of "
      "registers.\n- Holds for: bf16 inputs, eps 1e-5.\n";
  CHECK_FALSE(mkb::MakeSkill(prose, 16384).flags().contains_code());
}

TEST_CASE("conditioned and solo skills are told apart") {
  CHECK_FALSE(mkb::IsConditioned(mkb::v1::Skill()));
  mkb::v1::Skill empty;
  empty.set_origin("attempt");
  CHECK(mkb::IsConditioned(empty));
  CHECK(mkb::IsBlankSkill(empty));
  const std::string rendered = mkb::RenderReceivedSkill(mkb::MakeSkill("notes", 100));
  CHECK(rendered.rfind(mkb::kReceivedSkillHeader, 0) == 0);
  CHECK(rendered.find("another DSL") != std::string::npos);
}

TEST_CASE("the text protocol reads the first action of a reply") {
  auto bash = mkb::ParseTextAction("I will look.\n<bash>\nls -la\n</bash>\n<submit/>", 1);
  REQUIRE(bash.has_value());
  CHECK(bash->name == "bash");
  CHECK(nlohmann::json::parse(bash->arguments_json)["command"] == "ls -la");
  CHECK(mkb::ParseTextAction("done <finish/>", 2)->name == "finish");
  CHECK(mkb::ParseTextAction("<submit/> then <bash>ls</bash>", 3)->name == "submit");
  auto open = mkb::ParseTextAction("<bash>\ncat > k.py <<'EOF'\nx\nEOF", 4);
  REQUIRE(open.has_value());
  CHECK(nlohmann::json::parse(open->arguments_json)["command"] == "cat > k.py <<'EOF'\nx\nEOF");
  CHECK_FALSE(mkb::ParseTextAction("no action here", 5).has_value());
  CHECK(mkb::FormatTextObservation("bash", "x") == "<output tool=\"bash\">\nx\n</output>");
}

TEST_CASE("TASK.md holds the problem, the reference, the contract, the budget and the target") {
  mkb::TaskSettings settings;
  settings.dsl = mkb::v1::TIRX;
  settings.workload = "full";
  settings.target = "NVIDIA H200 (sm_90a)";
  settings.guides = {"docs/tirx.md"};
  const std::string task = mkb::RenderTask(Problem28(), settings);
  for (const char* expected :
       {"Problem 28 `fused_add_rmsnorm_h4096_llama31_8b_bf16`", "TVM TIRx", "def reference(",
        "def make_inputs(", "`num_tokens` = 14509", "300000 bytes", "40 minutes", "2400 s",
        "10 counted submissions", "NVIDIA H200 (sm_90a)", "apache-tvm[cuda]==0.25.0.post1",
        "no network", "8 GB", "120 s", "docs/tirx.md", "Do not write code, shell commands",
        // the static audit's own lists: the protocol methods and library bases a kernel may use
        "other than `__init__`, `__call__`", "`torch.nn.Module`, `torch.autograd.Function`"}) {
    INFO(expected);
    CHECK(task.find(expected) != std::string::npos);
  }
  CHECK(task.find(mkb::kReceivedSkillHeader) == std::string::npos);
  CHECK(task.find("judged on the CPU") == std::string::npos);

  settings.cpu_judge = true;
  settings.workload = "small";
  const std::string conditioned = mkb::RenderTask(Problem28(), settings, "the gain matters");
  CHECK(conditioned.find("judged on the CPU") != std::string::npos);
  CHECK(conditioned.find("`num_tokens` = 37") != std::string::npos);
  const size_t header = conditioned.find(mkb::kReceivedSkillHeader);
  REQUIRE(header != std::string::npos);
  CHECK(conditioned.find("the gain matters", header) != std::string::npos);
}

// The terms of the published instruction (metakernelbench/template/instruction.md of the
// published harness), each with the words of ours that state it.
TEST_CASE("TASK.md states every term of the published instruction, with our mechanics") {
  mkb::TaskSettings settings;
  settings.dsl = mkb::v1::CUTEDSL;
  settings.target = "NVIDIA H200 (sm_90a)";
  const std::string task = mkb::RenderTask(Problem28(), settings);
  const std::pair<const char*, const char*> kTerms[] = {
      {"solve called positionally with make_inputs()'s list",
       "calls `solve` positionally with exactly the list `make_inputs()` returns"},
      {"structure, shape, dtype, device", "the same container types, lengths and nesting"},
      {"kernel.py alone, byte limit, no other files", "must not depend on other files you create"},
      {"fresh inputs; compile once, launch and recompute every call",
       "every call must still launch it and recompute every output"},
      {"specialise on proven invariants only",
       "Specialise only on facts that hold on every legal draw"},
      {"cache artifacts, not input-dependent results",
       "never a numerical result that depends on an input"},
      {"eager PyTorch for the rest", "eager PyTorch and plain Python for every remaining part"},
      {"own DSL kernel each call, an output depends on it",
       "at least one returned output tensor depends on a value that kernel computed or moved"},
      {"bypassing must not give valid outputs",
       "bypassing it and returning the eager result must not give the same valid outputs"},
      {"what does not count",
       "to route an already valid eager result through a copy, cast or layout change"},
      {"no DSL contribution scores 0", "is invalid and scores 0"},
      {"internal algorithm and precision may differ", "an internal algorithm and precision other"},
      {"no reference / make_inputs, reproducing allowed",
       "reproduce their logic in kernel.py and copy their constants"},
      {"no other kernel language or compiler", "torch.compile, torch.jit, Triton and raw CUDA"},
      {"no library DSL kernels", "kernels taken from a kernel library"},
      {"no CUDA Graphs", "CUDA Graphs (they remove launch overhead the eager baseline pays)"},
      {"no seeds, call order, timing phase", "depending on seeds, call order, the timing phase"},
      {"correctness draws, all must pass", "5 draws, each with fresh inputs from a secret seed"},
      {"integer outputs exact", "Integer and bool outputs must equal"},
      {"anchor tolerance", "max|out - anchor| <= 3 * max(max|expected - anchor|"},
      {"more accurate always passes", "more accurate than `expected` always passes"},
      {"discrete results: follow the order of operations",
       "follow the reference's order of operations"},
      {"timing procedure", "the whole device synchronised and the end event read"},
      {"warm-up and median", "After 10 warm-up calls, the median over 50 fresh draws"},
      {"eager baseline under reference numerics", "under the reference numerics (TF32 off"},
      {"uncapped speedup", "uncapped (1.0x is no ceiling)"},
      {"re-check on timing draws", "Outputs are checked again on 3 secretly chosen timing draws"},
      {"re-check of the fastest draws", "timing draws and on the 2 fastest; a divergence fails"},
      {"passed is not faster", "it does not by itself mean faster"},
      {"report contents", "the first mismatch (which output, what differs"},
      {"evaluation time limits", "the whole evaluation 1800 s"},
      {"counted submissions", "10 counted submissions"},
      {"not counted when never evaluated", "is returned with the reason and not counted"},
      {"time budget", "40 minutes of wall-clock"},
      {"final regrade of the file on disk",
       "a fresh regrade, with new seeds, of the `kernel.py` left on disk"},
      {"no bonus for finishing early; keep the best", "keep a copy of the best working version"},
      {"sandbox without GPU, CPU check",
       "calling your `solve` on the CPU tensors of the problem's small"},
      {"kernels in files", "define kernels in .py files, not in heredocs"},
      {"submission snapshot", "evaluates a snapshot of the current `kernel.py`"},
      {"same toolchain here and in the judge", "(the same versions here and in the judge)"},
      {"workflow: first candidate early", "before a quarter of the time has passed"},
      {"workflow: last five minutes", "In the last five minutes"},
      {"skill: kernel knowledge only", "It holds kernel knowledge only"},
      {"skill: concrete evidence", "Every conclusion rests on concrete evidence"},
      {"skill: no code or narratives", "compilation or debugging narratives, submission mechanics"},
      {"skill: update as you go", "Update it as you experiment"},
      {"skill: no heading", "no title or heading"},
  };
  for (const auto& [term, words] : kTerms) {
    INFO(term);
    CHECK(task.find(words) != std::string::npos);
  }
}

TEST_CASE("TASK.md shows scalar inputs as Python numbers, with a fixed value where there is one") {
  mkb::v1::Problem problem = Problem28();
  mkb::v1::TensorSpec* scale = problem.add_inputs();
  scale->set_name("sm_scale");
  scale->set_dtype(mkb::v1::FLOAT64);
  scale->set_scalar(true);
  scale->set_value(0.08838834764831843);
  mkb::v1::TensorSpec* offset = problem.add_inputs();
  offset->set_name("offset");
  offset->set_dtype(mkb::v1::INT64);
  offset->set_scalar(true);
  mkb::TaskSettings settings;
  settings.dsl = mkb::v1::CUTEDSL;
  const std::string task = mkb::RenderTask(problem, settings);
  for (const char* expected : {"| `sm_scale` | float | scalar | a Python float, not a tensor; "
                               "always 0.08838834764831843 |",
                               "| `offset` | int | scalar | a Python int, not a tensor |",
                               "scalar inputs (marked in the table) arrive as Python numbers"}) {
    INFO(expected);
    CHECK(task.find(expected) != std::string::npos);
  }
}

TEST_CASE("TASK.md gives a drawn parameter's range") {
  mkb::v1::Problem problem = Problem28();
  for (mkb::v1::Workload& workload : *problem.mutable_workloads()) {
    if (workload.name() == "full") (*workload.mutable_param_minimums())["num_tokens"] = 1000;
  }
  mkb::TaskSettings settings;
  settings.dsl = mkb::v1::CUTEDSL;
  settings.workload = "full";
  const std::string task = mkb::RenderTask(problem, settings);
  CHECK(task.find("- `num_tokens` = 1000..") != std::string::npos);
  CHECK(task.find("(drawn: it varies between draws)") != std::string::npos);
}

TEST_CASE("the scripted model's skills are prose, and name the pitfall it acts on") {
  mkb::ScriptedModel model;
  CHECK_FALSE(model.is_llm());
  CHECK(model.id() == "scripted/demo");
  // Walk its script on problem 28 until it writes SKILL.md.
  mkb::TaskSettings settings;
  settings.dsl = mkb::v1::CUTEDSL;
  mkb::ChatRequest request;
  request.messages.push_back(
      mkb::TextMessage(mkb::ChatRole::kUser, mkb::RenderTask(Problem28(), settings)));
  std::string skill_command;
  int submits = 0;
  for (int step = 0; step < 10; ++step) {
    auto response = model.Chat(request);
    REQUIRE(response.ok());
    REQUIRE(response->message.tool_calls.size() == 1);
    const mkb::ToolCall& call = response->message.tool_calls[0];
    request.messages.push_back(response->message);
    if (call.name == "submit") ++submits;
    if (call.name == "finish") break;
    const std::string command = nlohmann::json::parse(call.arguments_json).value("command", "");
    if (command.find("SKILL.md") != std::string::npos) skill_command = command;
  }
  CHECK(submits == 2);
  REQUIRE_FALSE(skill_command.empty());
  const std::string text = skill_command.substr(skill_command.find('\n') + 1);
  CHECK_FALSE(mkb::MakeSkill(text, 16384).flags().contains_code());
  CHECK(text.find("gain") != std::string::npos);
}

TEST_CASE("the agent's fingerprint salt follows what it tells every model") {
  const std::string salt = mkb::AgentFingerprintSalt();
  CHECK(salt ==
        "agent-instructions:" +
            mkb::Sha256Hex(mkb::SkillRules() + "\n" + mkb::kReceivedSkillHeader).substr(0, 16));
  CHECK(salt.size() == std::string("agent-instructions:").size() + 16);
}
