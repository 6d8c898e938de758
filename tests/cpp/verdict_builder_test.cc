#include "libmkb/judge/verdict_builder.h"

#include <catch2/catch_test_macros.hpp>

namespace {

mkb::v1::Problem Problem() {
  mkb::v1::Problem p;
  p.set_slug("toy");
  p.set_fingerprint("f");
  return p;
}

mkb::v1::DrawCheck Draw(mkb::v1::JudgePhase phase, int index, bool passed) {
  mkb::v1::DrawCheck d;
  d.set_phase(phase);
  d.set_index(index);
  d.set_passed(passed);
  d.set_inputs_unmodified(true);
  return d;
}

mkb::v1::JudgeConfig Config(int draws = 2) {
  mkb::v1::JudgeConfig c;
  c.set_correctness_draws(draws);
  return c;
}

}  // namespace

TEST_CASE("all draws correct and timed: passed, with the speedup") {
  mkb::VerdictBuilder b(Problem(), mkb::v1::CUTEDSL, "small", Config());
  REQUIRE(b.CheckSubmission("def solve(x): return x\n"));
  b.SetImport(true, "", "");
  b.RecordDraw(Draw(mkb::v1::PHASE_CORRECTNESS, 0, true), std::nullopt);
  b.RecordDraw(Draw(mkb::v1::PHASE_CORRECTNESS, 1, true), std::nullopt);
  b.SetParityTiming({1.0, 1.0, 2.0}, {3.0, 3.0, 3.0}, "parity_e2e");
  auto v = b.Finish();
  CHECK(v.status() == mkb::v1::PASSED);
  CHECK(v.passed());
  CHECK(v.correct());
  CHECK(v.correct_draws() == 2);
  REQUIRE(v.has_speedup_vs_eager());
  CHECK(v.speedup_vs_eager() == 3.0);
  CHECK(v.kernel_sha256().size() == 64);
}

TEST_CASE("timed calls of no time are never a pass with the speedup left out") {
  mkb::VerdictBuilder b(Problem(), mkb::v1::CUTEDSL, "small", Config());
  REQUIRE(b.CheckSubmission("def solve(x): return x\n"));
  b.SetImport(true, "", "");
  b.RecordDraw(Draw(mkb::v1::PHASE_CORRECTNESS, 0, true), std::nullopt);
  b.RecordDraw(Draw(mkb::v1::PHASE_CORRECTNESS, 1, true), std::nullopt);
  b.SetParityTiming({0.0, 0.0, 0.0}, {3.0, 3.0, 3.0}, "host_clock");
  auto v = b.Finish();
  CHECK(v.status() == mkb::v1::POLICY_VIOLATION);
  CHECK_FALSE(v.passed());
  CHECK_FALSE(v.has_speedup_vs_eager());

  mkb::VerdictBuilder e(Problem(), mkb::v1::CUTEDSL, "small", Config(1));
  REQUIRE(e.CheckSubmission("def solve(x): return x\n"));
  e.SetImport(true, "", "");
  e.RecordDraw(Draw(mkb::v1::PHASE_CORRECTNESS, 0, true), std::nullopt);
  e.SetParityTiming({1.0}, {0.0}, "host_clock");
  CHECK(e.Finish().status() == mkb::v1::INFRA_ERROR);  // the baseline is the judge's
}

TEST_CASE("correct but not timed is not passed") {
  mkb::VerdictBuilder b(Problem(), mkb::v1::TIRX, "small", Config(1));
  REQUIRE(b.CheckSubmission("x = 1\n"));
  b.SetImport(true, "", "");
  b.RecordDraw(Draw(mkb::v1::PHASE_CORRECTNESS, 0, true), std::nullopt);
  auto v = b.Finish();
  CHECK(v.status() == mkb::v1::CORRECT);
  CHECK_FALSE(v.passed());
  CHECK_FALSE(v.has_speedup_vs_eager());
}

TEST_CASE("the first failure decides; a re-check failure is a divergence") {
  mkb::VerdictBuilder b(Problem(), mkb::v1::CUTEDSL, "small", Config());
  REQUIRE(b.CheckSubmission("x = 1\n"));
  b.SetImport(true, "", "");
  b.RecordDraw(Draw(mkb::v1::PHASE_CORRECTNESS, 0, true), std::nullopt);
  b.RecordDraw(Draw(mkb::v1::PHASE_CORRECTNESS, 1, true), std::nullopt);
  mkb::v1::Mismatch m;
  m.set_message("out: off");
  b.RecordDraw(Draw(mkb::v1::PHASE_TIMING_RECHECK, 7, false), m);
  b.SetParityTiming({1.0}, {1.0}, "parity_e2e");
  auto v = b.Finish();
  CHECK(v.status() == mkb::v1::DIVERGENCE);
  CHECK_FALSE(v.passed());
  CHECK_FALSE(v.correct());
  CHECK(v.first_mismatch().message() == "out: off");
}

TEST_CASE("an exception on a draw, then later mismatches: the exception is reported") {
  mkb::VerdictBuilder b(Problem(), mkb::v1::CUTEDSL, "small", Config(3));
  REQUIRE(b.CheckSubmission("x = 1\n"));
  b.SetImport(true, "", "");
  b.RecordCallError(mkb::v1::PHASE_CORRECTNESS, 0, "ValueError",
                    "Traceback...\nValueError: bad shape\n");
  b.RecordDraw(Draw(mkb::v1::PHASE_CORRECTNESS, 1, false), std::nullopt);
  auto v = b.Finish();
  CHECK(v.status() == mkb::v1::EXCEPTION);
  CHECK(v.message().find("ValueError: bad shape") != std::string::npos);
}

TEST_CASE("violations outrank everything but invalid submissions") {
  mkb::VerdictBuilder b(Problem(), mkb::v1::CUTEDSL, "small", Config());
  REQUIRE(b.CheckSubmission("import triton\n"));
  mkb::v1::AuditFinding f;
  f.set_code("static.forbidden_import");
  f.set_severity(mkb::v1::SEVERITY_VIOLATION);
  f.set_message("import of triton");
  b.AddFindings({f});
  CHECK_FALSE(b.CanContinue());
  auto v = b.Finish();
  CHECK(v.status() == mkb::v1::POLICY_VIOLATION);
  CHECK(v.message().find("triton") != std::string::npos);
}

TEST_CASE("invalid submissions") {
  mkb::v1::JudgeConfig small;
  small.set_max_kernel_bytes(10);
  mkb::VerdictBuilder oversized(Problem(), mkb::v1::CUTEDSL, "small", small);
  CHECK_FALSE(oversized.CheckSubmission("x = 1234567890\n"));
  CHECK(oversized.Finish().status() == mkb::v1::INVALID_SUBMISSION);
  mkb::VerdictBuilder empty(Problem(), mkb::v1::CUTEDSL, "small", Config());
  CHECK_FALSE(empty.CheckSubmission("  \n"));
  mkb::VerdictBuilder binary(Problem(), mkb::v1::CUTEDSL, "small", Config());
  CHECK_FALSE(binary.CheckSubmission(std::string("x = '\xff\xfe'\n")));
  mkb::VerdictBuilder unparseable(Problem(), mkb::v1::CUTEDSL, "small", Config());
  REQUIRE(unparseable.CheckSubmission("def f(\n"));
  unparseable.SetUnparseable(1, "'(' was never closed");
  auto v = unparseable.Finish();
  CHECK(v.status() == mkb::v1::INVALID_SUBMISSION);
  CHECK(v.message().find("line 1") != std::string::npos);
}

TEST_CASE("a lost worker is a timeout or a crash") {
  mkb::VerdictBuilder b(Problem(), mkb::v1::CUTEDSL, "small", Config());
  REQUIRE(b.CheckSubmission("x = 1\n"));
  b.SetImport(true, "", "");
  b.RecordWorkerLost(mkb::v1::PHASE_CORRECTNESS, 0, "no answer within 5 s");
  mkb::v1::ProcessOutcome timed_out;
  timed_out.set_timed_out(true);
  b.SetProcessOutcome(timed_out);
  CHECK(b.Finish().status() == mkb::v1::TIMEOUT);

  mkb::VerdictBuilder c(Problem(), mkb::v1::CUTEDSL, "small", Config());
  REQUIRE(c.CheckSubmission("x = 1\n"));
  c.SetImport(true, "", "");
  c.RecordWorkerLost(mkb::v1::PHASE_CORRECTNESS, 0, "the worker died");
  mkb::v1::ProcessOutcome killed;
  killed.set_signal(11);
  killed.set_signal_name("SIGSEGV");
  c.SetProcessOutcome(killed);
  auto v = c.Finish();
  CHECK(v.status() == mkb::v1::CRASH);
  CHECK(v.message().find("SIGSEGV") != std::string::npos);
}

TEST_CASE("a draw that left one of the problem's outputs uncompared is a mismatch naming it") {
  mkb::v1::Problem two = Problem();
  two.set_output_container(mkb::v1::TUPLE);
  two.add_outputs()->set_name("out");
  two.add_outputs()->set_name("lse");
  auto checked = [](std::initializer_list<const char*> paths) {
    mkb::v1::DrawCheck d = Draw(mkb::v1::PHASE_CORRECTNESS, 0, true);
    for (const char* path : paths) {
      mkb::v1::TensorCheck* t = d.add_tensors();
      t->set_output_path(path);
      t->set_passed(true);
    }
    return d;
  };

  // What a host that dropped the leaves without data sent: nothing compared, "passed".
  mkb::VerdictBuilder none(two, mkb::v1::CUTEDSL, "small", Config(1));
  REQUIRE(none.CheckSubmission("x = 1\n"));
  none.SetImport(true, "", "");
  CHECK_FALSE(none.RecordDraw(checked({}), std::nullopt));
  none.SetParityTiming({1.0}, {1.0}, "host_clock");
  auto v = none.Finish();
  CHECK(v.status() == mkb::v1::MISMATCH);
  CHECK(v.correct_draws() == 0);
  CHECK_FALSE(v.draws(0).passed());
  CHECK(v.first_mismatch().output_path() == "out[0]");
  CHECK(v.first_mismatch().kind() == mkb::v1::MISMATCH_STRUCTURE);

  // One of two compared; and two checks of the same output are not one of each.
  mkb::VerdictBuilder one(two, mkb::v1::CUTEDSL, "small", Config(1));
  CHECK_FALSE(one.RecordDraw(checked({"out[0]"}), std::nullopt));
  CHECK(one.Finish().first_mismatch().output_path() == "out[1]");
  mkb::VerdictBuilder twice(two, mkb::v1::CUTEDSL, "small", Config(1));
  CHECK_FALSE(twice.RecordDraw(checked({"out[0]", "out[0]"}), std::nullopt));

  // Every output compared: the draw passes.
  mkb::VerdictBuilder both(two, mkb::v1::CUTEDSL, "small", Config(1));
  CHECK(both.RecordDraw(checked({"out[0]", "out[1]"}), std::nullopt));
  mkb::v1::Problem single = Problem();
  single.set_output_container(mkb::v1::SINGLE_TENSOR);
  single.add_outputs()->set_name("out");
  mkb::VerdictBuilder bare(single, mkb::v1::CUTEDSL, "small", Config(1));
  CHECK(bare.RecordDraw(checked({"out"}), std::nullopt));
  CHECK_FALSE(bare.RecordDraw(checked({}), std::nullopt));
}

TEST_CASE(
    "an import error's message ends with the exception's own line, however long the traceback") {
  const std::string frames(400, 'x');  // a long source line of kernel.py's, quoted in a frame
  mkb::VerdictBuilder b(Problem(), mkb::v1::CUTEDSL, "small", Config());
  REQUIRE(b.CheckSubmission("import nothing_here\n"));
  b.SetImport(
      false, "ModuleNotFoundError",
      "Traceback (most recent call last):\n  File \"kernel.py\", line 1, in <module>\n    " +
          frames + "\nModuleNotFoundError: No module named 'nothing_here'\n");
  auto v = b.Finish();
  CHECK(v.status() == mkb::v1::IMPORT_ERROR);
  CHECK(v.message() == "import error: ModuleNotFoundError: No module named 'nothing_here'");
  CHECK(v.process().traceback().find(frames) != std::string::npos);  // the whole traceback kept

  // A bare message (no traceback) is named by its type.
  mkb::VerdictBuilder c(Problem(), mkb::v1::CUTEDSL, "small", Config());
  REQUIRE(c.CheckSubmission("x = 1\n"));
  c.SetImport(false, "ImportError", "kernel.py defines no callable solve(*inputs)");
  CHECK(c.Finish().message() ==
        "import error: ImportError: kernel.py defines no callable solve(*inputs)");
}
