// The report an agent (or a person) reads after an evaluation: the verdict in words, without
// seeds or judge internals.
#ifndef LIBMKB_JUDGE_REPORT_H_
#define LIBMKB_JUDGE_REPORT_H_

#include <string>

#include "mkb/v1/verdict.pb.h"

namespace mkb {

struct ReportOptions {
  int max_tail_lines = 30;  // of stdout / stderr each
  int max_traceback_lines = 40;
  bool show_environment = true;
};

std::string RenderReport(const v1::Verdict& verdict, const ReportOptions& options = {});

}  // namespace mkb

#endif  // LIBMKB_JUDGE_REPORT_H_
