// The message channel between the judge host and its worker: a SOCK_SEQPACKET socket pair.
// Each message is one datagram of serialized protobuf, optionally carrying file descriptors
// (shared segments). Reads take a deadline, so that a hung worker cannot hang the judge.
#ifndef LIBMKB_JUDGE_CHANNEL_H_
#define LIBMKB_JUDGE_CHANNEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libmkb/core/unique_fd.h"

namespace mkb {

// Messages are at most this large; a larger one is an error, not a truncation.
inline constexpr size_t kMaxChannelMessageBytes = 4 << 20;
inline constexpr int kMaxChannelFds = 16;

struct ChannelMessage {
  std::string bytes;
  std::vector<int> fds;  // owned by the receiver, who must close them
};

// One end of a channel. Move-only; closes its socket on destruction.
class Channel {
 public:
  // Two connected ends.
  static absl::StatusOr<std::pair<Channel, Channel>> CreatePair();
  // Adopts a connected socket (e.g. inherited by a forked worker).
  explicit Channel(int fd) : fd_(fd) {}

  Channel(Channel&& other) noexcept = default;
  Channel& operator=(Channel&& other) noexcept = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() = default;

  // Sends one message with descriptors (which stay owned by the caller).
  absl::Status Send(const std::string& bytes, const std::vector<int>& fds = {});
  // Receives one message. DeadlineExceededError when none arrives before `deadline`;
  // UnavailableError when the other end has closed.
  absl::StatusOr<ChannelMessage> Receive(absl::Time deadline);

  // From now on every message sent carries this end's sequence number and an HMAC-SHA256 tag
  // under `key` (over the direction byte `own`, the sequence number and the bytes), and every
  // message received must carry a valid tag of the other end (`peer`) with the next sequence
  // number: anything else is PermissionDeniedError. Code that shares the worker's process can
  // write raw bytes to the socket but, without the key, not a message the other end accepts.
  void Authenticate(std::string key, char own, char peer);
  // Receives one message and keeps its bytes as the key (it is never handed back), then
  // Authenticate(key, own, peer).
  absl::Status AcceptKey(absl::Time deadline, char own, char peer);
  bool authenticated() const { return !key_.empty(); }

  int fd() const { return fd_.get(); }
  // Gives up ownership of the socket.
  int Release();

 private:
  absl::StatusOr<ChannelMessage> ReceiveRaw(absl::Time deadline);

  UniqueFd fd_;
  std::string key_;
  char own_ = 0;
  char peer_ = 0;
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
};

}  // namespace mkb

#endif  // LIBMKB_JUDGE_CHANNEL_H_
