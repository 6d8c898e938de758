// How a model client is set up: keys, endpoints, timeouts, retries and request extras.
#ifndef LIBMKB_AGENT_MODEL_OPTIONS_H_
#define LIBMKB_AGENT_MODEL_OPTIONS_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "libmkb/agent/retry_policy.h"

namespace mkb {

struct ModelOptions {
  // The API key; empty: read from the provider's environment variable (libmkb/agent/model_id.h).
  std::string api_key;
  // Overrides the provider's base URL (and the one in an openai-compatible id).
  std::string base_url;
  absl::Duration request_timeout = absl::Seconds(600);  // one HTTP exchange
  absl::Duration connect_timeout = absl::Seconds(30);
  RetryPolicy retry;
  // Output token cap per request; 0: the provider's default (Anthropic needs one: 16000 then;
  // Chat Completions servers use their own).
  int max_output_tokens = 0;
  // A JSON object merged into every request body, e.g. {"reasoning_effort": "high"} or
  // {"temperature": 0.2}; its keys win over ours.
  std::string extra_body_json;
  std::vector<std::string> extra_headers;  // "Name: value"
  bool prompt_caching = true;  // Anthropic: cache_control breakpoints on the system prompt and
                               // the latest turn
  // false: the model gets no tool definitions and acts through the text protocol.
  bool native_tools = true;
  // scripted/demo-dsl: the suite whose shipped solutions it writes (AgentTrialExecutor sets
  // its suite here when this is empty).
  std::string scripted_suite_root;
};

}  // namespace mkb

#endif  // LIBMKB_AGENT_MODEL_OPTIONS_H_
