// Protobuf messages crossing into Python: read-only views (metakernelbench.Message) and
// conversion from Python dicts, with errors naming the field path. Python never holds a
// mutable C++ message.
#ifndef BINDINGS_PROTO_CONVERT_H_
#define BINDINGS_PROTO_CONVERT_H_

#include <google/protobuf/message.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libmkb/model/validation.h"

namespace mkb::python {

// A read-only view of a message, or of a sub-message of one; `root` keeps it alive.
class MessageView {
 public:
  explicit MessageView(std::shared_ptr<const google::protobuf::Message> root)
      : root_(root), message_(root.get()) {}
  MessageView(std::shared_ptr<const google::protobuf::Message> root,
              const google::protobuf::Message* message)
      : root_(std::move(root)), message_(message) {}

  const google::protobuf::Message& message() const { return *message_; }
  const std::shared_ptr<const google::protobuf::Message>& root() const { return root_; }

 private:
  std::shared_ptr<const google::protobuf::Message> root_;
  const google::protobuf::Message* message_;
};

// Wraps a copy of `message` as a view.
template <typename T>
MessageView ViewOf(T message) {
  return MessageView(std::make_shared<const T>(std::move(message)));
}

// The message as plain Python: dict, list, str (enum short names), int, float, bool.
pybind11::object ToPython(const google::protobuf::Message& message);

// Fills `out` from a Python mapping; InvalidArgumentError names the field path.
absl::Status FromPython(pybind11::handle value, google::protobuf::Message* out);

// Copies a view's message into `out` when their types agree.
absl::Status CopyFromView(const MessageView& view, google::protobuf::Message* out);

// Accepts a MessageView of the right type, a mapping, or None (an empty message), and
// validates the result (libmkb/model/validation.h).
// `validate` = false accepts messages the loader filled (a loaded Problem).
template <typename T>
absl::StatusOr<T> MessageFromPython(pybind11::handle value, bool validate = true) {
  T out;
  if (value.is_none()) return out;
  absl::Status status = pybind11::isinstance<MessageView>(value)
                            ? CopyFromView(value.cast<const MessageView&>(), &out)
                            : FromPython(value, &out);
  if (status.ok() && validate) status = ValidateMessage(out);
  if (!status.ok()) return status;
  return out;
}

// A new message of the given type name ("Budget" or "mkb.v1.Budget").
absl::StatusOr<std::unique_ptr<google::protobuf::Message>> NewMessage(const std::string& type_name);

// Registers metakernelbench.Message and the module functions message(), parse_message().
void RegisterMessages(pybind11::module_& module);

}  // namespace mkb::python

#endif  // BINDINGS_PROTO_CONVERT_H_
