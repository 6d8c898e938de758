#include "libmkb/agent/tools.h"

#include "absl/strings/str_cat.h"
#include "libmkb/agent/detail/json_util.h"

namespace mkb {

std::vector<ToolDefinition> AttemptTools() {
  return {
      {kBashTool,
       "Run one shell command (bash -c) in the workspace, inside a sandbox without GPU or "
       "network. Returns its output (stdout and stderr) and exit status. Each command starts "
       "afresh in the workspace; files persist. Write files with shell redirection or heredocs.",
       R"({"type":"object","properties":{"command":{"type":"string","description":"The command to run."}},"required":["command"]})"},
      {kSubmitTool,
       "Evaluate the current kernel.py on the judge. Returns the judge's report (correctness, "
       "timing, findings) with the submissions and minutes left.",
       R"({"type":"object","properties":{}})"},
      {kFinishTool,
       "End the attempt. The kernel.py left in the workspace is graded afresh, and SKILL.md is "
       "handed on as it stands.",
       R"({"type":"object","properties":{}})"},
  };
}

absl::StatusOr<std::string> BashCommand(const ToolCall& call) {
  const nlohmann::json args = detail::ParseJson(call.arguments_json);
  if (args.is_discarded() || !args.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("the arguments of bash are not a JSON object: ",
                                                   call.arguments_json.substr(0, 200)));
  }
  auto it = args.find("command");
  if (it == args.end() || !it->is_string()) {
    return absl::InvalidArgumentError("bash needs a string argument \"command\"");
  }
  return it->get<std::string>();
}

}  // namespace mkb
