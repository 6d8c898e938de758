// The attempt's tools (SPEC §4): `bash`, `submit` and `finish`, as tool definitions for
// models with native tool calling.
#ifndef LIBMKB_AGENT_TOOLS_H_
#define LIBMKB_AGENT_TOOLS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libmkb/agent/chat.h"

namespace mkb {

inline constexpr char kBashTool[] = "bash";
inline constexpr char kSubmitTool[] = "submit";
inline constexpr char kFinishTool[] = "finish";

std::vector<ToolDefinition> AttemptTools();

// The "command" argument of a bash call. InvalidArgumentError (for the agent to read) when the
// arguments are not a JSON object with a string "command".
absl::StatusOr<std::string> BashCommand(const ToolCall& call);

}  // namespace mkb

#endif  // LIBMKB_AGENT_TOOLS_H_
