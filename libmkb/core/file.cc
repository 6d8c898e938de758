#include "libmkb/core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "libmkb/core/unique_fd.h"

namespace mkb {
namespace {

absl::Status ErrnoStatus(int err, absl::string_view what, const std::string& path) {
  const std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EISDIR:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) return ErrnoStatus(errno, "cannot stat", path);
  if (S_ISDIR(info.st_mode)) return ErrnoStatus(EISDIR, "cannot read", path);
  if (max_bytes > 0 && static_cast<size_t>(info.st_size) > max_bytes) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": ", info.st_size, " bytes is over the limit of ", max_bytes));
  }
  std::string contents;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot read", path);
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
    if (max_bytes > 0 && contents.size() > max_bytes) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": more than the limit of ", max_bytes, " bytes"));
    }
  }
  return contents;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  const std::string temporary = absl::StrCat(path, ".tmp.", ::getpid());
  {
    UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) return ErrnoStatus(errno, "cannot create", temporary);
    size_t written = 0;
    while (written < contents.size()) {
      const ssize_t n = ::write(fd.get(), contents.data() + written, contents.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::unlink(temporary.c_str());
        return ErrnoStatus(err, "cannot write", temporary);
      }
      written += static_cast<size_t>(n);
    }
    if (::fsync(fd.get()) != 0) {
      const int err = errno;
      ::unlink(temporary.c_str());
      return ErrnoStatus(err, "cannot fsync", temporary);
    }
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    return ErrnoStatus(err, "cannot rename onto", path);
  }
  return absl::OkStatus();
}

}  // namespace mkb
