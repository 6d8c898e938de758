#include "libmkb/agent/submission_check.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_format.h"
#include "libmkb/core/utf8.h"
#include "libmkb/judge/verdict_builder.h"

namespace mkb {

std::optional<v1::Verdict> RefuseBeforeJudging(const v1::Problem& problem,
                                               const v1::EvaluationRequest& request) {
  VerdictBuilder builder(problem, request.dsl(), request.workload(),
                         WithDefaults(request.config()));
  const std::string& source = request.kernel_source();
  if (!builder.CheckSubmission(source)) return builder.Finish();
  const std::optional<size_t> invalid = FirstInvalidUtf8(source);
  if (!invalid.has_value()) return std::nullopt;
  const auto bad = source.begin() + static_cast<std::ptrdiff_t>(*invalid);
  const int line = 1 + static_cast<int>(std::count(source.begin(), bad, '\n'));
  builder.SetUnparseable(line,
                         absl::StrFormat("not UTF-8: byte 0x%02X at offset %d starts no valid "
                                         "sequence",
                                         static_cast<unsigned char>(*bad), *invalid));
  return builder.Finish();
}

}  // namespace mkb
