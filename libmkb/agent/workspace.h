// An attempt's workspace folder (SPEC §4): TASK.md, kernel.py, SKILL.md, and the DSL's guide
// under docs/ when one exists. The agent's shell may write only here.
#ifndef LIBMKB_AGENT_WORKSPACE_H_
#define LIBMKB_AGENT_WORKSPACE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mkb/v1/common.pb.h"

namespace mkb {

inline constexpr char kTaskFileName[] = "TASK.md";
inline constexpr char kKernelFileName[] = "kernel.py";
inline constexpr char kSkillFileName[] = "SKILL.md";

// kernel.py as an attempt starts: a placeholder that raises.
inline constexpr char kStarterKernel[] =
    "# kernel.py: replace this placeholder with your kernel (see TASK.md).\n"
    "# The judge imports this file and calls solve(*inputs) with what make_inputs() returns.\n"
    "\n"
    "\n"
    "def solve(*inputs):\n"
    "    raise NotImplementedError(\"kernel.py has not been written yet\")\n";

class Workspace {
 public:
  // Creates `dir` (parents included); it must not exist or be empty. Writes the placeholder
  // kernel.py and an empty SKILL.md.
  static absl::StatusOr<Workspace> Create(const std::string& dir);

  const std::string& dir() const { return dir_; }
  std::string PathOf(absl::string_view name) const;

  // Copies the DSL's guides from `guides_root`: <root>/<dsl>.md to docs/<dsl>.md and the
  // folder <root>/<dsl>/ to docs/<dsl>/, those that exist. Returns the workspace-relative
  // paths copied (none when `guides_root` is empty or holds nothing for the DSL).
  absl::StatusOr<std::vector<std::string>> CopyGuides(v1::Dsl dsl, const std::string& guides_root);

  absl::Status Write(absl::string_view name, absl::string_view contents) const;
  // The file's contents; "" when it does not exist; FailedPreconditionError when it is not a
  // regular file (a FIFO would block) or is a symbolic link (the agent's shell could point one
  // at a file it cannot see itself). Files over `max_bytes` are read up to max_bytes + 1
  // bytes, so that callers can tell them oversized (0: no limit).
  absl::StatusOr<std::string> Read(absl::string_view name, size_t max_bytes = 0) const;

 private:
  explicit Workspace(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace mkb

#endif  // LIBMKB_AGENT_WORKSPACE_H_
