#include "libmkb/agent/model_factory.h"

#include "libmkb/agent/anthropic_chat_model.h"
#include "libmkb/agent/model_id.h"
#include "libmkb/agent/openai_chat_model.h"
#include "libmkb/agent/scripted_model.h"

namespace mkb {

absl::StatusOr<std::unique_ptr<ChatModel>> MakeChatModel(absl::string_view model_id,
                                                         const ModelOptions& options) {
  absl::StatusOr<ModelId> id = ParseModelId(model_id);
  if (!id.ok()) return id.status();
  switch (id->provider) {
    case ModelProvider::kScripted:
      if (id->model == "demo-dsl") {
        return std::unique_ptr<ChatModel>(
            ScriptedModel::WithDslKernels(options.scripted_suite_root, options.native_tools));
      }
      return std::make_unique<ScriptedModel>(options.native_tools);
    case ModelProvider::kAnthropic: {
      auto model = AnthropicChatModel::Create(*id, options);
      if (!model.ok()) return model.status();
      return std::unique_ptr<ChatModel>(*std::move(model));
    }
    case ModelProvider::kOpenAi:
    case ModelProvider::kOpenAiCompatible: {
      auto model = OpenAiChatModel::Create(*id, options);
      if (!model.ok()) return model.status();
      return std::unique_ptr<ChatModel>(*std::move(model));
    }
  }
  return absl::InternalError("unhandled model provider");
}

ChatModelFactory DefaultModelFactory(ModelOptions options) {
  return [options = std::move(options)](const std::string& model_id) {
    return MakeChatModel(model_id, options);
  };
}

}  // namespace mkb
