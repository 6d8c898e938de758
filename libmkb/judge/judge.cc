#include "libmkb/judge/judge.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libmkb/core/sha256.h"
#include "libmkb/core/unique_fd.h"
#include "libmkb/judge/process_supervisor.h"
#include "libmkb/judge/seeds.h"
#include "libmkb/judge/verdict_builder.h"

extern char** environ;

namespace mkb {
namespace {

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// A new pipe, both ends close-on-exec.
absl::StatusOr<UniquePipe> OpenPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Errno("pipe2");
  UniquePipe pipe;
  pipe.read.reset(fds[0]);
  pipe.write.reset(fds[1]);
  return pipe;
}

// Each of `pipes` a new pipe (OpenPipe).
absl::Status OpenPipes(std::initializer_list<UniquePipe*> pipes) {
  for (UniquePipe* p : pipes) {
    absl::StatusOr<UniquePipe> opened = OpenPipe();
    if (!opened.ok()) return opened.status();
    *p = *std::move(opened);
  }
  return absl::OkStatus();
}

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
      request.config().warmup_calls() < 0 || request.config().recheck_draws() < 0 ||
      request.config().fastest_recheck_draws() < 0) {
    return absl::InvalidArgumentError("config: draw counts must be >= 0");
  }
  if (request.config().has_pin_cpu()) {
    // The host inherits this process's CPUs: the pinned one must be among them.
    const int cpu = request.config().pin_cpu();
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return Errno("sched_getaffinity");
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
      std::string usable;
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &allowed)) absl::StrAppend(&usable, usable.empty() ? "" : ",", c);
      return absl::InvalidArgumentError(absl::StrCat(
          "config.pin_cpu: CPU ", cpu, " is not one this process may run on (", usable, ")"));
    }
  }
  return absl::OkStatus();
}

constexpr char kFrameMagic[] = "MKB1";
constexpr size_t kFrameHeaderBytes = 8;
constexpr size_t kFrameTagBytes = 32;
constexpr uint32_t kMaxVerdictBytes = 64u << 20;

uint32_t FrameLength(const std::string& frame) {
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i)
    length |= static_cast<uint32_t>(static_cast<unsigned char>(frame[4 + i])) << (8 * i);
  return length;
}

// write(2) with SIGPIPE blocked on this thread (a pending one is consumed), so that a host that
// died never kills the caller; the library leaves the process's signal dispositions alone.
ssize_t WriteNoSigpipe(int fd, const char* data, size_t size) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  const ssize_t n = ::write(fd, data, size);
  const int saved = errno;
  if (n < 0 && saved == EPIPE) {
    const struct timespec zero = {0, 0};
    sigtimedwait(&block, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return n;
}

// The host's environment before its GPU is chosen: this process's (when inherited) and the
// options' entries, with only the names HostEnvironmentAllowed accepts.
std::vector<std::string> HostEnvironment(const JudgeOptions& options);

}  // namespace

bool HostEnvironmentAllowed(absl::string_view name) {
  static constexpr absl::string_view kExact[] = {
      "PATH",         "HOME",         "LANG",
      "LANGUAGE",     "TZ",           "TMPDIR",
      "TERM",         "USER",         "LOGNAME",
      "SHELL",        "VIRTUAL_ENV",  "LD_LIBRARY_PATH",
      "LIBRARY_PATH", "CONDA_PREFIX", "SOURCE_DATE_EPOCH"};
  static constexpr absl::string_view kPrefixes[] = {
      "LC_",   "PYTHON",   "CUDA_", "NVIDIA_", "CUPTI_", "NCCL_", "TORCH_", "PYTORCH_", "TVM_",
      "CUTE_", "CUTLASS_", "MKB_",  "OMP_",    "MKL_",   "KMP_",  "XDG_",   "NVSHMEM_", "TRITON_"};
  for (absl::string_view exact : kExact) {
    if (name == exact) return true;
  }
  for (absl::string_view prefix : kPrefixes) {
    if (absl::StartsWith(name, prefix)) {
      // Library settings, never credentials that happen to share a prefix.
      return !absl::StrContains(name, "KEY") && !absl::StrContains(name, "TOKEN") &&
             !absl::StrContains(name, "SECRET") && !absl::StrContains(name, "PASSWORD");
    }
  }
  return false;
}

namespace {

std::vector<std::string> HostEnvironment(const JudgeOptions& options) {
  std::vector<std::string> out;
  auto add = [&](absl::string_view entry) {
    const size_t eq = entry.find('=');
    if (eq != absl::string_view::npos && HostEnvironmentAllowed(entry.substr(0, eq)))
      out.emplace_back(entry);
  };
  if (options.inherit_environment) {
    for (char** e = environ; *e != nullptr; ++e) add(*e);
  }
  for (const std::string& extra : options.environment) add(extra);
  return out;
}

// Starts `python -m metakernelbench.judge.host <fd3_flag> 3 [--dsl D]` as the leader of a
// process group of its own, with `stdin_fd` (-1: /dev/null), `out_fd` and `err_fd` as its fds
// 0-2, `fd3` as its fd 3 and `environment` as its whole environment. `what` names it in the
// error. Returns its pid.
absl::StatusOr<pid_t> SpawnHostProgram(const JudgeOptions& options, v1::Dsl dsl,
                                       const char* fd3_flag, int stdin_fd, int out_fd, int err_fd,
                                       int fd3, std::vector<std::string> environment,
                                       absl::string_view what) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawn_file_actions_adddup2(&actions, fd3, 3);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);

  std::vector<std::string> args = {options.python, "-m", "metakernelbench.judge.host", fd3_flag,
                                   "3"};
  if (dsl == v1::CUTEDSL || dsl == v1::TIRX) {
    args.push_back("--dsl");
    args.push_back(dsl == v1::CUTEDSL ? "cutedsl" : "tirx");
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  const int spawned =
      ::posix_spawnp(&pid, options.python.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start the ", what, " with '", options.python, "': ", std::strerror(spawned)));
  }
  return pid;
}

// The supervisor of a host or a host template: the tails its errors are reported with.
SupervisorOptions HostSupervisorOptions() {
  SupervisorOptions options;
  options.tail_bytes = 8192;
  return options;
}

}  // namespace

std::string EncodeHostFrame(absl::string_view payload, absl::string_view key) {
  std::string frame(kFrameMagic, 4);
  const uint32_t length = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  frame.append(payload.data(), payload.size());
  if (!key.empty()) {
    const auto tag = HmacSha256(key, payload);
    frame.append(reinterpret_cast<const char*>(tag.data()), tag.size());
  }
  return frame;
}

// A started judge host waiting for its request on stdin (it imports torch first). Owns the
// process (its supervisor kills and reaps it) and the two pipe ends that talk to it.
class HostProcess {
 public:
  // `gpu`: the host's CUDA_VISIBLE_DEVICES ("": as the environment has it).
  static absl::StatusOr<std::unique_ptr<HostProcess>> Spawn(const JudgeOptions& options,
                                                            v1::Dsl dsl, const std::string& gpu) {
    auto host = std::unique_ptr<HostProcess>(new HostProcess());
    UniquePipe in, reply, out, err;
    if (absl::Status opened = OpenPipes({&in, &reply, &out, &err}); !opened.ok()) return opened;
    std::vector<std::string> environment;
    for (const std::string& entry : HostEnvironment(options)) {
      // The evaluation's GPU replaces whatever the environment made visible.
      if (!gpu.empty() && absl::StartsWith(entry, "CUDA_VISIBLE_DEVICES=")) continue;
      environment.push_back(entry);
    }
    if (!gpu.empty()) environment.push_back(absl::StrCat("CUDA_VISIBLE_DEVICES=", gpu));
    absl::StatusOr<pid_t> pid =
        SpawnHostProgram(options, dsl, "--reply-fd", in.read.get(), out.write.get(),
                         err.write.get(), reply.write.get(), std::move(environment), "judge host");
    if (!pid.ok()) return pid.status();
    in.read.reset();
    reply.write.reset();
    out.write.reset();
    err.write.reset();
    host->supervisor_ = std::make_unique<ProcessSupervisor>(
        *pid, std::move(out.read), std::move(err.read), HostSupervisorOptions());
    host->request_fd_ = std::move(in.write);
    host->reply_fd_ = std::move(reply.read);
    return host;
  }

  // A host forked by a template (HostTemplate::Fork): not our child, its exit status comes on
  // `exit_status`.
  static std::unique_ptr<HostProcess> Adopt(pid_t pid, UniqueFd request, UniqueFd reply,
                                            UniqueFd out, UniqueFd err, UniqueFd exit_status) {
    auto host = std::unique_ptr<HostProcess>(new HostProcess());
    host->supervisor_ = std::make_unique<ProcessSupervisor>(
        pid, std::move(out), std::move(err), std::move(exit_status), HostSupervisorOptions());
    host->request_fd_ = std::move(request);
    host->reply_fd_ = std::move(reply);
    return host;
  }

  HostProcess(const HostProcess&) = delete;
  HostProcess& operator=(const HostProcess&) = delete;
  ~HostProcess() = default;

  bool alive() { return supervisor_->alive(); }

  // Sends the request and the key, waits for the verdict until `deadline`, and reaps the host.
  absl::StatusOr<v1::Verdict> Serve(const v1::EvaluationRequest& request, absl::Time deadline,
                                    double total_timeout_s) {
    absl::StatusOr<std::vector<uint64_t>> key_words = DrawSeeds(4);
    if (!key_words.ok()) return key_words.status();
    std::string key;
    for (uint64_t w : *key_words) key.append(reinterpret_cast<const char*>(&w), sizeof(w));
    const std::string payload =
        EncodeHostFrame(request.SerializeAsString(), "") + EncodeHostFrame(key, "");
    size_t written = 0;
    while (written < payload.size()) {
      // MSG_NOSIGNAL is for sockets; a pipe whose reader died raises SIGPIPE, so the write goes
      // through a helper that blocks it for this thread only.
      const ssize_t n =
          WriteNoSigpipe(request_fd_.get(), payload.data() + written, payload.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        break;  // the host died early; its exit status says why
      }
      written += static_cast<size_t>(n);
    }
    request_fd_.reset();

    // Exactly one frame: header, payload, tag. Nothing after it is read.
    std::string frame;
    size_t wanted = kFrameHeaderBytes;
    bool timed_out = false;
    bool header_read = false;
    char buffer[1 << 16];
    while (frame.size() < wanted) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        timed_out = true;
        supervisor_->Kill(true);
        break;
      }
      struct pollfd p = {reply_fd_.get(), POLLIN, 0};
      const int ready = ::poll(
          &p, 1, static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1000)));
      if (ready < 0 && errno != EINTR) return Errno("poll");
      if (ready <= 0) continue;
      const size_t room = std::min(sizeof(buffer), wanted - frame.size());
      const ssize_t n = ::read(reply_fd_.get(), buffer, room);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      frame.append(buffer, static_cast<size_t>(n));
      if (!header_read && frame.size() >= kFrameHeaderBytes) {
        header_read = true;
        if (frame.compare(0, 4, kFrameMagic) != 0) break;  // not a frame: rejected below
        const uint32_t length = FrameLength(frame);
        if (length > kMaxVerdictBytes) break;
        wanted = kFrameHeaderBytes + length + kFrameTagBytes;
      }
    }
    reply_fd_.reset();
    const absl::Time answered = absl::Now();
    const v1::ProcessOutcome outcome = supervisor_->Finish(absl::Seconds(30));
    const double exit_s = absl::ToDoubleSeconds(absl::Now() - answered);
    const std::string& tail = outcome.stderr_tail();
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
    if (frame.size() < kFrameHeaderBytes || frame.size() != wanted ||
        frame.compare(0, 4, kFrameMagic) != 0) {
      return absl::InternalError(
          absl::StrCat("the judge host answered no verdict frame; stderr:\n", tail));
    }
    const absl::string_view body =
        absl::string_view(frame).substr(kFrameHeaderBytes, FrameLength(frame));
    const auto tag = HmacSha256(key, body);
    if (!ConstantTimeEqual(
            absl::string_view(frame).substr(kFrameHeaderBytes + body.size()),
            absl::string_view(reinterpret_cast<const char*>(tag.data()), tag.size()))) {
      return absl::InternalError(
          "the verdict frame failed authentication (it was not written by the judge host)");
    }
    v1::Verdict verdict;
    if (!verdict.ParseFromString(std::string(body)) ||
        verdict.status() == v1::VERDICT_STATUS_UNSPECIFIED) {
      return absl::InternalError(
          absl::StrCat("the judge host answered no verdict; stderr:\n", tail));
    }
    // The caller's wait for the host to exit once its verdict was in (PhaseTimes.steps).
    (*verdict.mutable_phase_times()->mutable_steps())["caller.host_exit"] = exit_s;
    return verdict;
  }

 private:
  HostProcess() = default;

  std::unique_ptr<ProcessSupervisor> supervisor_;
  UniqueFd request_fd_;
  UniqueFd reply_fd_;
};

// A started host template (`python -m metakernelbench.judge.host --template-fd 3 --dsl D`):
// an interpreter that imports torch and the DSL once, never touches CUDA, and forks a host per
// request on a SOCK_SEQPACKET channel (python/metakernelbench/judge/template.py has the
// protocol). Thread-safe: one fork request at a time on the channel.
class HostTemplate {
 public:
  static absl::StatusOr<std::unique_ptr<HostTemplate>> Spawn(const JudgeOptions& options,
                                                             v1::Dsl dsl) {
    auto started = std::unique_ptr<HostTemplate>(new HostTemplate());
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
      return Errno("socketpair");
    UniqueFd ours(pair[0]), theirs(pair[1]);
    UniquePipe out, err;
    if (absl::Status opened = OpenPipes({&out, &err}); !opened.ok()) return opened;
    absl::StatusOr<pid_t> pid =
        SpawnHostProgram(options, dsl, "--template-fd", /*stdin_fd=*/-1, out.write.get(),
                         err.write.get(), theirs.get(), HostEnvironment(options), "host template");
    if (!pid.ok()) return pid.status();
    out.write.reset();
    err.write.reset();
    theirs.reset();
    started->supervisor_ = std::make_unique<ProcessSupervisor>(
        *pid, std::move(out.read), std::move(err.read), HostSupervisorOptions());
    started->channel_ = std::move(ours);
    started->ready_timeout_ = options.deadline_margin;
    return started;
  }

  HostTemplate(const HostTemplate&) = delete;
  HostTemplate& operator=(const HostTemplate&) = delete;
  ~HostTemplate() {
    {
      absl::MutexLock lock(&mutex_);
      channel_.reset();  // the template kills what it forked and exits
    }
    // An idle template exits at once (0.1 s); one still importing would notice the closed
    // channel only when done, seconds later, and is killed instead (it has forked nothing).
    if (supervisor_ != nullptr) supervisor_->Finish(absl::Milliseconds(500));  // null: not started
  }

  bool alive() { return supervisor_->alive(); }

  // A host forked for one evaluation, with CUDA_VISIBLE_DEVICES set to `gpu` ("": the
  // template's). Waits for the template to finish its imports (up to the judge's
  // deadline_margin); an error when the template is gone or answers no pid.
  absl::StatusOr<std::unique_ptr<HostProcess>> Fork(const std::string& gpu) {
    UniquePipe in, out, err, reply, status;
    if (absl::Status opened = OpenPipes({&in, &out, &err, &reply, &status}); !opened.ok())
      return opened;
    const int passed[5] = {in.read.get(), out.write.get(), err.write.get(), reply.write.get(),
                           status.write.get()};
    std::string message = absl::StrCat("GPU ", gpu);
    absl::MutexLock lock(&mutex_);
    struct iovec iov = {message.data(), message.size()};
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(passed))];
    std::memset(control, 0, sizeof(control));
    struct msghdr header = {};
    header.msg_iov = &iov;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof(control);
    struct cmsghdr* rights = CMSG_FIRSTHDR(&header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(passed));
    std::memcpy(CMSG_DATA(rights), passed, sizeof(passed));
    ssize_t sent;
    do {
      sent = ::sendmsg(channel_.get(), &header, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) return Unavailable("the host template's channel is closed");
    // The template holds its copies now.
    in.read.reset();
    out.write.reset();
    err.write.reset();
    reply.write.reset();
    status.write.reset();
    char answer[512];
    const absl::Time deadline = absl::Now() + ready_timeout_;
    while (true) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return Unavailable(absl::StrCat("the host template did not answer within ",
                                        absl::FormatDuration(ready_timeout_)));
      }
      struct pollfd p = {channel_.get(), POLLIN, 0};
      const int ready = ::poll(
          &p, 1, static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1000)));
      if (ready < 0 && errno != EINTR) return Errno("poll");
      if (ready <= 0) continue;
      const ssize_t n = ::recv(channel_.get(), answer, sizeof(answer), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 4) return Unavailable("the host template exited");
      int32_t pid = 0;
      for (int i = 0; i < 4; ++i)
        pid |= static_cast<int32_t>(static_cast<unsigned char>(answer[i])) << (8 * i);
      if (pid <= 0) {
        return Unavailable(absl::StrCat("the host template could not fork a host: ",
                                        absl::string_view(answer + 4, n - 4)));
      }
      return HostProcess::Adopt(pid, std::move(in.write), std::move(reply.read),
                                std::move(out.read), std::move(err.read), std::move(status.read));
    }
  }

 private:
  HostTemplate() = default;

  absl::Status Unavailable(absl::string_view why) {
    return absl::UnavailableError(
        absl::StrCat(why, "; its stderr:\n", supervisor_->Snapshot().stderr_tail()));
  }

  std::unique_ptr<ProcessSupervisor> supervisor_;
  absl::Mutex mutex_;
  UniqueFd channel_ ABSL_GUARDED_BY(mutex_);
  absl::Duration ready_timeout_;
};

Judge::Judge(JudgeOptions options)
    : options_(std::move(options)),
      pool_(options_.devices.empty() ? VisibleGpus(HostEnvironment(options_)) : options_.devices) {}

Judge::~Judge() = default;

absl::StatusOr<std::unique_ptr<HostProcess>> Judge::TakeHost(v1::Dsl dsl,
                                                             const DevicePool::Lease& gpu) const {
  const std::pair<int, int> key(dsl, gpu.slot());
  std::unique_ptr<HostProcess> host;
  {
    absl::MutexLock lock(&mutex_);
    auto it = spares_.find(key);
    if (it != spares_.end()) host = std::move(it->second);
  }
  if (host != nullptr && !host->alive()) host.reset();
  if (host == nullptr && options_.host_template) {
    absl::StatusOr<std::unique_ptr<HostProcess>> forked = ForkHost(dsl, gpu.device());
    if (forked.ok()) return forked;
    // A template that cannot serve is retired (the next evaluation starts another); this one
    // starts its own host, so a broken template costs time, never a verdict.
  }
  if (host == nullptr) {
    auto spawned = HostProcess::Spawn(options_, dsl, gpu.device());
    if (!spawned.ok()) return spawned.status();
    host = std::move(*spawned);
  }
  if (options_.keep_warm_host && !options_.host_template) {
    // The next evaluation's host for this GPU starts importing now, while this one is served.
    if (auto next = HostProcess::Spawn(options_, dsl, gpu.device()); next.ok()) {
      absl::MutexLock lock(&mutex_);
      std::unique_ptr<HostProcess>& spare = spares_[key];
      if (spare == nullptr) spare = std::move(*next);
    }
  }
  return host;
}

absl::StatusOr<std::unique_ptr<HostProcess>> Judge::ForkHost(v1::Dsl dsl,
                                                             const std::string& gpu) const {
  std::shared_ptr<HostTemplate> from;
  {
    absl::MutexLock lock(&mutex_);
    std::shared_ptr<HostTemplate>& slot = templates_[dsl];
    if (slot != nullptr && !slot->alive()) slot.reset();
    if (slot == nullptr) {
      absl::StatusOr<std::unique_ptr<HostTemplate>> started = HostTemplate::Spawn(options_, dsl);
      if (!started.ok()) return started.status();
      slot = std::move(*started);
    }
    from = slot;
  }
  absl::StatusOr<std::unique_ptr<HostProcess>> host = from->Fork(gpu);
  if (!host.ok()) {
    absl::MutexLock lock(&mutex_);
    auto it = templates_.find(dsl);
    if (it != templates_.end() && it->second == from) templates_.erase(it);
  }
  return host;
}

void Judge::Prewarm(v1::Dsl dsl) const {
  if (!options_.host_template) return;
  absl::MutexLock lock(&mutex_);
  std::shared_ptr<HostTemplate>& slot = templates_[dsl];
  if (slot != nullptr && slot->alive()) return;
  absl::StatusOr<std::unique_ptr<HostTemplate>> started = HostTemplate::Spawn(options_, dsl);
  if (started.ok()) slot = std::move(*started);
}

absl::StatusOr<v1::Verdict> Judge::Evaluate(const v1::EvaluationRequest& request) const {
  if (auto status = ValidateRequest(request); !status.ok()) return status;
  const v1::JudgeConfig config = WithDefaults(request.config());
  // The GPU is held from before the host is taken until its verdict is in: no other
  // evaluation's host or worker runs on it meanwhile.
  const DevicePool::Lease gpu = pool_.Acquire();
  const absl::Time taking = absl::Now();
  auto host = TakeHost(request.dsl(), gpu);
  if (!host.ok()) return host.status();
  const double take_s = absl::ToDoubleSeconds(absl::Now() - taking);
  const absl::Time deadline =
      absl::Now() + absl::Seconds(config.total_timeout_s()) + options_.deadline_margin;
  absl::StatusOr<v1::Verdict> verdict = (*host)->Serve(request, deadline, config.total_timeout_s());
  if (verdict.ok()) {
    v1::PhaseTimes* times = verdict->mutable_phase_times();
    times->set_queue_s(absl::ToDoubleSeconds(gpu.waited()));
    // A host forked from the template (or started, or a spare), before its request was sent.
    (*times->mutable_steps())["caller.take_host"] = take_s;
  }
  return verdict;
}

}  // namespace mkb
