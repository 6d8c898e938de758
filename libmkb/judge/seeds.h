// Secret seeds of the judge's draws (SPEC §3): 63-bit values from the OS entropy source.
#ifndef LIBMKB_JUDGE_SEEDS_H_
#define LIBMKB_JUDGE_SEEDS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace mkb {

// `count` seeds from getrandom(2), each in [0, 2^63). Distinct with overwhelming probability.
absl::StatusOr<std::vector<uint64_t>> DrawSeeds(int count);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_SEEDS_H_
