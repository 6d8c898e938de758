#include "libmkb/judge/device_pool.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace mkb {
namespace {

// A CUDA_VISIBLE_DEVICES entry CUDA accepts: an ordinal, or a GPU / MIG UUID.
bool IsDeviceName(absl::string_view entry) {
  if (absl::StartsWith(entry, "GPU-") || absl::StartsWith(entry, "MIG-")) return entry.size() > 4;
  int index = -1;
  return absl::SimpleAtoi(entry, &index) && index >= 0;
}

}  // namespace

std::vector<std::string> VisibleGpus(const std::vector<std::string>& environment,
                                     const std::string& dev_dir) {
  constexpr absl::string_view kVisible = "CUDA_VISIBLE_DEVICES=";
  for (auto it = environment.rbegin(); it != environment.rend(); ++it) {
    if (!absl::StartsWith(*it, kVisible)) continue;
    std::vector<std::string> out;
    // CUDA stops at the first entry it cannot read ("-1" hides every GPU).
    for (absl::string_view entry : absl::StrSplit(it->substr(kVisible.size()), ',')) {
      entry = absl::StripAsciiWhitespace(entry);
      if (!IsDeviceName(entry)) break;
      out.emplace_back(entry);
    }
    return out;
  }
  std::set<int> minors;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dev_dir, error)) {
    const std::string name = entry.path().filename().string();
    int minor = -1;
    if (absl::StartsWith(name, "nvidia") && absl::SimpleAtoi(name.substr(6), &minor) && minor >= 0)
      minors.insert(minor);
  }
  // CUDA numbers the GPUs it sees 0 .. N-1 whatever their device nodes are called.
  std::vector<std::string> out;
  for (size_t i = 0; i < minors.size(); ++i) out.push_back(absl::StrCat(i));
  return out;
}

absl::StatusOr<std::vector<std::string>> ParseGpuList(absl::string_view list,
                                                      absl::string_view option) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (absl::string_view entry : absl::StrSplit(list, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(option, ": '", list, "' has an empty entry (expected e.g. 0,1)"));
    }
    if (!IsDeviceName(entry)) {
      return absl::InvalidArgumentError(absl::StrCat(
          option, ": '", entry, "' is not a GPU (an index 0, 1, ... or a UUID GPU-... / MIG-...)"));
    }
    if (!seen.insert(std::string(entry)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(option, ": GPU '", entry, "' is listed twice"));
    }
    out.emplace_back(entry);
  }
  return out;
}

DevicePool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Release(slot_);
}

const std::string& DevicePool::Lease::device() const { return pool_->devices_[slot_]; }

DevicePool::DevicePool(std::vector<std::string> devices)
    : devices_(devices.empty() ? std::vector<std::string>{""} : std::move(devices)) {
  for (int i = 0; i < size(); ++i) free_.push_back(i);
}

DevicePool::Lease DevicePool::Acquire() {
  const absl::Time start = absl::Now();
  absl::MutexLock lock(&mutex_);
  mutex_.Await(absl::Condition(+[](std::vector<int>* free) { return !free->empty(); }, &free_));
  const int slot = free_.front();
  free_.erase(free_.begin());
  return Lease(this, slot, absl::Now() - start);
}

void DevicePool::Release(int slot) {
  absl::MutexLock lock(&mutex_);
  free_.push_back(slot);
}

}  // namespace mkb
