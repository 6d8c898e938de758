#include "libmkb/agent/workspace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "libmkb/core/file.h"
#include "libmkb/core/unique_fd.h"
#include "libmkb/model/names.h"

namespace mkb {
namespace {
namespace fs = std::filesystem;
}  // namespace

absl::StatusOr<Workspace> Workspace::Create(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("workspace: a directory is required");
  std::error_code error;
  if (fs::exists(dir, error) && !fs::is_empty(dir, error)) {
    return absl::AlreadyExistsError(absl::StrCat("workspace: '", dir, "' exists and is not empty"));
  }
  fs::create_directories(dir, error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrCat("workspace: cannot create '", dir, "': ", error.message()));
  }
  const fs::path absolute = fs::canonical(dir, error);
  Workspace workspace(error ? dir : absolute.string());
  if (auto s = workspace.Write(kKernelFileName, kStarterKernel); !s.ok()) return s;
  if (auto s = workspace.Write(kSkillFileName, ""); !s.ok()) return s;
  return workspace;
}

std::string Workspace::PathOf(absl::string_view name) const {
  return absl::StrCat(dir_, "/", name);
}

absl::StatusOr<std::vector<std::string>> Workspace::CopyGuides(v1::Dsl dsl,
                                                               const std::string& guides_root) {
  std::vector<std::string> copied;
  if (guides_root.empty()) return copied;
  const std::string name = DslName(dsl);
  std::error_code error;
  const fs::path file = fs::path(guides_root) / (name + ".md");
  const fs::path folder = fs::path(guides_root) / name;
  if (fs::is_regular_file(file, error) || fs::is_directory(folder, error)) {
    fs::create_directories(PathOf("docs"), error);
  }
  if (fs::is_regular_file(file, error)) {
    fs::copy_file(file, PathOf("docs/" + name + ".md"), fs::copy_options::overwrite_existing,
                  error);
    if (error) {
      return absl::InternalError(absl::StrCat("copying ", file.string(), ": ", error.message()));
    }
    copied.push_back("docs/" + name + ".md");
  }
  if (fs::is_directory(folder, error)) {
    fs::copy(folder, PathOf("docs/" + name),
             fs::copy_options::recursive | fs::copy_options::overwrite_existing, error);
    if (error) {
      return absl::InternalError(absl::StrCat("copying ", folder.string(), ": ", error.message()));
    }
    copied.push_back("docs/" + name + "/");
  }
  return copied;
}

absl::Status Workspace::Write(absl::string_view name, absl::string_view contents) const {
  return WriteFileAtomically(PathOf(name), contents);
}

absl::StatusOr<std::string> Workspace::Read(absl::string_view name, size_t max_bytes) const {
  const std::string path = PathOf(name);
  // O_NOFOLLOW: a link the agent made must not make this process (which sees the whole host)
  // read a file its shell cannot see. O_NONBLOCK: opening a FIFO does not wait for a writer.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::string();
    if (errno == ELOOP) {
      return absl::FailedPreconditionError(
          absl::StrCat(name, " is a symbolic link, not a regular file"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot be read: ", std::strerror(errno)));
  }
  struct stat info;
  // Not a FIFO, a device or a directory the agent put there: reading one could block.
  if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(name, " is not a regular file"));
  }
  std::string contents;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::PermissionDeniedError(
          absl::StrCat(path, ": cannot be read: ", std::strerror(errno)));
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
    if (max_bytes > 0 && contents.size() > max_bytes) {
      contents.resize(max_bytes + 1);
      break;
    }
  }
  return contents;
}

}  // namespace mkb
