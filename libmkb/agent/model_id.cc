#include "libmkb/agent/model_id.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace mkb {
namespace {

constexpr char kForms[] =
    "expected openai/<model>, anthropic/<model>, openai-compatible/<model>@<base_url>, "
    "scripted/demo or scripted/demo-dsl";

absl::Status Bad(absl::string_view id, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("model id '", id, "': ", why, " (", kForms, ")"));
}

}  // namespace

absl::string_view ModelProviderName(ModelProvider provider) {
  switch (provider) {
    case ModelProvider::kOpenAi:
      return "openai";
    case ModelProvider::kAnthropic:
      return "anthropic";
    case ModelProvider::kOpenAiCompatible:
      return "openai-compatible";
    case ModelProvider::kScripted:
      return "scripted";
  }
  return "openai";
}

absl::StatusOr<ModelId> ParseModelId(absl::string_view id) {
  ModelId out;
  out.text = std::string(id);
  const size_t slash = id.find('/');
  if (slash == absl::string_view::npos) return Bad(id, "no provider prefix");
  const absl::string_view provider = id.substr(0, slash);
  absl::string_view rest = id.substr(slash + 1);
  if (provider == "openai") {
    out.provider = ModelProvider::kOpenAi;
  } else if (provider == "anthropic") {
    out.provider = ModelProvider::kAnthropic;
  } else if (provider == "openai-compatible") {
    out.provider = ModelProvider::kOpenAiCompatible;
  } else if (provider == "scripted") {
    out.provider = ModelProvider::kScripted;
  } else {
    return Bad(id, absl::StrCat("unknown provider '", provider, "'"));
  }
  if (out.provider == ModelProvider::kOpenAiCompatible) {
    size_t at = rest.find("@http://");
    if (at == absl::string_view::npos) at = rest.find("@https://");
    if (at == absl::string_view::npos) {
      return Bad(id, "openai-compatible needs a base URL after '@' (http:// or https://)");
    }
    absl::string_view url = rest.substr(at + 1);
    while (absl::ConsumeSuffix(&url, "/")) {
    }
    if (url == "http:" || url == "https:" || absl::EndsWith(url, "//")) {
      return Bad(id, "the base URL has no host");
    }
    out.base_url = std::string(url);
    rest = rest.substr(0, at);
  }
  if (rest.empty()) return Bad(id, "no model name after the provider");
  if (out.provider == ModelProvider::kScripted && rest != "demo" && rest != "demo-dsl") {
    return Bad(id, absl::StrCat("the scripted models are scripted/demo and scripted/demo-dsl, not "
                                "scripted/",
                                rest));
  }
  out.model = std::string(rest);
  return out;
}

}  // namespace mkb
