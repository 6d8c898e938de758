// Whole-file reads and atomic writes with errors that name the path.
#ifndef LIBMKB_CORE_FILE_H_
#define LIBMKB_CORE_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mkb {

// Reads `path`; NotFoundError / PermissionDeniedError / InternalError naming the path.
// Files over `max_bytes` give FailedPreconditionError (0: no limit).
absl::StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes = 0);

// Writes `contents` to a temporary file beside `path`, fsyncs it and renames it over `path`.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace mkb

#endif  // LIBMKB_CORE_FILE_H_
