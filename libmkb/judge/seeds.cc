#include "libmkb/judge/seeds.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace mkb {

absl::StatusOr<std::vector<uint64_t>> DrawSeeds(int count) {
  if (count < 0) return absl::InvalidArgumentError("count: must be >= 0");
  std::vector<uint64_t> seeds(static_cast<size_t>(count));
  size_t filled = 0;
  const size_t bytes = seeds.size() * sizeof(uint64_t);
  auto* out = reinterpret_cast<char*>(seeds.data());
  while (filled < bytes) {
    const ssize_t n = ::getrandom(out + filled, bytes - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("getrandom: ", std::strerror(errno)));
    }
    filled += static_cast<size_t>(n);
  }
  for (uint64_t& seed : seeds)
    seed >>= 1;  // 63 bits: torch.manual_seed takes a signed 64-bit value
  return seeds;
}

}  // namespace mkb
