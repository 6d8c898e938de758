// Model ids: which API (or built-in stand-in) serves a model, and where.
//
//   openai/<model>                       OpenAI Chat Completions, key OPENAI_API_KEY
//                                        (base URL: OPENAI_BASE_URL, else api.openai.com/v1)
//   anthropic/<model>                    Anthropic Messages, key ANTHROPIC_API_KEY
//                                        (base URL: ANTHROPIC_BASE_URL, else api.anthropic.com)
//   openai-compatible/<model>@<base_url> any Chat Completions server: vLLM, SGLang, llama.cpp,
//                                        LiteLLM, OpenRouter; key (optional) from
//                                        OPENAI_COMPATIBLE_API_KEY, or OPENROUTER_API_KEY for
//                                        openrouter.ai
//   scripted/demo                        the built-in scripted model (not an LLM)
//
// <model> may contain '/' ("openai-compatible/meta-llama/Llama-3.1-8B@http://h:8000/v1"); the
// base URL starts at the first "@http://" or "@https://".
#ifndef LIBMKB_AGENT_MODEL_ID_H_
#define LIBMKB_AGENT_MODEL_ID_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mkb {

enum class ModelProvider { kOpenAi, kAnthropic, kOpenAiCompatible, kScripted };

// "openai", "anthropic", "openai-compatible", "scripted".
absl::string_view ModelProviderName(ModelProvider provider);

struct ModelId {
  ModelProvider provider = ModelProvider::kOpenAi;
  std::string model;     // the name the API knows ("gpt-5", "claude-sonnet-4-5")
  std::string base_url;  // openai-compatible only; no trailing '/'
  std::string text;      // the whole id, as given
};

// InvalidArgumentError naming what is wrong and listing the accepted forms.
absl::StatusOr<ModelId> ParseModelId(absl::string_view id);

}  // namespace mkb

#endif  // LIBMKB_AGENT_MODEL_ID_H_
