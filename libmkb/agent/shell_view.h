// What the agent's shell sees of the host during one attempt (SPEC §4; docs/agent.md, "What the
// shell sees"). An allow-list, on top of the system's folders that ShellSandbox always shows:
//  - the judge's Python where it lives (its virtual environment, its base installation, the
//    folders on its sys.path: an editable checkout's python/), so that `python`, torch and
//    `mkb` work -- wherever the checkout is, /tmp included;
//  - of the metakernelbench package, everything but the judge's internals (of judge/, only
//    __init__.py, which `import metakernelbench` needs) and the suite copy it may ship
//    (problems/, with reference solutions);
//  - the variant's DSL site folders, at kShellDslHome/<dsl> (the shell's MKB_DSL_HOME and
//    PYTHONPATH); never the other DSL's;
//  - the problem's problem.textproto and reference.py (TASK.md shows both), alone in a suite at
//    kShellSuiteRoot (the shell's MKB_SUITE), so that `mkb check` finds the problem and
//    nothing else of the suite;
//  - and `private_paths` (the workspace root, the results store) hidden wherever a mount
//    would hold them.
#ifndef LIBMKB_AGENT_SHELL_VIEW_H_
#define LIBMKB_AGENT_SHELL_VIEW_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libmkb/agent/shell_sandbox.h"
#include "mkb/v1/common.pb.h"
#include "mkb/v1/problem.pb.h"

namespace mkb {

inline constexpr char kShellSuiteRoot[] = "/mkb/suite";
inline constexpr char kShellDslHome[] = "/mkb/dsl";

// Where a Python interpreter and the metakernelbench package live, as that interpreter says.
struct PythonLayout {
  std::string interpreter;  // absolute, as given or found on PATH (not resolved: a venv's
                            // python is a link out of the venv); its folder leads the PATH
  // Folders it needs outside the system's: its prefix (a venv), its base installation, the
  // sys.path entries, each also as its resolved path (a venv reached through a link has
  // scripts whose #! line names the resolved one); none inside another.
  std::vector<std::string> roots;
  std::vector<std::string> package_dirs;  // metakernelbench's package folders
};

// Asks `python` (a path, or a name on PATH) where it lives: runs it once with -E -s (no
// PYTHON* variables, no user site: as the shell runs it, whose HOME is the workspace).
// NotFoundError when there is no such interpreter; FailedPreconditionError with its output
// when it does not answer.
absl::StatusOr<PythonLayout> ProbePython(const std::string& python);

struct ShellView {
  std::optional<PythonLayout> python;            // none: the system's Python only
  std::vector<std::string> dsl_site_dirs;        // the variant's; the first is its site folder
  std::vector<std::string> other_dsl_site_dirs;  // hidden where a mount holds them
  std::vector<std::string> private_paths;        // hidden where a mount holds them
};

// Adds to `options` the view of an attempt at `problem` in `dsl`: read_only mounts,
// hidden_paths and the environment (PATH with the judge's Python first, PYTHONPATH with the
// DSL, MKB_DSL, MKB_DSL_HOME, MKB_SUITE, and MKB_TARGET_ARCH from a `target` that ends in
// "(sm_XX...)", the judge's GPU, so that `mkb check` compiles for it). `isolated`: false for
// a sandbox that runs commands unisolated (ShellSandbox::isolated()), which mounts nothing:
// the variables then name the host's own paths (the DSL's site folders, the suite's root).
void AddShellView(const ShellView& view, const v1::Problem& problem, v1::Dsl dsl,
                  absl::string_view target, bool isolated, ShellSandboxOptions* options);

// "sm_90a" of "NVIDIA H200 (sm_90a)"; "" when the target names no architecture.
std::string TargetArch(absl::string_view target);

}  // namespace mkb

#endif  // LIBMKB_AGENT_SHELL_VIEW_H_
