#include "libmkb/judge/judge.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libmkb/judge/process_supervisor.h"
#include "libmkb/judge/verdict_builder.h"

extern char** environ;

namespace mkb {
namespace {

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// Closes its descriptors on destruction.
struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() = default;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
  absl::Status Open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return Errno("pipe2");
    read = fds[0];
    write = fds[1];
    return absl::OkStatus();
  }
  void CloseRead() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  void CloseWrite() {
    if (write >= 0) ::close(write);
    write = -1;
  }
};

absl::Status ValidateRequest(const v1::EvaluationRequest& request) {
  if (request.problem_dir().empty()) return absl::InvalidArgumentError("problem_dir: required");
  if (request.dsl() == v1::DSL_UNSPECIFIED)
    return absl::InvalidArgumentError("dsl: required (cutedsl or tirx)");
  if (!request.workload().empty() && request.workload() != "full" &&
      request.workload() != "small") {
    return absl::InvalidArgumentError(
        absl::StrCat("workload: '", request.workload(), "' must be full or small"));
  }
  if (request.config().correctness_draws() < 0 || request.config().timing_draws() < 0 ||
      request.config().warmup_calls() < 0 || request.config().recheck_draws() < 0) {
    return absl::InvalidArgumentError("config: draw counts must be >= 0");
  }
  return absl::OkStatus();
}

}  // namespace

// A started judge host waiting for its request on stdin (it imports torch first). Owns the
// process (its supervisor kills and reaps it) and the two pipe ends that talk to it.
class HostProcess {
 public:
  static absl::StatusOr<std::unique_ptr<HostProcess>> Spawn(const JudgeOptions& options) {
    auto host = std::unique_ptr<HostProcess>(new HostProcess());
    Pipe in, reply, out, err;
    for (Pipe* p : {&in, &reply, &out, &err}) {
      if (auto status = p->Open(); !status.ok()) return status;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in.read, 0);
    posix_spawn_file_actions_adddup2(&actions, out.write, 1);
    posix_spawn_file_actions_adddup2(&actions, err.write, 2);
    posix_spawn_file_actions_adddup2(&actions, reply.write, 3);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);

    std::vector<std::string> args = {options.python, "-m", "metakernelbench.judge.host",
                                     "--reply-fd", "3"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_storage;
    if (options.inherit_environment) {
      for (char** e = environ; *e != nullptr; ++e) env_storage.emplace_back(*e);
    }
    for (const std::string& extra : options.environment) env_storage.push_back(extra);
    std::vector<char*> envp;
    for (std::string& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);

    pid_t pid = 0;
    const int spawned = ::posix_spawnp(&pid, options.python.c_str(), &actions, &attributes,
                                       argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (spawned != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot start the judge host with '", options.python, "': ", std::strerror(spawned)));
    }
    in.CloseRead();
    reply.CloseWrite();
    out.CloseWrite();
    err.CloseWrite();
    SupervisorOptions supervisor_options;
    supervisor_options.tail_bytes = 8192;
    host->supervisor_ =
        std::make_unique<ProcessSupervisor>(pid, out.read, err.read, supervisor_options);
    out.read = err.read = -1;  // owned by the supervisor now
    host->request_fd_ = std::exchange(in.write, -1);
    host->reply_fd_ = std::exchange(reply.read, -1);
    return host;
  }

  HostProcess(const HostProcess&) = delete;
  HostProcess& operator=(const HostProcess&) = delete;
  ~HostProcess() {
    if (request_fd_ >= 0) ::close(request_fd_);
    if (reply_fd_ >= 0) ::close(reply_fd_);
  }

  bool alive() { return supervisor_->alive(); }

  // Sends the request, waits for the verdict until `deadline`, and reaps the host.
  absl::StatusOr<v1::Verdict> Serve(const v1::EvaluationRequest& request, absl::Time deadline,
                                    double total_timeout_s) {
    const std::string payload = request.SerializeAsString();
    size_t written = 0;
    ::signal(SIGPIPE, SIG_IGN);
    while (written < payload.size()) {
      const ssize_t n = ::write(request_fd_, payload.data() + written, payload.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        break;  // the host died early; its exit status says why
      }
      written += static_cast<size_t>(n);
    }
    ::close(std::exchange(request_fd_, -1));

    std::string verdict_bytes;
    bool timed_out = false;
    char buffer[1 << 16];
    while (true) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        timed_out = true;
        supervisor_->Kill(true);
        break;
      }
      struct pollfd p = {reply_fd_, POLLIN, 0};
      const int ready = ::poll(
          &p, 1, static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1000)));
      if (ready < 0 && errno != EINTR) return Errno("poll");
      if (ready <= 0) continue;
      const ssize_t n = ::read(reply_fd_, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      verdict_bytes.append(buffer, static_cast<size_t>(n));
    }
    const v1::ProcessOutcome outcome = supervisor_->Finish(absl::Seconds(30));
    const std::string tail = outcome.stderr_tail();
    if (timed_out) {
      return absl::DeadlineExceededError(absl::StrCat("the judge host ran past its deadline (",
                                                      total_timeout_s, " s + margin); stderr:\n",
                                                      tail));
    }
    if (outcome.signal() != 0 || outcome.exit_code() != 0) {
      return absl::InternalError(absl::StrCat("the judge host failed (",
                                              outcome.signal() != 0
                                                  ? outcome.signal_name()
                                                  : absl::StrCat("exit code ", outcome.exit_code()),
                                              "); stderr:\n", tail));
    }
    v1::Verdict verdict;
    if (!verdict.ParseFromString(verdict_bytes) ||
        verdict.status() == v1::VERDICT_STATUS_UNSPECIFIED) {
      return absl::InternalError(
          absl::StrCat("the judge host answered no verdict; stderr:\n", tail));
    }
    return verdict;
  }

 private:
  HostProcess() = default;

  std::unique_ptr<ProcessSupervisor> supervisor_;
  int request_fd_ = -1;
  int reply_fd_ = -1;
};

Judge::Judge(JudgeOptions options) : options_(std::move(options)) {}

Judge::~Judge() = default;

absl::StatusOr<std::unique_ptr<HostProcess>> Judge::TakeHost() const {
  std::unique_ptr<HostProcess> host;
  {
    absl::MutexLock lock(&mutex_);
    host = std::move(spare_);
  }
  if (host != nullptr && !host->alive()) host.reset();
  if (host == nullptr) {
    auto spawned = HostProcess::Spawn(options_);
    if (!spawned.ok()) return spawned.status();
    host = std::move(*spawned);
  }
  if (options_.keep_warm_host) {
    // The next evaluation's host starts importing now, while this one is served.
    if (auto next = HostProcess::Spawn(options_); next.ok()) {
      absl::MutexLock lock(&mutex_);
      if (spare_ == nullptr) spare_ = std::move(*next);
    }
  }
  return host;
}

absl::StatusOr<v1::Verdict> Judge::Evaluate(const v1::EvaluationRequest& request) const {
  if (auto status = ValidateRequest(request); !status.ok()) return status;
  const v1::JudgeConfig config = WithDefaults(request.config());
  auto host = TakeHost();
  if (!host.ok()) return host.status();
  const absl::Time deadline =
      absl::Now() + absl::Seconds(config.total_timeout_s()) + options_.deadline_margin;
  return (*host)->Serve(request, deadline, config.total_timeout_s());
}

}  // namespace mkb
