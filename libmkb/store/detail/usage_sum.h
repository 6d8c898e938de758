// Summing usage reports (of several tries of a trial).
#ifndef LIBMKB_STORE_DETAIL_USAGE_SUM_H_
#define LIBMKB_STORE_DETAIL_USAGE_SUM_H_

#include "mkb/v1/attempt.pb.h"

namespace mkb::store_detail {

// Adds each count, cost and duration of `from` to `to`'s.
void AddUsage(const v1::Usage& from, v1::Usage* to);

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_USAGE_SUM_H_
