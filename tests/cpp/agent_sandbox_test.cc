// The agent's shell sandbox: what a command can and cannot do. The tests need bubblewrap with
// working namespaces, and skip (saying why) where it cannot start; the unisolated fallback is
// tested everywhere.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "libmkb/agent/shell_sandbox.h"

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
  auto sandbox = Sandbox(scratch);
  const std::string outside = scratch.path("outside") + "/escaped.txt";
  auto r = Run(sandbox, absl::StrCat("echo x > ", outside,
                                     "; echo rc=$?; touch /etc/mkb_escape; "
                                     "echo rc=$?"));
  CHECK(r.output.find("Read-only file system") != std::string::npos);
  CHECK(r.output.find("rc=0") == std::string::npos);
  CHECK_FALSE(fs::exists(outside));
  CHECK_FALSE(fs::exists("/etc/mkb_escape"));
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
