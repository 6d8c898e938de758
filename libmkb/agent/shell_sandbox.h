// The agent's shell (SPEC §4): each command runs in `bash -c` inside a bubblewrap sandbox with
// no network, no GPU devices, a fixed number of CPUs, a memory cap over all its processes, a
// per-command time limit, and writes confined to the workspace.
//
// What the sandbox is (docs/agent.md has the measurements):
//  - an allow-list view of the host's file system: the system's folders read-only (/usr, the
//    /bin /sbin /lib* links, a few /etc entries: kSystemEtcEntries), the `read_only` mounts
//    (the judge's Python, the variant's DSL, the problem: shell_view.h), the workspace
//    read-write, a private /tmp (tmpfs, tmp_bytes), an empty 1 MiB /run, a minimal read-only
//    /dev (null, zero, random, urandom, tty, pts: no /dev/nvidia*) with a sized /dev/shm, and
//    its own /proc with the host-wide entries (/proc/sys, sysrq-trigger, ...) read-only;
//    nothing else of the host (no home, no other workspace, no results store, no /sys). Inside
//    the mounts, `hidden_paths` are replaced by empty directories or files. The root is
//    read-only;
//  - new user, pid, network, ipc, uts and cgroup namespaces and no nested user namespace, every
//    capability dropped, a new session; it dies with the process that runs it;
//  - the environment is only what the options give, CUDA_VISIBLE_DEVICES="", and never a
//    variable named like a secret (an API key, a token, a password: Create refuses one);
//  - CPU affinity to `cpus` CPUs, RLIMIT_FSIZE, and a watcher that kills the command when the
//    resident memory of its processes together exceeds memory_bytes, when they number more
//    than max_processes, when the workspace grows past workspace_bytes or workspace_files, or
//    when its time runs out;
//  - a seccomp filter (detail/shell_seccomp.h): no set-user-ID or set-group-ID file, no
//    fallocate, no io_uring, no other ABI.
// Each command starts afresh in the workspace: the working directory and variables do not
// carry over between commands; files do.
//
// Where bubblewrap cannot run (no unprivileged user namespaces), Create fails with the reason,
// unless require_isolation is false: then commands run without isolation (limits, time and
// process group only) and description() says so.
#ifndef LIBMKB_AGENT_SHELL_SANDBOX_H_
#define LIBMKB_AGENT_SHELL_SANDBOX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace mkb {

// The /etc entries the sandbox shows (dynamic linking, users and groups, locales, time zone,
// terminals, certificates, Debian's alternatives links), and those whose names start with
// "python3" (Debian's Python configuration). Nothing else of /etc (no shadow, pip or npm
// configuration with tokens).
inline constexpr const char* kSystemEtcEntries[] = {"alternatives",
                                                    "bash.bashrc",
                                                    "ca-certificates",
                                                    "ca-certificates.conf",
                                                    "debian_version",
                                                    "fonts",
                                                    "gai.conf",
                                                    "group",
                                                    "host.conf",
                                                    "hosts",
                                                    "inputrc",
                                                    "ld.so.cache",
                                                    "ld.so.conf",
                                                    "ld.so.conf.d",
                                                    "locale.alias",
                                                    "localtime",
                                                    "lsb-release",
                                                    "magic",
                                                    "magic.mime",
                                                    "manpath.config",
                                                    "mime.types",
                                                    "nsswitch.conf",
                                                    "os-release",
                                                    "passwd",
                                                    "profile",
                                                    "protocols",
                                                    "services",
                                                    "shells",
                                                    "ssl",
                                                    "terminfo",
                                                    "timezone",
                                                    "vim"};

// A host path the command sees, read-only.
struct ShellMount {
  std::string source;  // on the host
  std::string target;  // inside the sandbox; "": the same path as source
  // For a folder: when not empty, only these entries of it show (the folder is otherwise
  // empty); names only, those that do not exist are skipped.
  std::vector<std::string> only;
};

struct ShellSandboxOptions {
  std::string workspace;  // an existing directory: the only writable place, cwd and HOME
  int cpus = 2;
  int64_t memory_bytes = int64_t{8} << 30;  // resident memory of all processes together
  int max_processes = 512;  // processes and their threads (each takes a pid of the host's)
  int64_t max_file_bytes = int64_t{1} << 30;  // RLIMIT_FSIZE: one file's size
  int64_t tmp_bytes = int64_t{1} << 30;       // the private /tmp
  // The workspace's files (their allocated blocks, each file once, and the blocks of files its
  // processes hold open with no name left), and how many entries: a command that takes the
  // workspace past either, or nests folders deeper than 128, is killed. The workspace is the
  // host's own disk. Checked every 100 ms, with fallocate refused (the shell's seccomp filter),
  // so a command overshoots by at most what it writes in that time; one that starts over a
  // limit can write no file data (RLIMIT_FSIZE 0) and may not add entries.
  int64_t workspace_bytes = int64_t{4} << 30;
  int64_t workspace_files = 100000;
  size_t max_output_bytes = 30000;  // stdout + stderr kept: head and tail
  // What the command sees of the host besides the system's folders, mounted in this order
  // (later ones over earlier ones); sources that do not exist are skipped.
  std::vector<ShellMount> read_only;
  // Inside those mounts: paths replaced by an empty directory (or, for a file, an empty file),
  // after them. Paths outside every mount are not visible anyway and are skipped.
  std::vector<std::string> hidden_paths;
  // "KEY=VALUE" entries of the command's environment, over the defaults PATH (/usr/local/bin:
  // /usr/bin:/bin), HOME and PWD (the workspace), TMPDIR=/tmp, LANG=C.UTF-8, TERM=dumb,
  // CUDA_VISIBLE_DEVICES="" and PYTHONUNBUFFERED=1. Nothing else of this process's
  // environment goes in. A KEY that names a secret (IsSecretName) is refused.
  std::vector<std::string> environment;
  std::string bwrap = "bwrap";  // path or name on PATH
  std::string shell = "/bin/bash";
  bool require_isolation = true;
};

struct ShellResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  bool memory_exceeded = false;
  bool too_many_processes = false;
  bool workspace_exceeded = false;  // killed for the workspace's size or number of files
  int64_t workspace_bytes = 0;      // the workspace's size when last measured
  int64_t workspace_files = 0;
  bool workspace_over_at_start = false;  // then it ran with RLIMIT_FSIZE 0: removing files only
  std::string output;                    // stdout and stderr interleaved, cut to max_output_bytes
  int64_t output_bytes = 0;              // before cutting
  int64_t peak_memory_bytes = 0;
  double seconds = 0;

  // What an agent reads: the output, then a line for a non-zero exit, a timeout or a kill;
  // valid UTF-8 (bytes that are not become U+FFFD).
  std::string Observation() const;
};

// Whether an environment variable's name marks it as a secret: it contains API_KEY, APIKEY,
// TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or PRIVATE_KEY (any case).
bool IsSecretName(absl::string_view name);

class ShellSandbox {
 public:
  // Checks the workspace and that the sandbox starts (one `true` run). FailedPreconditionError
  // with bubblewrap's own words when it cannot start and isolation is required;
  // InvalidArgumentError naming the field for a bad option (a secret in the environment).
  static absl::StatusOr<ShellSandbox> Create(ShellSandboxOptions options);

  // Runs `command` with `timeout`. A command that fails, times out or is killed is a result;
  // an error status means the sandbox itself could not run it.
  absl::StatusOr<ShellResult> Run(absl::string_view command, absl::Duration timeout) const;

  bool isolated() const { return isolated_; }
  // "bubblewrap 0.8.0: ..." or "none: <why>".
  const std::string& description() const { return description_; }
  const ShellSandboxOptions& options() const { return options_; }

 private:
  explicit ShellSandbox(ShellSandboxOptions options) : options_(std::move(options)) {}
  std::vector<std::string> BwrapArguments(absl::string_view command) const;
  std::vector<std::string> Environment() const;

  ShellSandboxOptions options_;
  bool isolated_ = false;
  std::string description_;
};

}  // namespace mkb

#endif  // LIBMKB_AGENT_SHELL_SANDBOX_H_
