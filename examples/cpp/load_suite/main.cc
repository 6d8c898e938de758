// Loads a problem suite with libmkb and prints one line per problem.
//
//   load_suite path/to/problems
#include <cstdio>

#include "libmkb/core/version.h"
#include "libmkb/model/names.h"
#include "libmkb/suite/suite.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SUITE_DIR\n", argv[0]);
    return 2;
  }
  absl::StatusOr<mkb::Suite> suite = mkb::Suite::Load(argv[1]);
  if (!suite.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(suite.status().message()).c_str());
    return 1;
  }
  std::printf("libmkb %s: %zu problems in %s\n", mkb::kVersion, suite->size(),
              suite->root().c_str());
  for (const mkb::v1::Problem& problem : suite->problems()) {
    mkb::v1::Workload full;
    for (const mkb::v1::Workload& workload : problem.workloads()) {
      if (workload.name() == "full") full = workload;
    }
    std::printf("%02d  %-60s %-16s %.3g flops %.3g bytes\n", problem.number(),
                problem.slug().c_str(), mkb::FamilyName(problem.family()).c_str(),
                full.roofline().flops(), full.roofline().min_bytes());
  }
  return 0;
}
