#include "libmkb/agent/detail/process_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "libmkb/core/unique_fd.h"

namespace mkb::detail {
namespace {

struct StatLine {
  pid_t ppid = 0;
  int64_t rss_pages = 0;
  int64_t threads = 1;
};

// /proc/<pid>/stat: "pid (comm) state ppid ... rss(24th field) ...". comm may hold spaces and
// parentheses, so fields are counted from the last ')'.
bool ReadStat(pid_t pid, StatLine* out) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  char buffer[1024];
  const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer) - 1);
  if (n <= 0) return false;
  absl::string_view line(buffer, static_cast<size_t>(n));
  const size_t close_paren = line.rfind(')');
  if (close_paren == absl::string_view::npos) return false;
  std::vector<absl::string_view> fields =
      absl::StrSplit(line.substr(close_paren + 2), ' ', absl::SkipEmpty());
  // fields[0] is field 3 (state): field k is fields[k - 3].
  if (fields.size() < 22) return false;
  int ppid = 0;
  int64_t rss = 0;
  if (!absl::SimpleAtoi(fields[1], &ppid) || !absl::SimpleAtoi(fields[21], &rss)) return false;
  // num_threads (field 20): each thread takes a pid of the host's.
  if (!absl::SimpleAtoi(fields[17], &out->threads) || out->threads < 1) out->threads = 1;
  out->ppid = ppid;
  out->rss_pages = rss;
  return true;
}

}  // namespace

ProcessTree ScanProcessTree(pid_t root) {
  std::unordered_map<pid_t, StatLine> all;
  if (DIR* dir = ::opendir("/proc")) {
    while (dirent* entry = ::readdir(dir)) {
      int pid = 0;
      if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
      StatLine stat;
      if (ReadStat(pid, &stat)) all.emplace(pid, stat);
    }
    ::closedir(dir);
  }
  std::unordered_map<pid_t, std::vector<pid_t>> children;
  for (const auto& [pid, stat] : all) children[stat.ppid].push_back(pid);
  ProcessTree tree;
  static const int64_t page = ::sysconf(_SC_PAGESIZE);
  std::vector<pid_t> frontier = {root};
  while (!frontier.empty()) {
    const pid_t pid = frontier.back();
    frontier.pop_back();
    auto it = all.find(pid);
    if (it == all.end()) continue;
    tree.pids.push_back(pid);
    tree.resident_bytes += it->second.rss_pages * page;
    tree.threads += it->second.threads;
    auto kids = children.find(pid);
    if (kids != children.end()) {
      for (pid_t child : kids->second) frontier.push_back(child);
    }
  }
  return tree;
}

}  // namespace mkb::detail
