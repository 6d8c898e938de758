// Early-return helpers for absl::Status / absl::StatusOr.
#ifndef LIBMKB_CORE_STATUS_MACROS_H_
#define LIBMKB_CORE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns the status of `expr` from the enclosing function when it is not OK.
#define MKB_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::absl::Status mkb_status_ = (expr);       \
    if (!mkb_status_.ok()) return mkb_status_; \
  } while (false)

#define MKB_STATUS_CONCAT_INNER_(a, b) a##b
#define MKB_STATUS_CONCAT_(a, b) MKB_STATUS_CONCAT_INNER_(a, b)

// `MKB_ASSIGN_OR_RETURN(auto x, StatusOrExpr());` declares x from the value, or returns the
// error status from the enclosing function.
#define MKB_ASSIGN_OR_RETURN(lhs, expr) \
  MKB_ASSIGN_OR_RETURN_IMPL_(MKB_STATUS_CONCAT_(mkb_statusor_, __LINE__), lhs, expr)

#define MKB_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)    \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // LIBMKB_CORE_STATUS_MACROS_H_
