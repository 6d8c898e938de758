#include "libmkb/judge/channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "libmkb/core/sha256.h"

namespace mkb {
namespace {

constexpr size_t kTagBytes = 8 + 32;  // sequence number, HMAC-SHA256

std::string TagInput(char direction, uint64_t sequence, absl::string_view bytes) {
  std::string input(1, direction);
  for (int i = 0; i < 8; ++i) input.push_back(static_cast<char>((sequence >> (8 * i)) & 0xff));
  input.append(bytes.data(), bytes.size());
  return input;
}

void AppendTag(const std::string& key, char direction, uint64_t sequence, std::string* bytes) {
  const auto tag = HmacSha256(key, TagInput(direction, sequence, *bytes));
  for (int i = 0; i < 8; ++i) bytes->push_back(static_cast<char>((sequence >> (8 * i)) & 0xff));
  bytes->append(reinterpret_cast<const char*>(tag.data()), tag.size());
}

// Checks and removes the tag; false when it is missing, forged or out of sequence.
bool StripTag(const std::string& key, char direction, uint64_t expected, std::string* bytes) {
  if (bytes->size() < kTagBytes) return false;
  const size_t body = bytes->size() - kTagBytes;
  uint64_t sequence = 0;
  for (int i = 0; i < 8; ++i)
    sequence |= static_cast<uint64_t>(static_cast<unsigned char>((*bytes)[body + i])) << (8 * i);
  if (sequence != expected) return false;
  const auto tag =
      HmacSha256(key, TagInput(direction, sequence, absl::string_view(*bytes).substr(0, body)));
  if (!ConstantTimeEqual(absl::string_view(*bytes).substr(body + 8),
                         absl::string_view(reinterpret_cast<const char*>(tag.data()), tag.size())))
    return false;
  bytes->resize(body);
  return true;
}

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::pair<Channel, Channel>> Channel::CreatePair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) return Errno("socketpair");
  const int buffer = static_cast<int>(kMaxChannelMessageBytes) * 2;
  for (int fd : fds) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  }
  return std::make_pair(Channel(fds[0]), Channel(fds[1]));
}

int Channel::Release() { return fd_.release(); }

absl::Status Channel::Send(const std::string& bytes, const std::vector<int>& fds) {
  if (!fd_.valid()) return absl::FailedPreconditionError("channel is closed");
  if (bytes.size() > kMaxChannelMessageBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("message of ", bytes.size(), " bytes is over the channel's limit"));
  }
  if (fds.size() > kMaxChannelFds)
    return absl::InvalidArgumentError("too many descriptors in one message");
  // An empty datagram carries no descriptors on some kernels; always send at least one byte.
  std::string payload = bytes.empty() ? std::string(1, '\0') : bytes;
  if (!key_.empty()) {
    payload = bytes;
    AppendTag(key_, own_, sent_++, &payload);
  }
  struct iovec iov = {payload.data(), payload.size()};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxChannelFds)];
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    struct cmsghdr* header = CMSG_FIRSTHDR(&msg);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  }
  while (true) {
    const ssize_t sent = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL);
    if (sent >= 0) return absl::OkStatus();
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET)
      return absl::UnavailableError("the other end closed the channel");
    return Errno("sendmsg");
  }
}

absl::StatusOr<ChannelMessage> Channel::ReceiveRaw(absl::Time deadline) {
  if (!fd_.valid()) return absl::FailedPreconditionError("channel is closed");
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration())
      return absl::DeadlineExceededError("no message before the deadline");
    struct pollfd p = {fd_.get(), POLLIN, 0};
    const int64_t ms = std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1000);
    const int ready = ::poll(&p, 1, static_cast<int>(ms));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return Errno("poll");
    }
    if (ready == 0) continue;
    if ((p.revents & POLLIN) == 0 && (p.revents & (POLLHUP | POLLERR))) {
      return absl::UnavailableError("the other end closed the channel");
    }
    break;
  }
  ChannelMessage message;
  message.bytes.resize(kMaxChannelMessageBytes + 1);
  struct iovec iov = {message.bytes.data(), message.bytes.size()};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxChannelFds)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t received;
  do {
    received = ::recvmsg(fd_.get(), &msg, MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  if (received < 0) return Errno("recvmsg");
  for (struct cmsghdr* header = CMSG_FIRSTHDR(&msg); header != nullptr;
       header = CMSG_NXTHDR(&msg, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
      const size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const int* fds = reinterpret_cast<const int*>(CMSG_DATA(header));
      message.fds.assign(fds, fds + count);
    }
  }
  if (received == 0) {
    for (int fd : message.fds) ::close(fd);
    return absl::UnavailableError("the other end closed the channel");
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    for (int fd : message.fds) ::close(fd);
    return absl::InvalidArgumentError("received a message over the channel's limit");
  }
  message.bytes.resize(static_cast<size_t>(received));
  if (message.bytes.size() == 1 && message.bytes[0] == '\0') message.bytes.clear();  // see Send
  return message;
}

absl::StatusOr<ChannelMessage> Channel::Receive(absl::Time deadline) {
  absl::StatusOr<ChannelMessage> message = ReceiveRaw(deadline);
  if (!message.ok() || key_.empty()) return message;
  if (!StripTag(key_, peer_, received_, &message->bytes)) {
    for (int fd : message->fds) ::close(fd);
    return absl::PermissionDeniedError(
        "a message on the judge's channel failed authentication (not written by the other end's "
        "channel code, or out of sequence)");
  }
  ++received_;
  return message;
}

void Channel::Authenticate(std::string key, char own, char peer) {
  key_ = std::move(key);
  own_ = own;
  peer_ = peer;
  sent_ = received_ = 0;
}

absl::Status Channel::AcceptKey(absl::Time deadline, char own, char peer) {
  absl::StatusOr<ChannelMessage> message = ReceiveRaw(deadline);
  if (!message.ok()) return message.status();
  for (int fd : message->fds) ::close(fd);
  if (message->bytes.size() < 16) return absl::InvalidArgumentError("the channel key is too short");
  Authenticate(std::move(message->bytes), own, peer);
  return absl::OkStatus();
}

}  // namespace mkb
