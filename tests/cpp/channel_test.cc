#include "libmkb/judge/channel.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "libmkb/core/utf8.h"
#include "libmkb/judge/process_supervisor.h"
#include "libmkb/judge/seeds.h"
#include "libmkb/judge/shared_segment.h"
#include "libmkb/judge/timing_summary.h"

TEST_CASE("messages and shared segments cross a channel") {
  auto pair = mkb::Channel::CreatePair();
  REQUIRE(pair.ok());
  auto segment = mkb::SharedSegment::Create(4096);
  REQUIRE(segment.ok());
  std::strcpy(segment->data(), "tensor bytes");
  REQUIRE(pair->first.Send("hello", {segment->fd()}).ok());
  auto received = pair->second.Receive(absl::Now() + absl::Seconds(5));
  REQUIRE(received.ok());
  CHECK(received->bytes == "hello");
  REQUIRE(received->fds.size() == 1);
  auto mapped = mkb::SharedSegment::Map(received->fds[0], /*writable=*/true);
  REQUIRE(mapped.ok());
  CHECK(std::string(mapped->data()) == "tensor bytes");
  mapped->data()[0] = 'T';  // shared: the sender sees the write
  CHECK(segment->data()[0] == 'T');
  REQUIRE(pair->first.Send("").ok());
  auto empty = pair->second.Receive(absl::Now() + absl::Seconds(5));
  REQUIRE(empty.ok());
  CHECK(empty->bytes.empty());
}

TEST_CASE("a shared segment's size is sealed: the other side cannot shrink it under a mapping") {
  // A red team's worker truncated the host's input segment through a descriptor it held, and the
  // host's next read of its mapping died of SIGBUS (a judge failure instead of the verdict).
  auto segment = mkb::SharedSegment::Create(8192);
  REQUIRE(segment.ok());
  const int copy = ::dup(segment->fd());
  REQUIRE(copy >= 0);
  CHECK(::ftruncate(copy, 0) != 0);
  CHECK(errno == EPERM);
  CHECK(::ftruncate(copy, 1 << 20) != 0);
  auto mapped = mkb::SharedSegment::Map(copy, /*writable=*/true);
  REQUIRE(mapped.ok());
  CHECK(mapped->fd() == -1);    // closed once mapped
  segment->data()[8191] = 'x';  // every byte still there
  CHECK(mapped->data()[8191] == 'x');
  // A segment whose size is not sealed is refused.
  const int plain = ::memfd_create("plain", MFD_CLOEXEC);
  REQUIRE(plain >= 0);
  REQUIRE(::ftruncate(plain, 4096) == 0);
  CHECK_FALSE(mkb::SharedSegment::Map(plain, /*writable=*/false).ok());
}

TEST_CASE("receive honours its deadline and reports a closed peer") {
  auto pair = mkb::Channel::CreatePair();
  REQUIRE(pair.ok());
  auto late = pair->second.Receive(absl::Now() + absl::Milliseconds(50));
  CHECK(late.status().code() == absl::StatusCode::kDeadlineExceeded);
  { mkb::Channel closing = std::move(pair->first); }
  auto gone = pair->second.Receive(absl::Now() + absl::Seconds(5));
  CHECK(gone.status().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("the supervisor keeps output tails and kills on demand") {
  int out[2], err[2];
  REQUIRE(::pipe(out) == 0);
  REQUIRE(::pipe(err) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    for (int i = 0; i < 1000; ++i) ::write(1, "0123456789\n", 11);
    ::write(2, "about to hang\n", 14);
    ::pause();
    ::_exit(0);
  }
  ::setpgid(pid, pid);
  ::close(out[1]);
  ::close(err[1]);
  mkb::SupervisorOptions options;
  options.tail_bytes = 100;
  mkb::ProcessSupervisor supervisor(pid, mkb::UniqueFd(out[0]), mkb::UniqueFd(err[0]), options);
  absl::SleepFor(absl::Milliseconds(200));
  CHECK(supervisor.alive());
  supervisor.Kill(/*timed_out=*/true);
  auto outcome = supervisor.Finish(absl::Seconds(5));
  CHECK(outcome.timed_out());
  CHECK(outcome.signal_name() == "SIGKILL");
  CHECK(outcome.stderr_tail() == "about to hang\n");
  CHECK(outcome.stdout_tail().find("bytes cut") != std::string::npos);
  CHECK(outcome.stdout_tail().size() < 200);
}

namespace {

// A stand-in for the host template: forks `pid` (its own group), which exits with `code` (or
// hangs when code < 0), writes its pid on `pid_pipe`, then either reports its wait status on
// `status_pipe` and reaps it once that pipe's reader is gone, or (report == false) dies at once,
// orphaning it. Returns the stand-in's pid.
pid_t StartReportingParent(int code, bool report, int pid_pipe, int status_pipe) {
  const pid_t parent = ::fork();
  if (parent != 0) return parent;
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    if (code < 0) ::pause();
    ::_exit(code);
  }
  ::setpgid(child, child);
  ::write(pid_pipe, &child, sizeof(child));
  if (!report) ::_exit(0);
  siginfo_t info = {};
  ::waitid(P_PID, child, &info, WEXITED | WNOWAIT);
  const int status = info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : info.si_status;
  ::write(status_pipe, &status, sizeof(status));
  struct pollfd p = {status_pipe, 0, 0};
  ::poll(&p, 1, 30000);  // POLLERR once the reader closed
  ::waitpid(child, nullptr, 0);
  ::_exit(0);
}

// Exited: no such process, or a zombie nobody reaps yet (an orphan's new parent may be slow).
bool Gone(pid_t pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t close = line.rfind(')');
  return close != std::string::npos && line.compare(close + 2, 1, "Z") == 0;
}

}  // namespace

TEST_CASE("the supervisor watches a process that is not its child through its parent's report") {
  int pids[2], status[2], out[2], err[2];
  for (int* p : {pids, status, out, err}) REQUIRE(::pipe(p) == 0);
  SECTION("its exit code arrives as its parent reported it, and it stays a zombie until read") {
    const pid_t parent = StartReportingParent(3, true, pids[1], status[1]);
    pid_t child = 0;
    REQUIRE(::read(pids[0], &child, sizeof(child)) == sizeof(child));
    ::close(status[1]);
    ::close(out[1]);
    ::close(err[1]);
    {
      mkb::ProcessSupervisor supervisor(child, mkb::UniqueFd(out[0]), mkb::UniqueFd(err[0]),
                                        mkb::UniqueFd(status[0]), mkb::SupervisorOptions());
      const mkb::v1::ProcessOutcome outcome = supervisor.Finish(absl::Seconds(10));
      CHECK(outcome.exit_code() == 3);
      CHECK(outcome.signal() == 0);
      CHECK_FALSE(supervisor.alive());
    }
    ::waitpid(parent, nullptr, 0);  // it reaped the child once the supervisor let go
    CHECK(Gone(child));
  }
  SECTION("a hanging one is killed; a parent that dies without a report reads as SIGKILL") {
    const pid_t parent = StartReportingParent(-1, false, pids[1], status[1]);
    pid_t child = 0;
    REQUIRE(::read(pids[0], &child, sizeof(child)) == sizeof(child));
    ::waitpid(parent, nullptr, 0);
    ::close(status[1]);
    ::close(out[1]);
    ::close(err[1]);
    mkb::ProcessSupervisor supervisor(child, mkb::UniqueFd(out[0]), mkb::UniqueFd(err[0]),
                                      mkb::UniqueFd(status[0]), mkb::SupervisorOptions());
    const mkb::v1::ProcessOutcome outcome = supervisor.Finish(absl::Seconds(1));
    CHECK(outcome.signal_name() == "SIGKILL");
    // The orphan (reparented, no longer anyone's to report) was killed with its group.
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!Gone(child) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
    CHECK(Gone(child));
  }
  ::close(pids[0]);
  ::close(pids[1]);
}

TEST_CASE("finishing a process that exited does not wait out the watcher's poll interval") {
  // The evaluation's caller waits for this at every host's exit and the host at every worker's.
  int out[2], err[2];
  REQUIRE(::pipe(out) == 0);
  REQUIRE(::pipe(err) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::_exit(0);
  }
  ::setpgid(pid, pid);
  ::close(out[1]);
  ::close(err[1]);
  mkb::SupervisorOptions options;
  options.poll_interval = absl::Seconds(3);  // the memory check's period
  mkb::ProcessSupervisor supervisor(pid, mkb::UniqueFd(out[0]), mkb::UniqueFd(err[0]), options);
  absl::SleepFor(absl::Milliseconds(100));  // it has exited and the watcher sleeps in its poll
  const absl::Time start = absl::Now();
  const mkb::v1::ProcessOutcome outcome = supervisor.Finish(absl::Seconds(10));
  CHECK(outcome.exit_code() == 0);
  CHECK(absl::Now() - start < absl::Seconds(1));
}

TEST_CASE("an output tail is valid UTF-8, cut where a character starts") {
  // print("xx" + "\u00e9" * N): a cut at an odd offset from the end splits an e-acute in two,
  // and a tail that is not UTF-8 cannot go into the verdict's string fields.
  mkb::TailBuffer tail(101);
  std::string printed = "xx";
  for (int i = 0; i < 1000; ++i) printed += "\xc3\xa9";
  tail.Append(printed.data(), printed.size());
  std::string contents = tail.Contents();
  CHECK_FALSE(mkb::FirstInvalidUtf8(contents).has_value());
  CHECK(contents == "[... 1902 bytes cut ...]\n" + printed.substr(1902));
  mkb::v1::ProcessOutcome outcome;
  outcome.set_stdout_tail(contents);
  std::string wire;
  REQUIRE(outcome.SerializeToString(&wire));
  CHECK(mkb::v1::ProcessOutcome().ParseFromString(wire));

  // Bytes that are no UTF-8 at all, and a character cut at the end (still being written).
  mkb::TailBuffer raw(64);
  const std::string junk = "ok \xff\xfe end \xe2\x82";
  raw.Append(junk.data(), junk.size());
  CHECK(raw.Contents() == "ok \xef\xbf\xbd\xef\xbf\xbd end \xef\xbf\xbd");
}

TEST_CASE("seeds are 63-bit and fresh") {
  auto a = mkb::DrawSeeds(64), b = mkb::DrawSeeds(64);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (uint64_t s : *a) CHECK(s < (uint64_t{1} << 63));
  CHECK(*a != *b);
}

TEST_CASE("timing summaries: median, spread and an order-statistic interval") {
  std::vector<double> samples;
  for (int i = 1; i <= 101; ++i) samples.push_back(i);
  auto s = mkb::SummarizeSamples(samples, "parity_e2e");
  CHECK(s.samples() == 101);
  CHECK(s.median_ms() == 51);
  CHECK(s.min_ms() == 1);
  CHECK(s.max_ms() == 101);
  CHECK(s.ci95_low_ms() < 51);
  CHECK(s.ci95_high_ms() > 51);
  CHECK(s.ci95_high_ms() - s.ci95_low_ms() < 30);
  CHECK(s.p10_ms() == 11);
}

TEST_CASE("an authenticated channel refuses messages its peer's channel code did not write") {
  auto pair = mkb::Channel::CreatePair();
  REQUIRE(pair.ok());
  mkb::Channel& host = pair->first;
  mkb::Channel& worker = pair->second;
  const std::string key(32, 'k');
  REQUIRE(host.Send(key).ok());
  REQUIRE(worker.AcceptKey(absl::Now() + absl::Seconds(5), 'W', 'H').ok());
  host.Authenticate(key, 'H', 'W');
  CHECK(worker.authenticated());

  // Tagged messages cross both ways, in sequence.
  REQUIRE(host.Send("request 1").ok());
  auto r = worker.Receive(absl::Now() + absl::Seconds(5));
  REQUIRE(r.ok());
  CHECK(r->bytes == "request 1");
  REQUIRE(worker.Send("reply 1").ok());
  auto reply = host.Receive(absl::Now() + absl::Seconds(5));
  REQUIRE(reply.ok());
  CHECK(reply->bytes == "reply 1");

  // Raw bytes written to the worker's socket by other code in its process (the kernel): refused.
  const char forged[] = "\x10\x01\x18\x01";
  REQUIRE(::write(worker.fd(), forged, sizeof(forged) - 1) > 0);
  auto refused = host.Receive(absl::Now() + absl::Seconds(5));
  CHECK(refused.status().code() == absl::StatusCode::kPermissionDenied);

  // A replayed message (the host's own, sent back) fails too: the direction is in the tag.
  auto pair2 = mkb::Channel::CreatePair();
  REQUIRE(pair2.ok());
  pair2->first.Authenticate(key, 'H', 'W');
  pair2->second.Authenticate(key, 'H', 'W');  // tags as the host would
  REQUIRE(pair2->second.Send("looks like the host").ok());
  CHECK(pair2->first.Receive(absl::Now() + absl::Seconds(5)).status().code() ==
        absl::StatusCode::kPermissionDenied);
}
