// Wall-clock time as the stores and the protocol record it.
#ifndef LIBMKB_CORE_CLOCK_H_
#define LIBMKB_CORE_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace mkb {

// Seconds since the Unix epoch, now (what every *_unix field of the store holds).
inline double NowUnix() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

}  // namespace mkb

#endif  // LIBMKB_CORE_CLOCK_H_
