// The judge's submission checks, made before a kernel is sent to the judge: a kernel.py that
// never reaches evaluation is refused here, with the judge's own message, so that it costs no
// evaluation, is never counted, and never fails the judge host (SPEC §4: "one that never
// reaches evaluation -- empty, unparseable, oversized -- is not counted").
#ifndef LIBMKB_AGENT_SUBMISSION_CHECK_H_
#define LIBMKB_AGENT_SUBMISSION_CHECK_H_

#include <optional>

#include "mkb/v1/judge.pb.h"
#include "mkb/v1/problem.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

// The INVALID_SUBMISSION verdict the judge gives `request.kernel_source()` without evaluating
// it, or nullopt when it must be judged. Checked: the judge's VerdictBuilder::CheckSubmission
// (empty, over max_kernel_bytes, not UTF-8, NUL bytes; its message), then strict UTF-8
// (core/utf8.h): a source that the judge's check lets through but that Python's parser and
// protobuf's string fields reject could not even reach the judge host (the request would not
// parse there); it is refused as a kernel.py that does not parse, at the line of its first bad
// byte. Parsing the Python itself is the judge's (its message is the same VerdictBuilder's).
std::optional<v1::Verdict> RefuseBeforeJudging(const v1::Problem& problem,
                                               const v1::EvaluationRequest& request);

}  // namespace mkb

#endif  // LIBMKB_AGENT_SUBMISSION_CHECK_H_
