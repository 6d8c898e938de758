#include "libmkb/agent/text_protocol.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libmkb/agent/tools.h"

namespace mkb {

std::string TextProtocolInstructions() {
  return "You act by ending each reply with exactly one action, written as one of:\n\n"
         "<bash>\nCOMMAND\n</bash>\n\n"
         "<submit/>\n\n"
         "<finish/>\n\n"
         "`bash` runs COMMAND in the workspace sandbox, `submit` evaluates kernel.py, `finish` "
         "ends the attempt. The result comes back in the next message inside "
         "<output tool=\"...\"> ... </output>. Write files with heredocs, e.g.\n"
         "<bash>\ncat > kernel.py <<'EOF'\n...\nEOF\n</bash>\n";
}

std::optional<ToolCall> ParseTextAction(absl::string_view reply, int call_number) {
  struct Candidate {
    size_t at;
    const char* tool;
  };
  const size_t bash = reply.find("<bash>");
  size_t submit = reply.find("<submit/>");
  if (submit == absl::string_view::npos) submit = reply.find("<submit>");
  size_t finish = reply.find("<finish/>");
  if (finish == absl::string_view::npos) finish = reply.find("<finish>");
  Candidate first{absl::string_view::npos, nullptr};
  for (Candidate c : {Candidate{bash, kBashTool}, Candidate{submit, kSubmitTool},
                      Candidate{finish, kFinishTool}}) {
    if (c.at != absl::string_view::npos && c.at < first.at) first = c;
  }
  if (first.tool == nullptr) return std::nullopt;
  ToolCall call;
  call.id = absl::StrCat("text-", call_number);
  call.name = first.tool;
  call.arguments_json = "{}";
  if (absl::string_view(first.tool) == kBashTool) {
    absl::string_view body = reply.substr(bash + 6);
    const size_t close = body.find("</bash>");
    if (close != absl::string_view::npos) body = body.substr(0, close);
    absl::ConsumePrefix(&body, "\n");
    absl::ConsumeSuffix(&body, "\n");
    call.arguments_json = nlohmann::json{{"command", std::string(body)}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return call;
}

std::string FormatTextObservation(absl::string_view tool, absl::string_view result) {
  return absl::StrCat("<output tool=\"", tool, "\">\n", result,
                      result.empty() || result.back() == '\n' ? "" : "\n", "</output>");
}

std::string TextProtocolReminder() {
  return "Your reply held no action. End every reply with exactly one of <bash>COMMAND</bash>, "
         "<submit/> or <finish/>.";
}

}  // namespace mkb
