#include "libmkb/store/detail/usage_sum.h"

namespace mkb::store_detail {

void AddUsage(const v1::Usage& from, v1::Usage* to) {
  to->set_input_tokens(to->input_tokens() + from.input_tokens());
  to->set_cached_input_tokens(to->cached_input_tokens() + from.cached_input_tokens());
  to->set_cache_write_tokens(to->cache_write_tokens() + from.cache_write_tokens());
  to->set_output_tokens(to->output_tokens() + from.output_tokens());
  to->set_reasoning_tokens(to->reasoning_tokens() + from.reasoning_tokens());
  to->set_requests(to->requests() + from.requests());
  to->set_cost_usd(to->cost_usd() + from.cost_usd());
  to->set_agent_seconds(to->agent_seconds() + from.agent_seconds());
  to->set_gpu_queue_seconds(to->gpu_queue_seconds() + from.gpu_queue_seconds());
  to->set_llm_seconds(to->llm_seconds() + from.llm_seconds());
  to->set_tool_seconds(to->tool_seconds() + from.tool_seconds());
}

}  // namespace mkb::store_detail
