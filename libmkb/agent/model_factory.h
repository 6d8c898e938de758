// Makes the ChatModel a model id names (libmkb/agent/model_id.h).
#ifndef LIBMKB_AGENT_MODEL_FACTORY_H_
#define LIBMKB_AGENT_MODEL_FACTORY_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libmkb/agent/chat.h"
#include "libmkb/agent/model_options.h"

namespace mkb {

// A fresh model for one attempt (a ChatModel serves one conversation at a time).
using ChatModelFactory =
    std::function<absl::StatusOr<std::unique_ptr<ChatModel>>(const std::string& model_id)>;

// openai/..., anthropic/..., openai-compatible/...@url or scripted/demo. InvalidArgumentError
// for a malformed id; FailedPreconditionError when the provider's key is not set.
absl::StatusOr<std::unique_ptr<ChatModel>> MakeChatModel(absl::string_view model_id,
                                                         const ModelOptions& options = {});

// A factory calling MakeChatModel with `options`.
ChatModelFactory DefaultModelFactory(ModelOptions options = {});

}  // namespace mkb

#endif  // LIBMKB_AGENT_MODEL_FACTORY_H_
