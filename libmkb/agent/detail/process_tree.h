// The processes descending from one process, and their resident memory, read from /proc.
#ifndef LIBMKB_AGENT_DETAIL_PROCESS_TREE_H_
#define LIBMKB_AGENT_DETAIL_PROCESS_TREE_H_

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace mkb::detail {

struct ProcessTree {
  std::vector<pid_t> pids;  // `root` first when it is alive, then its descendants
  int64_t resident_bytes = 0;
  int64_t threads = 0;  // of every process in `pids` (each takes a pid of the host's)
};

// One scan of /proc. Processes that exit during the scan are skipped.
ProcessTree ScanProcessTree(pid_t root);

}  // namespace mkb::detail

#endif  // LIBMKB_AGENT_DETAIL_PROCESS_TREE_H_
