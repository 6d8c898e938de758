// GPUs as slots: the device pool, the visible GPUs, and mkb::Judge holding one GPU per
// evaluation (with a stand-in host that reports its CUDA_VISIBLE_DEVICES: no GPU needed).
#include "libmkb/judge/device_pool.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch_test_macros.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libmkb/judge/judge.h"

namespace {

namespace fs = std::filesystem;

struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() /
          absl::StrCat("mkb-device-pool-", ::getpid(), "-", absl::ToUnixNanos(absl::Now()));
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code error;
    fs::remove_all(dir, error);
  }
};

}  // namespace

TEST_CASE("the visible GPUs: CUDA_VISIBLE_DEVICES, else the driver's device nodes") {
  Scratch scratch;
  const std::string dev = scratch.dir.string();
  CHECK(mkb::VisibleGpus({}, dev).empty());  // no GPU
  for (const char* node : {"nvidia0", "nvidia3", "nvidiactl", "nvidia-uvm", "nvidia-modeset"})
    std::ofstream(scratch.dir / node) << "";
  // Two GPU nodes: CUDA numbers them 0 and 1, whatever their minor numbers.
  CHECK(mkb::VisibleGpus({"PATH=/bin"}, dev) == std::vector<std::string>{"0", "1"});
  CHECK(mkb::VisibleGpus({"CUDA_VISIBLE_DEVICES=2, 5"}, dev) == std::vector<std::string>{"2", "5"});
  CHECK(mkb::VisibleGpus({"CUDA_VISIBLE_DEVICES=GPU-8f0e,MIG-1"}, dev) ==
        std::vector<std::string>{"GPU-8f0e", "MIG-1"});
  // As CUDA reads it: an empty value hides every GPU; the list ends at an entry it cannot read.
  CHECK(mkb::VisibleGpus({"CUDA_VISIBLE_DEVICES="}, dev).empty());
  CHECK(mkb::VisibleGpus({"CUDA_VISIBLE_DEVICES=-1"}, dev).empty());
  CHECK(mkb::VisibleGpus({"CUDA_VISIBLE_DEVICES=1,x,2"}, dev) == std::vector<std::string>{"1"});
  // The last setting wins (the options' entries come after the inherited ones).
  CHECK(mkb::VisibleGpus({"CUDA_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES=3"}, dev) ==
        std::vector<std::string>{"3"});
}

TEST_CASE("GPU lists (the --gpus option) are checked, naming the option") {
  CHECK(*mkb::ParseGpuList("0,1") == std::vector<std::string>{"0", "1"});
  CHECK(*mkb::ParseGpuList(" 3 , GPU-ab12 ") == std::vector<std::string>{"3", "GPU-ab12"});
  for (const char* bad : {"", "0,,1", "a", "-1", "0,0", "1.5"}) {
    const auto parsed = mkb::ParseGpuList(bad, "--gpus");
    INFO(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(parsed.status().message().find("--gpus") == 0);
  }
}

TEST_CASE("a device pool never hands one GPU to two holders, and spreads over all of them") {
  mkb::DevicePool pool({"0", "1", "2"});
  std::vector<std::atomic<int>> holders(3);
  std::atomic<int> overlaps{0};
  std::vector<std::atomic<int>> uses(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        mkb::DevicePool::Lease lease = pool.Acquire();  // no Catch2 assertion off the main thread
        if (lease.device() != absl::StrCat(lease.slot())) overlaps.fetch_add(1000);
        if (holders[lease.slot()].fetch_add(1) != 0) overlaps.fetch_add(1);
        uses[lease.slot()].fetch_add(1);
        absl::SleepFor(absl::Microseconds(200));
        holders[lease.slot()].fetch_sub(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(overlaps.load() == 0);
  for (auto& u : uses) CHECK(u.load() > 0);

  SECTION("a lease moved keeps its slot; the slot is free again once the lease is gone") {
    mkb::DevicePool one({"GPU-x"});
    {
      mkb::DevicePool::Lease first = one.Acquire();
      mkb::DevicePool::Lease moved(std::move(first));
      CHECK(moved.device() == "GPU-x");
    }
    mkb::DevicePool::Lease again = one.Acquire();  // would block forever if the slot leaked
    CHECK(again.waited() < absl::Seconds(1));
  }
  SECTION("no GPUs: one anonymous slot, so evaluations still run one at a time") {
    mkb::DevicePool none({});
    CHECK(none.devices() == std::vector<std::string>{""});
  }
}

TEST_CASE("the judge holds one GPU per evaluation: concurrent evaluations never share one") {
  Scratch scratch;
  const std::string log = (scratch.dir / "hosts.log").string();
  mkb::JudgeOptions options;
  options.python = std::string(MKB_SOURCE_DIR) + "/tests/data/fake_judge_host.py";
  options.environment = {absl::StrCat("MKB_FAKE_HOST_LOG=", log), "MKB_FAKE_HOST_SECONDS=0.25",
                         "CUDA_VISIBLE_DEVICES=7"};  // replaced by each evaluation's slot
  options.devices = {"fake0", "fake1"};
  options.keep_warm_host = true;
  const mkb::Judge judge(options);
  CHECK(judge.devices() == options.devices);

  mkb::v1::EvaluationRequest request;
  request.set_problem_dir("/nonexistent/problem");  // the stand-in host reads none of it
  request.set_dsl(mkb::v1::CUTEDSL);
  request.set_kernel_source("def solve(*a):\n    return a\n");
  constexpr int kEvaluations = 6;
  std::vector<absl::StatusOr<mkb::v1::Verdict>> verdicts(kEvaluations);
  std::vector<std::thread> threads;
  for (int i = 0; i < kEvaluations; ++i) {
    threads.emplace_back([&, i] { verdicts[i] = judge.Evaluate(request); });
  }
  for (std::thread& t : threads) t.join();

  std::map<std::string, int> judged_on;
  double queued = 0;
  for (const auto& verdict : verdicts) {
    REQUIRE(verdict.ok());
    CHECK(verdict->status() == mkb::v1::PASSED);
    ++judged_on[verdict->environment().visible_devices()];
    queued += verdict->phase_times().queue_s();
  }
  // Each host saw its slot alone, never the environment's CUDA_VISIBLE_DEVICES.
  CHECK(judged_on == std::map<std::string, int>{{"fake0", 3}, {"fake1", 3}});
  // Six evaluations of 0.25 s on two slots: four of them waited for a GPU.
  CHECK(queued > 0.5);

  // The hosts' own records: on each slot, one evaluation ends before the next starts.
  std::ifstream in(log);
  std::map<std::string, std::vector<std::pair<double, int>>> events;  // slot -> (time, +1/-1)
  std::string device, what;
  double at = 0;
  while (in >> device >> what >> at) events[device].push_back({at, what == "start" ? 1 : -1});
  REQUIRE(events.size() == 2);
  for (auto& [slot, list] : events) {
    INFO(slot);
    CHECK(list.size() == 2 * 3);
    std::sort(list.begin(), list.end());
    int held = 0;
    for (const auto& [time, delta] : list) {
      held += delta;
      CHECK(held <= 1);
    }
  }
}
