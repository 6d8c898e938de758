// The text protocol for models without tool calling: the model ends its reply with one action,
//
//   <bash>
//   ls -la
//   </bash>          or   <submit/>   or   <finish/>
//
// and reads each result in the next user message, inside <output tool="..."> ... </output>.
#ifndef LIBMKB_AGENT_TEXT_PROTOCOL_H_
#define LIBMKB_AGENT_TEXT_PROTOCOL_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "libmkb/agent/chat.h"

namespace mkb {

// What the model is told about the protocol (appended to the system prompt).
std::string TextProtocolInstructions();

// The first action in `reply`, as a tool call (id "text-<n>"); nullopt when there is none.
// A <bash> block without its closing tag runs to the end of the reply.
std::optional<ToolCall> ParseTextAction(absl::string_view reply, int call_number);

// A tool's result as the model reads it.
std::string FormatTextObservation(absl::string_view tool, absl::string_view result);

// The reminder sent when a reply holds no action.
std::string TextProtocolReminder();

}  // namespace mkb

#endif  // LIBMKB_AGENT_TEXT_PROTOCOL_H_
