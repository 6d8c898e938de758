// The agent's shell sandbox: what a command can and cannot do. The tests need bubblewrap with
// working namespaces, and skip (saying why) where it cannot start; the unisolated fallback is
// tested everywhere.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "libmkb/agent/shell_sandbox.h"
#include "libmkb/agent/shell_view.h"
#include "libmkb/core/utf8.h"
#include "libmkb/suite/suite.h"

namespace fs = std::filesystem;

namespace {

// A scratch folder outside /tmp (the sandbox's /tmp is private, which would hide the point of
// a write test): <build dir>/agent_sandbox_test_<pid>/{ws, outside, hidden}.
class Scratch {
 public:
  Scratch() {
    root_ = fs::path(MKB_BINARY_DIR) / absl::StrCat("agent_sandbox_test_", ::getpid(), "_", n_++);
    fs::create_directories(root_ / "ws");
    fs::create_directories(root_ / "outside");
    fs::create_directories(root_ / "hidden");
    std::ofstream(root_ / "hidden" / "secret.txt") << "the source attempt's kernel";
  }
  ~Scratch() { fs::remove_all(root_); }
  std::string path(const char* name) const { return (root_ / name).string(); }

 private:
  static inline int n_ = 0;
  fs::path root_;
};

// The sandbox, or a skip naming why bubblewrap cannot run here.
mkb::ShellSandbox Sandbox(const Scratch& scratch, mkb::ShellSandboxOptions options = {}) {
  options.workspace = scratch.path("ws");
  auto sandbox = mkb::ShellSandbox::Create(options);
  if (!sandbox.ok() && absl::IsFailedPrecondition(sandbox.status())) {
    SKIP("bubblewrap cannot run here: " << sandbox.status().message());
  }
  REQUIRE(sandbox.ok());
  return *std::move(sandbox);
}

mkb::ShellResult Run(const mkb::ShellSandbox& sandbox, const std::string& command,
                     absl::Duration timeout = absl::Seconds(30)) {
  auto result = sandbox.Run(command, timeout);
  REQUIRE(result.ok());
  return *std::move(result);
}

// A TCP listener on the host's loopback; the sandbox must not reach it.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 4);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

}  // namespace

TEST_CASE("commands run in the workspace, which they may write", "[sandbox]") {
  Scratch scratch;
  auto sandbox = Sandbox(scratch);
  CHECK(sandbox.isolated());
  auto r = Run(sandbox, "pwd && echo hello > note.txt && cat note.txt && exit 3");
  CHECK(r.exit_code == 3);
  CHECK(r.output.find(scratch.path("ws")) != std::string::npos);
  CHECK(r.output.find("hello") != std::string::npos);
  CHECK(fs::exists(scratch.path("ws") + "/note.txt"));
  CHECK(r.Observation().find("[exit code 3]") != std::string::npos);
}

TEST_CASE("writes outside the workspace are refused", "[sandbox]") {
  Scratch scratch;
  mkb::ShellSandboxOptions options;
  options.read_only = {{scratch.path("outside"), ""}};
  auto sandbox = Sandbox(scratch, options);
  const std::string outside = scratch.path("outside") + "/escaped.txt";
  auto r = Run(sandbox, absl::StrCat("echo x > ", outside,
                                     "; echo rc=$?; touch /etc/mkb_escape; echo rc=$?; "
                                     "mkdir /mkb_escape; echo rc=$?"));
  CHECK(r.output.find("Read-only file system") != std::string::npos);
  CHECK(r.output.find("rc=0") == std::string::npos);
  CHECK_FALSE(fs::exists(outside));
  CHECK_FALSE(fs::exists("/etc/mkb_escape"));
}

TEST_CASE("the shell sees an allow-list of the host: what is mounted, and nothing else",
          "[sandbox]") {
  Scratch scratch;
  const fs::path shown = scratch.path("shown");
  fs::create_directories(shown / "private");
  fs::create_directories(shown / "sub");
  std::ofstream(shown / "sub" / "tool.txt") << "a tool";
  std::ofstream(shown / "private" / "key.txt") << "hidden key";
  std::ofstream(shown / "store.db") << "every attempt's kernels";
  mkb::ShellSandboxOptions options;
  options.read_only = {{shown.string(), ""}, {(shown / "sub").string(), "/mkb/elsewhere"}};
  options.hidden_paths = {(shown / "private").string(), (shown / "store.db").string(),
                          scratch.path("hidden")};  // not mounted: invisible anyway
  auto sandbox = Sandbox(scratch, options);
  const char* home = std::getenv("HOME");
  const std::string host_home = home != nullptr && std::string(home) != "/" ? home : "/root";
  auto r = Run(sandbox,
               absl::StrCat("cat ", (shown / "sub" / "tool.txt").string(),
                            " /mkb/elsewhere/tool.txt; echo; ls -A ", (shown / "private").string(),
                            "; cat ", (shown / "store.db").string(), "; ls ",
                            scratch.path("outside"), " ", scratch.path("hidden"), " ", host_home,
                            "/* /sys /var /opt /etc/shadow; ls /etc/passwd"));
  INFO(r.output);
  CHECK(r.output.find("a toola tool") != std::string::npos);
  CHECK(r.output.find("key.txt") == std::string::npos);
  CHECK(r.output.find("hidden key") == std::string::npos);
  CHECK(r.output.find("every attempt's kernels") == std::string::npos);
  for (const std::string& absent :
       {scratch.path("outside"), scratch.path("hidden"), std::string("/sys"), std::string("/var"),
        std::string("/opt"), std::string("/etc/shadow")}) {
    INFO(absent << " in:\n" << r.output);
    CHECK(r.output.find(absl::StrCat("cannot access '", absent, "'")) != std::string::npos);
  }
  CHECK(r.output.find("/etc/passwd\n") != std::string::npos);
}

TEST_CASE("a folder under /tmp is seen when mounted, despite the private /tmp", "[sandbox]") {
  Scratch scratch;
  // A checkout (or a venv, a DSL) that lives under /tmp.
  char pattern[] = "/tmp/mkb-sandbox-test-XXXXXX";
  REQUIRE(::mkdtemp(pattern) != nullptr);
  const fs::path checkout = pattern;
  const fs::path unlisted = checkout.string() + "-unlisted";
  fs::create_directories(unlisted);
  std::ofstream(checkout / "python") << "#!/bin/sh\necho \"the checkout's python\"\n";
  fs::permissions(checkout / "python", fs::perms::owner_all);
  std::ofstream(unlisted / "other.txt") << "not mounted";
  mkb::ShellSandboxOptions options;
  options.read_only = {{checkout.string(), ""}};
  auto sandbox = Sandbox(scratch, options);
  auto r = Run(sandbox, absl::StrCat((checkout / "python").string(), "; cat ",
                                     (unlisted / "other.txt").string()));
  fs::remove_all(checkout);
  fs::remove_all(unlisted);
  INFO(r.output);
  CHECK(r.output.find("the checkout's python") != std::string::npos);
  CHECK(r.output.find("not mounted") == std::string::npos);
}

TEST_CASE("the environment never carries a secret", "[sandbox]") {
  CHECK(mkb::IsSecretName("OPENAI_API_KEY"));
  CHECK(mkb::IsSecretName("hf_token"));
  CHECK(mkb::IsSecretName("AWS_SECRET_ACCESS_KEY"));
  CHECK(mkb::IsSecretName("DB_PASSWORD"));
  CHECK_FALSE(mkb::IsSecretName("PYTHONPATH"));
  CHECK_FALSE(mkb::IsSecretName("MKB_TARGET_ARCH"));
  Scratch scratch;
  mkb::ShellSandboxOptions options;
  options.workspace = scratch.path("ws");
  options.require_isolation = false;  // refused before bubblewrap is even tried
  options.environment = {"MKB_DSL=cutedsl", "ANTHROPIC_API_KEY=sk-ant-must-not-leak"};
  auto refused = mkb::ShellSandbox::Create(options);
  REQUIRE(absl::IsInvalidArgument(refused.status()));
  CHECK(refused.status().message().find("environment: 'ANTHROPIC_API_KEY'") != std::string::npos);
}

TEST_CASE("what the agent reads of a command's output is valid UTF-8", "[sandbox]") {
  Scratch scratch;
  auto sandbox = Sandbox(scratch);
  auto r = Run(sandbox, "printf 'bad \\xff\\xed\\xa0\\x80 end \\xe2\\x82\\xac'");
  CHECK(r.output == "bad \xff\xed\xa0\x80 end \xe2\x82\xac");  // the bytes as printed
  const std::string observation = r.Observation();
  CHECK_FALSE(mkb::FirstInvalidUtf8(observation).has_value());
  // As Python's errors="replace": one U+FFFD for 0xFF, one each for ED, A0, 80 (a surrogate).
  CHECK(observation == "bad \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end \xe2\x82\xac\n");
}

TEST_CASE("the network is unreachable, even the host's loopback", "[sandbox]") {
  Scratch scratch;
  auto sandbox = Sandbox(scratch);
  Listener listener;
  auto r = Run(sandbox, absl::StrCat("(exec 3<>/dev/tcp/127.0.0.1/", listener.port(),
                                     ") 2>/dev/null && echo connected || echo refused; "
                                     "(exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null && echo out || "
                                     "echo unreachable"));
  CHECK(r.output.find("refused") != std::string::npos);
  CHECK(r.output.find("connected") == std::string::npos);
  CHECK(r.output.find("unreachable") != std::string::npos);
}

TEST_CASE("no GPU devices, no secrets from the environment, hidden paths are empty", "[sandbox]") {
  Scratch scratch;
  ::setenv("OPENAI_API_KEY", "sk-must-not-leak", 1);
  mkb::ShellSandboxOptions options;
  options.hidden_paths = {scratch.path("hidden")};
  options.environment = {"MKB_VISIBLE=yes"};
  auto sandbox = Sandbox(scratch, options);
  auto r = Run(sandbox, absl::StrCat("ls /dev; env; cat ", scratch.path("hidden"),
                                     "/secret.txt; echo cuda=[$CUDA_VISIBLE_DEVICES]"));
  ::unsetenv("OPENAI_API_KEY");
  CHECK(r.output.find("nvidia") == std::string::npos);
  CHECK(r.output.find("sk-must-not-leak") == std::string::npos);
  CHECK(r.output.find("MKB_VISIBLE=yes") != std::string::npos);
  CHECK(r.output.find("the source attempt's kernel") == std::string::npos);
  CHECK(r.output.find("cuda=[]") != std::string::npos);
}

TEST_CASE("a command is killed at its time limit, background processes too", "[sandbox]") {
  Scratch scratch;
  auto sandbox = Sandbox(scratch);
  auto r = Run(sandbox, "echo started; sleep 30", absl::Seconds(1));
  CHECK(r.timed_out);
  CHECK(r.seconds < 10);
  CHECK(r.output.find("started") != std::string::npos);
  CHECK(r.Observation().find("time limit") != std::string::npos);

  auto background = Run(sandbox, "sleep 60 & echo left");
  CHECK_FALSE(background.timed_out);
  CHECK(background.seconds < 10);
  CHECK(background.exit_code == 0);
}

TEST_CASE("memory over the cap kills the command; CPUs are pinned", "[sandbox]") {
  Scratch scratch;
  mkb::ShellSandboxOptions options;
  options.memory_bytes = int64_t{256} << 20;
  options.cpus = 1;
  auto sandbox = Sandbox(scratch, options);
  // tail holds a line with no newline in memory: it grows until killed.
  auto r = Run(sandbox, "head -c 2G /dev/zero | tail > /dev/null", absl::Seconds(60));
  CHECK(r.memory_exceeded);
  CHECK(r.peak_memory_bytes > (int64_t{256} << 20));
  CHECK(r.Observation().find("memory limit") != std::string::npos);
  CHECK(Run(sandbox, "nproc").output == "1\n");
}

TEST_CASE("no file the shell leaves is set-user-ID or set-group-ID", "[sandbox]") {
  // Where the harness runs as root the sandbox's root is the host's: a set-user-ID copy of a
  // shell left in the workspace ran as root for any user of the host (red team, 2026-12-06).
  Scratch scratch;
  auto sandbox = Sandbox(scratch);
  const std::string ws = scratch.path("ws");
  auto r = Run(sandbox,
               "cp /bin/sh ./s1; chmod 4755 ./s1; chmod u+s ./s1; chmod g+s ./s1; "
               "python3 -c \"import os; fd = os.open('s2', os.O_CREAT | os.O_WRONLY, 0o6755); "
               "os.fchmod(fd, 0o4755)\"; "
               "install -m 4755 /bin/sh ./s3; echo done");
  CHECK(r.output.find("done") != std::string::npos);
  for (const char* name : {"s1", "s2", "s3"}) {
    struct stat st {};
    if (::stat((ws + "/" + name).c_str(), &st) != 0) continue;  // not made at all
    INFO(name << " mode " << std::oct << st.st_mode);
    CHECK((st.st_mode & (S_ISUID | S_ISGID)) == 0);
  }
  // An ordinary mode is still set.
  CHECK(Run(sandbox, "touch x && chmod 755 x && stat -c %a x").output == "755\n");
}

TEST_CASE(
    "the workspace is bounded: no fallocate, and a command that grows it past its limit is "
    "killed",
    "[sandbox]") {
  Scratch scratch;
  mkb::ShellSandboxOptions options;
  options.workspace_bytes = int64_t{64} << 20;
  options.workspace_files = 2000;
  auto sandbox = Sandbox(scratch, options);
  auto reserved = Run(sandbox, "fallocate -l 1G big; ls -s big 2>/dev/null; echo done");
  CHECK(reserved.output.find("done") != std::string::npos);
  const std::string big = scratch.path("ws") + "/big";
  const bool reserved_blocks = fs::exists(big) && fs::file_size(big) > 0;
  CHECK_FALSE(reserved_blocks);  // refused: no blocks reserved
  auto written =
      Run(sandbox, "for i in $(seq 1 100); do head -c 8M /dev/zero > f$i; done", absl::Seconds(60));
  CHECK(written.workspace_exceeded);
  CHECK(written.Observation().find("workspace grew past its limit") != std::string::npos);
  // Over by at most what was written in one check's interval.
  CHECK(written.workspace_bytes < (int64_t{64} << 20) + (int64_t{256} << 20));
  auto many = Run(sandbox, "rm -f f*; mkdir d && cd d && for i in $(seq 1 5000); do : > $i; done",
                  absl::Seconds(60));
  CHECK(many.workspace_exceeded);
  // A workspace over its limit can still be cleaned up, however far over it is.
  for (int i = 0; i < 3000; ++i) std::ofstream(scratch.path("ws") + "/d/extra" + std::to_string(i));
  auto clean = Run(sandbox, "ls d | wc -l && rm -rf d f* && echo clean");
  CHECK_FALSE(clean.workspace_exceeded);
  CHECK(clean.output.find("clean\n") != std::string::npos);
}

TEST_CASE("the watcher sees what a command hides: deep folders, nameless open files; no ratchet",
          "[sandbox]") {
  Scratch scratch;
  mkb::ShellSandboxOptions options;
  options.workspace_bytes = int64_t{64} << 20;
  options.workspace_files = 5000;
  auto sandbox = Sandbox(scratch, options);
  // A chain of folders longer than PATH_MAX, made by relative mkdir and cd.
  auto deep = Run(sandbox,
                  "n=$(printf 'd%.0s' $(seq 1 250)); for i in $(seq 1 20); do mkdir $n && cd $n; "
                  "done; for i in 1 2 3 4; do head -c 40M /dev/zero > big$i; done",
                  absl::Seconds(60));
  CHECK(deep.workspace_exceeded);
  // Over the limit now: the next command writes no file data, and removing files works.
  auto over = Run(sandbox, "head -c 10M /dev/zero > more; echo $?; ls");
  CHECK(over.workspace_over_at_start);
  const std::string more = scratch.path("ws") + "/more";
  const bool wrote_more = fs::exists(more) && fs::file_size(more) > 0;
  CHECK_FALSE(wrote_more);
  CHECK(over.Observation().find("no file data can be written") != std::string::npos);
  CHECK(Run(sandbox, "rm -rf d* && echo clean").output == "clean\n");
  // Folders nested deeper than the walk goes.
  auto nested =
      Run(sandbox, "for i in $(seq 1 140); do mkdir a && cd a; done; echo made", absl::Seconds(60));
  CHECK(nested.workspace_exceeded);
  CHECK(Run(sandbox, "rm -rf a && echo clean").output == "clean\n");
  // A file written through a descriptor after its name was removed.
  auto nameless =
      Run(sandbox, "exec 3<>f1; rm f1; head -c 200M /dev/zero >&3; sleep 2", absl::Seconds(60));
  CHECK(nameless.workspace_exceeded);
}

TEST_CASE("host-wide settings, /run and /dev are read-only or small; no nested namespaces",
          "[sandbox]") {
  Scratch scratch;
  auto sandbox = Sandbox(scratch);
  // The current value written back: harmless even where the write would succeed. As the host's
  // root the sandbox could write kernel.core_pattern (red team, 2026-12-06: a script of the
  // workspace then ran as root on the host).
  auto sysctl = Run(sandbox,
                    "v=$(cat /proc/sys/vm/swappiness) && echo $v > /proc/sys/vm/swappiness && "
                    "echo wrote");
  CHECK(sysctl.output.find("wrote") == std::string::npos);
  CHECK(Run(sandbox, "head -c 4M /dev/zero > /run/a 2>/dev/null; stat -c %s /run/a").output !=
        "4194304\n");
  CHECK(Run(sandbox, "echo x > /dev/c && echo wrote").output.find("wrote") == std::string::npos);
  CHECK(Run(sandbox, "echo x > /dev/shm/ok && cat /dev/shm/ok").output == "x\n");
  // In a user namespace of its own a command holds every capability there and mounts a tmpfs
  // that no limit counts.
  auto nested = Run(sandbox,
                    "python3 -c \"import ctypes; c = ctypes.CDLL(None, use_errno=True); "
                    "ok = c.unshare(0x10000000 | 0x00020000) == 0 and "
                    "c.mount(b'none', b'/tmp', b'tmpfs', 0, None) == 0; "
                    "print('mounted' if ok else 'refused')\"");
  CHECK(nested.output == "refused\n");
}

TEST_CASE("threads count as processes; memory outside any process's resident set is refused",
          "[sandbox]") {
  Scratch scratch;
  mkb::ShellSandboxOptions options;
  options.max_processes = 64;
  auto sandbox = Sandbox(scratch, options);
  // Each thread takes a pid of the host's (5,000 under a limit of 64 processes: red team).
  auto threads =
      Run(sandbox,
          "python3 -c \"import threading, time; "
          "[threading.Thread(target=time.sleep, args=(10,)).start() for _ in range(200)]\"",
          absl::Seconds(60));
  CHECK(threads.too_many_processes);
  CHECK(Run(sandbox, "python3 -c \"import os; os.memfd_create('x'); print('made')\"")
            .output.find("made") == std::string::npos);
  CHECK(Run(sandbox,
            "python3 -c \"import ctypes; c = ctypes.CDLL(None); "
            "print('made' if c.shmget(0, 1 << 20, 0o1600) >= 0 else 'refused')\"")
            .output == "refused\n");
}

TEST_CASE("long output keeps its head and tail", "[sandbox]") {
  Scratch scratch;
  mkb::ShellSandboxOptions options;
  options.max_output_bytes = 1000;
  auto sandbox = Sandbox(scratch, options);
  auto r = Run(sandbox, "echo FIRST; head -c 100000 /dev/zero | tr '\\0' x; echo; echo LAST");
  CHECK(r.output_bytes > 100000);
  CHECK(r.output.size() < 1200);
  CHECK(r.output.find("FIRST") != std::string::npos);
  CHECK(r.output.find("LAST") != std::string::npos);
  CHECK(r.output.find("bytes of output cut") != std::string::npos);
}

TEST_CASE("without bubblewrap the sandbox refuses, or runs unisolated when allowed") {
  Scratch scratch;
  mkb::ShellSandboxOptions options;
  options.workspace = scratch.path("ws");
  options.bwrap = "/nonexistent/bwrap";
  auto refused = mkb::ShellSandbox::Create(options);
  REQUIRE_FALSE(refused.ok());
  CHECK(absl::IsFailedPrecondition(refused.status()));
  CHECK(refused.status().message().find("bubblewrap") != std::string::npos);

  options.bwrap = "/bin/false";  // starts, but cannot make a sandbox
  CHECK(absl::IsFailedPrecondition(mkb::ShellSandbox::Create(options).status()));

  options.require_isolation = false;
  auto fallback = mkb::ShellSandbox::Create(options);
  REQUIRE(fallback.ok());
  CHECK_FALSE(fallback->isolated());
  CHECK(fallback->description().rfind("none: ", 0) == 0);
  auto r = fallback->Run("pwd; sleep 20", absl::Seconds(1));
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->output.find(scratch.path("ws")) != std::string::npos);
}

TEST_CASE("an attempt's view: the judge's Python, the variant's DSL, the problem; no more",
          "[sandbox]") {
  Scratch scratch;
  // A Python installation with the package in it: the judge's internals and a shipped suite
  // copy (with reference solutions) must not show; a results store inside it neither.
  const fs::path py = scratch.path("py");
  const fs::path package = py / "site" / "metakernelbench";
  fs::create_directories(package / "judge" / "__pycache__");
  fs::create_directories(package / "problems" / "mlp_norm" / "28_x" / "solutions");
  std::ofstream(package / "judge" / "__init__.py") << "# the judge's API\n";
  std::ofstream(package / "judge" / "host.py") << "SEEDS = 'the host internals'\n";
  std::ofstream(package / "problems" / "mlp_norm" / "28_x" / "solutions" / "cutedsl.py")
      << "the reference solution\n";
  std::ofstream(py / "results.db") << "every attempt's kernels";
  const fs::path dsl = scratch.path("dsl");
  fs::create_directories(dsl / "cutedsl" / "pkgs");
  fs::create_directories(dsl / "tirx");
  std::ofstream(dsl / "cutedsl" / "marker.txt") << "cute here";
  std::ofstream(dsl / "tirx" / "marker.txt") << "tvm here";

  mkb::ShellView view;
  view.python = mkb::PythonLayout{"/usr/bin/python3", {py.string()}, {package.string()}};
  view.dsl_site_dirs = {(dsl / "cutedsl").string(), (dsl / "cutedsl" / "pkgs").string()};
  view.other_dsl_site_dirs = {(dsl / "tirx").string()};
  view.private_paths = {(py / "results.db").string()};
  const mkb::Suite suite = *mkb::Suite::Load(std::string(MKB_SOURCE_DIR) + "/problems");
  const mkb::v1::Problem& problem = **suite.Find("28");
  mkb::ShellSandboxOptions options;
  mkb::AddShellView(view, problem, mkb::v1::CUTEDSL, "NVIDIA H200 (sm_90a)", /*isolated=*/true,
                    &options);
  auto sandbox = Sandbox(scratch, options);
  const std::string problem_inside = absl::StrCat(
      mkb::kShellSuiteRoot, "/", fs::path(problem.directory()).parent_path().filename().string(),
      "/", fs::path(problem.directory()).filename().string());
  auto r = Run(
      sandbox,
      absl::StrCat("ls -A ", problem_inside, " ", (package / "judge").string(), " ",
                   (package / "problems").string(), "; cat ",
                   (package / "judge" / "host.py").string(), " ", (py / "results.db").string(), " ",
                   (dsl / "tirx/marker.txt").string(), " /mkb/dsl/cutedsl/marker.txt; echo; ls ",
                   problem.directory(), "; ls /mkb/dsl; env"));
  INFO(r.output);
  // The problem's two files, nothing else of its folder or of the suite.
  CHECK(r.output.find("problem.textproto\nreference.py\n") != std::string::npos);
  CHECK(r.output.find("solutions") == std::string::npos);
  CHECK(r.output.find(absl::StrCat("cannot access '", problem.directory(), "'")) !=
        std::string::npos);
  CHECK(r.output.find("the host internals") == std::string::npos);
  CHECK(r.output.find("the reference solution") == std::string::npos);
  CHECK(r.output.find("every attempt's kernels") == std::string::npos);
  CHECK(r.output.find("tvm here") == std::string::npos);
  CHECK(r.output.find("cute here") != std::string::npos);
  CHECK(r.output.find("__pycache__") == std::string::npos);
  CHECK(r.output.find("PYTHONPATH=/mkb/dsl/cutedsl:/mkb/dsl/cutedsl/pkgs\n") != std::string::npos);
  CHECK(r.output.find("MKB_DSL_HOME=/mkb/dsl\n") != std::string::npos);
  CHECK(r.output.find("MKB_SUITE=/mkb/suite\n") != std::string::npos);
  CHECK(r.output.find("MKB_DSL=cutedsl\n") != std::string::npos);
  CHECK(r.output.find("MKB_TARGET_ARCH=sm_90a\n") != std::string::npos);
  CHECK(r.output.find("PATH=/usr/bin:") != std::string::npos);
}

TEST_CASE("the judge's Python says where it lives") {
  CHECK(absl::IsNotFound(mkb::ProbePython("/nonexistent/python3").status()));
  CHECK(absl::IsNotFound(mkb::ProbePython("no-such-python-anywhere").status()));
  auto system = mkb::ProbePython("python3");
  REQUIRE(system.ok());
  CHECK(system->interpreter.rfind('/') != std::string::npos);
  for (const std::string& root : system->roots) CHECK(root.rfind("/usr/", 0) != 0);
  // The development checkout's virtual environment: its prefix, and the package in it.
  const fs::path venv = fs::path(MKB_SOURCE_DIR) / ".venv";
  if (!fs::exists(venv / "bin" / "python")) SKIP("no .venv in the checkout");
  auto layout = mkb::ProbePython((venv / "bin" / "python").string());
  REQUIRE(layout.ok());
  CHECK(layout->interpreter == (venv / "bin" / "python").string());
  CHECK(std::find(layout->roots.begin(), layout->roots.end(), venv.string()) !=
        layout->roots.end());
  CHECK_FALSE(layout->package_dirs.empty());
  for (size_t i = 0; i < layout->roots.size(); ++i) {
    for (size_t j = 0; j < layout->roots.size(); ++j) {
      if (i != j) CHECK(layout->roots[i].rfind(layout->roots[j] + "/", 0) != 0);
    }
  }
}
