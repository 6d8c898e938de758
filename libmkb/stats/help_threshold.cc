#include "libmkb/stats/help_threshold.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "libmkb/stats/outcome.h"

namespace mkb::stats {

double DefaultTau() { return std::log(1.05); }

v1::TauEstimate EstimateTau(absl::Span<const AttemptRecord> attempts,
                            const v1::StatsConfig& config) {
  v1::TauEstimate out;
  out.set_min_pairs(kMinTauPairs);
  // q of each passed solo replicate, per (model, arm, problem).
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> replicates;
  for (const AttemptRecord& attempt : attempts) {
    if (attempt.role == Role::kSkill || !attempt.result->resolved()) continue;
    const ArmOutcome outcome = OutcomeOf(*attempt.result, config);
    if (!outcome.passed) continue;
    replicates[{attempt.model, attempt.arm, attempt.problem_slug}].push_back(outcome.q);
  }
  std::vector<double> spreads;
  for (const auto& [key, q] : replicates) {
    for (size_t i = 0; i < q.size(); ++i) {
      for (size_t j = i + 1; j < q.size(); ++j) spreads.push_back(std::fabs(q[i] - q[j]));
    }
  }
  out.set_pairs(static_cast<int>(spreads.size()));
  if (config.tau() > 0) {
    out.set_tau(config.tau());
    out.set_source("config");
  } else if (static_cast<int>(spreads.size()) >= kMinTauPairs) {
    std::sort(spreads.begin(), spreads.end());
    const size_t m = spreads.size();
    out.set_tau(m % 2 == 1 ? spreads[m / 2] : (spreads[m / 2 - 1] + spreads[m / 2]) / 2);
    out.set_source("replicate_spread");
  } else {
    out.set_tau(DefaultTau());
    out.set_source("default");
  }
  return out;
}

}  // namespace mkb::stats
