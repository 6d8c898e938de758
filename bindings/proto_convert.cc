#include "bindings/proto_convert.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <pybind11/stl.h>

#include "absl/strings/str_cat.h"
#include "bindings/status.h"
#include "libmkb/core/utf8.h"
#include "libmkb/model/names.h"

namespace mkb::python {
namespace {

namespace py = pybind11;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

py::object ScalarToPython(const Message& message, const FieldDescriptor* field, int index) {
  const Reflection* r = message.GetReflection();
  const bool repeated = index >= 0;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return py::int_(repeated ? r->GetRepeatedInt32(message, field, index)
                               : r->GetInt32(message, field));
    case FieldDescriptor::CPPTYPE_INT64:
      return py::int_(repeated ? r->GetRepeatedInt64(message, field, index)
                               : r->GetInt64(message, field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return py::int_(repeated ? r->GetRepeatedUInt32(message, field, index)
                               : r->GetUInt32(message, field));
    case FieldDescriptor::CPPTYPE_UINT64:
      return py::int_(repeated ? r->GetRepeatedUInt64(message, field, index)
                               : r->GetUInt64(message, field));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return py::float_(repeated ? r->GetRepeatedDouble(message, field, index)
                                 : r->GetDouble(message, field));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return py::float_(repeated ? r->GetRepeatedFloat(message, field, index)
                                 : r->GetFloat(message, field));
    case FieldDescriptor::CPPTYPE_BOOL:
      return py::bool_(repeated ? r->GetRepeatedBool(message, field, index)
                                : r->GetBool(message, field));
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* value =
          repeated ? r->GetRepeatedEnum(message, field, index) : r->GetEnum(message, field);
      const std::string name = EnumShortName(value);
      if (name.empty()) return py::none();
      return py::str(name);
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string text =
          repeated ? r->GetRepeatedString(message, field, index) : r->GetString(message, field);
      if (field->type() == FieldDescriptor::TYPE_BYTES) return py::bytes(text);
      return py::str(text);
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return py::none();
}

// Converts a field; `make_message` turns a sub-message into the Python object wanted (a dict
// for to_dict, a view for attribute access).
template <typename MakeMessage>
py::object FieldToPython(const Message& message, const FieldDescriptor* field,
                         MakeMessage make_message) {
  const Reflection* r = message.GetReflection();
  if (field->is_map()) {
    py::dict out;
    const FieldDescriptor* key = field->message_type()->map_key();
    const FieldDescriptor* value = field->message_type()->map_value();
    for (int i = 0; i < r->FieldSize(message, field); ++i) {
      const Message& entry = r->GetRepeatedMessage(message, field, i);
      py::object v = value->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                         ? make_message(entry.GetReflection()->GetMessage(entry, value))
                         : ScalarToPython(entry, value, -1);
      out[ScalarToPython(entry, key, -1)] = v;
    }
    return out;
  }
  if (field->is_repeated()) {
    py::list out;
    for (int i = 0; i < r->FieldSize(message, field); ++i) {
      out.append(field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                     ? make_message(r->GetRepeatedMessage(message, field, i))
                     : ScalarToPython(message, field, i));
    }
    return out;
  }
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    if (!r->HasField(message, field)) return py::none();
    return make_message(r->GetMessage(message, field));
  }
  if (field->has_presence() && !r->HasField(message, field)) return py::none();
  return ScalarToPython(message, field, -1);
}

absl::Status TypeError(const std::string& path, absl::string_view wanted, py::handle got) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": expected ", wanted, ", got ",
                   py::str(py::type::of(got).attr("__name__")).cast<std::string>()));
}

std::string Join(const std::string& prefix, absl::string_view name) {
  return prefix.empty() ? std::string(name) : absl::StrCat(prefix, ".", name);
}

// A str as a proto string field holds it: UTF-8. A str may hold lone surrogates (the
// surrogateescape of undecodable bytes, a kernel's exception text) that UTF-8 cannot encode:
// each is replaced by U+FFFD (core/utf8.h), so that no text makes its message unbuildable.
std::string Utf8OfStr(py::handle text) {
  Py_ssize_t size = 0;
  if (const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size))
    return std::string(data, static_cast<size_t>(size));
  PyErr_Clear();
  py::object encoded = py::reinterpret_steal<py::object>(
      PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogatepass"));
  if (!encoded) throw py::error_already_set();
  return ToValidUtf8(encoded.cast<std::string>());
}

absl::Status FromPythonAt(py::handle value, Message* out, const std::string& path);

absl::Status SetScalar(py::handle value, Message* out, const FieldDescriptor* field, bool add,
                       const std::string& path) {
  const Reflection* r = out->GetReflection();
  auto is_int = [&] {
    return py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value);
  };
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64: {
      if (!is_int()) return TypeError(path, "an integer", value);
      try {
        if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT32) {
          const int32_t v = value.cast<int32_t>();
          add ? r->AddInt32(out, field, v) : r->SetInt32(out, field, v);
        } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT64) {
          const int64_t v = value.cast<int64_t>();
          add ? r->AddInt64(out, field, v) : r->SetInt64(out, field, v);
        } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32) {
          const uint32_t v = value.cast<uint32_t>();
          add ? r->AddUInt32(out, field, v) : r->SetUInt32(out, field, v);
        } else {
          const uint64_t v = value.cast<uint64_t>();
          add ? r->AddUInt64(out, field, v) : r->SetUInt64(out, field, v);
        }
      } catch (const py::cast_error&) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": integer out of range"));
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      if (!(is_int() || py::isinstance<py::float_>(value)))
        return TypeError(path, "a number", value);
      const double v = value.cast<double>();
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        add ? r->AddDouble(out, field, v) : r->SetDouble(out, field, v);
      } else {
        add ? r->AddFloat(out, field, static_cast<float>(v))
            : r->SetFloat(out, field, static_cast<float>(v));
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      if (!py::isinstance<py::bool_>(value)) return TypeError(path, "True or False", value);
      add ? r->AddBool(out, field, value.cast<bool>()) : r->SetBool(out, field, value.cast<bool>());
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const google::protobuf::EnumValueDescriptor* enum_value = nullptr;
      if (py::isinstance<py::str>(value)) {
        enum_value = FindEnumValue(field->enum_type(), value.cast<std::string>());
      } else if (is_int()) {
        enum_value = field->enum_type()->FindValueByNumber(value.cast<int>());
      } else {
        return TypeError(path, "a name", value);
      }
      if (enum_value == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": '", py::str(value).cast<std::string>(), "' is not one of ",
                         EnumShortNames(field->enum_type())));
      }
      add ? r->AddEnum(out, field, enum_value) : r->SetEnum(out, field, enum_value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string text;
      if (field->type() == FieldDescriptor::TYPE_BYTES && py::isinstance<py::bytes>(value)) {
        text = value.cast<std::string>();
      } else if (py::isinstance<py::str>(value)) {
        text = Utf8OfStr(value);
      } else {
        return TypeError(path, "a string", value);
      }
      add ? r->AddString(out, field, std::move(text)) : r->SetString(out, field, std::move(text));
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      Message* sub = add ? r->AddMessage(out, field) : r->MutableMessage(out, field);
      if (py::isinstance<MessageView>(value))
        return CopyFromView(value.cast<const MessageView&>(), sub);
      return FromPythonAt(value, sub, path);
    }
  }
  return absl::InternalError(absl::StrCat(path, ": unsupported field type"));
}

absl::Status FromPythonAt(py::handle value, Message* out, const std::string& path) {
  if (!py::isinstance<py::dict>(value)) {
    return TypeError(path.empty() ? out->GetDescriptor()->name() : path, "a dict", value);
  }
  const Descriptor* type = out->GetDescriptor();
  const Reflection* r = out->GetReflection();
  for (auto item : value.cast<py::dict>()) {
    if (!py::isinstance<py::str>(item.first)) return TypeError(path, "string keys", item.first);
    const std::string name = item.first.cast<std::string>();
    const std::string field_path = Join(path, name);
    const FieldDescriptor* field = type->FindFieldByName(name);
    if (field == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(field_path, ": no such field in ", type->name()));
    }
    if (item.second.is_none()) continue;
    if (field->is_map()) {
      if (!py::isinstance<py::dict>(item.second))
        return TypeError(field_path, "a dict", item.second);
      const FieldDescriptor* key_field = field->message_type()->map_key();
      const FieldDescriptor* value_field = field->message_type()->map_value();
      for (auto entry : item.second.cast<py::dict>()) {
        const std::string entry_path =
            absl::StrCat(field_path, "[", py::repr(entry.first).cast<std::string>(), "]");
        Message* map_entry = r->AddMessage(out, field);
        if (auto s = SetScalar(entry.first, map_entry, key_field, false, entry_path); !s.ok())
          return s;
        if (auto s = SetScalar(entry.second, map_entry, value_field, false, entry_path); !s.ok())
          return s;
      }
    } else if (field->is_repeated()) {
      if (py::isinstance<py::str>(item.second) || py::isinstance<py::dict>(item.second) ||
          !py::isinstance<py::sequence>(item.second)) {
        return TypeError(field_path, "a list", item.second);
      }
      int index = 0;
      for (py::handle element : item.second.cast<py::sequence>()) {
        if (auto s =
                SetScalar(element, out, field, true, absl::StrCat(field_path, "[", index++, "]"));
            !s.ok()) {
          return s;
        }
      }
    } else if (auto s = SetScalar(item.second, out, field, false, field_path); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

const Descriptor* FindType(const std::string& type_name) {
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const Descriptor* type = pool->FindMessageTypeByName(type_name);
  if (type == nullptr) type = pool->FindMessageTypeByName("mkb.v1." + type_name);
  return type;
}

py::object MessageAttribute(const MessageView& view, const std::string& name) {
  const Message& message = view.message();
  const FieldDescriptor* field = message.GetDescriptor()->FindFieldByName(name);
  if (field == nullptr) {
    throw py::attribute_error(
        absl::StrCat(message.GetDescriptor()->name(), " has no field '", name, "'"));
  }
  return FieldToPython(
      message, field, [&](const Message& sub) { return py::cast(MessageView(view.root(), &sub)); });
}

}  // namespace

py::object ToPython(const Message& message) {
  py::dict out;
  const Descriptor* type = message.GetDescriptor();
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    out[py::str(field->name())] =
        FieldToPython(message, field, [](const Message& sub) { return ToPython(sub); });
  }
  return out;
}

absl::Status FromPython(py::handle value, Message* out) { return FromPythonAt(value, out, ""); }

absl::Status CopyFromView(const MessageView& view, Message* out) {
  if (view.message().GetDescriptor() != out->GetDescriptor()) {
    return absl::InvalidArgumentError(absl::StrCat("expected a ", out->GetDescriptor()->name(),
                                                   ", got a ",
                                                   view.message().GetDescriptor()->name()));
  }
  out->CopyFrom(view.message());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Message>> NewMessage(const std::string& type_name) {
  const Descriptor* type = FindType(type_name);
  if (type == nullptr)
    return absl::NotFoundError(absl::StrCat("no message type '", type_name, "' in mkb.v1"));
  const Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(type);
  return std::unique_ptr<Message>(prototype->New());
}

void RegisterMessages(py::module_& module) {
  py::class_<MessageView>(
      module, "Message",
      "A read-only view of a metakernelbench data-model message (mkb.v1).\n\n"
      "Fields read as attributes: enums as short lower-case names ('mlp_norm'),\n"
      "repeated fields as lists, sub-messages as views. Build new messages with\n"
      "metakernelbench.message(type_name, dict).")
      .def("__getattr__", &MessageAttribute)
      .def("__dir__",
           [](const MessageView& view) {
             py::list names;
             const Descriptor* type = view.message().GetDescriptor();
             for (int i = 0; i < type->field_count(); ++i) names.append(type->field(i)->name());
             for (const char* method :
                  {"to_dict", "to_json", "to_text", "has", "type_name", "serialize"}) {
               names.append(method);
             }
             return names;
           })
      .def_property_readonly(
          "type_name",
          [](const MessageView& view) { return view.message().GetDescriptor()->name(); })
      .def(
          "has",
          [](const MessageView& view, const std::string& name) {
            const FieldDescriptor* field = view.message().GetDescriptor()->FindFieldByName(name);
            if (field == nullptr) throw py::attribute_error(absl::StrCat("no field '", name, "'"));
            const Reflection* r = view.message().GetReflection();
            return field->is_repeated()
                       ? r->FieldSize(view.message(), field) > 0
                       : (field->has_presence() ? r->HasField(view.message(), field)
                                                : r->HasField(view.message(), field));
          },
          py::arg("field"), "Whether the field is set (non-empty for repeated fields).")
      .def(
          "to_dict", [](const MessageView& view) { return ToPython(view.message()); },
          "The message as nested dicts and lists; enums as short names.")
      .def(
          "to_json",
          [](const MessageView& view, int indent) {
            std::string json;
            google::protobuf::util::JsonPrintOptions options;
            options.preserve_proto_field_names = true;
            options.add_whitespace = indent > 0;
            ThrowIfError(absl::Status(
                static_cast<absl::StatusCode>(
                    google::protobuf::util::MessageToJsonString(view.message(), &json, options)
                        .code()),
                "cannot print JSON"));
            return json;
          },
          py::arg("indent") = 0, "Protobuf JSON (field names as in the .proto files).")
      .def(
          "to_text",
          [](const MessageView& view) {
            std::string text;
            google::protobuf::TextFormat::PrintToString(view.message(), &text);
            return text;
          },
          "Protobuf text format.")
      .def(
          "serialize",
          [](const MessageView& view) { return py::bytes(view.message().SerializeAsString()); },
          "The binary protobuf encoding.")
      .def("__eq__",
           [](const MessageView& a, const MessageView& b) {
             return a.message().GetDescriptor() == b.message().GetDescriptor() &&
                    google::protobuf::util::MessageDifferencer::Equals(a.message(), b.message());
           })
      .def("__repr__",
           [](const MessageView& view) {
             std::string text = view.message().ShortDebugString();
             if (text.size() > 300) text = text.substr(0, 297) + "...";
             return absl::StrCat("<", view.message().GetDescriptor()->name(), " ", text, ">");
           })
      .def(py::pickle(
          [](const MessageView& view) {
            return py::make_tuple(view.message().GetDescriptor()->full_name(),
                                  py::bytes(view.message().SerializeAsString()));
          },
          [](py::tuple state) {
            std::unique_ptr<Message> message =
                ValueOrThrow(NewMessage(state[0].cast<std::string>()));
            if (!message->ParseFromString(state[1].cast<std::string>())) {
              ThrowIfError(absl::InvalidArgumentError("cannot parse pickled message"));
            }
            return MessageView(std::shared_ptr<const Message>(std::move(message)));
          }));

  module.def(
      "message",
      [](const std::string& type_name, py::object fields) {
        std::unique_ptr<Message> message = ValueOrThrow(NewMessage(type_name));
        if (!fields.is_none()) ThrowIfError(FromPython(fields, message.get()));
        ThrowIfError(ValidateMessage(*message));
        return MessageView(std::shared_ptr<const Message>(std::move(message)));
      },
      py::arg("type_name"), py::arg("fields") = py::none(),
      "Builds and validates a message from a dict, e.g. message('Budget', {'max_submissions': "
      "5}).\n"
      "Raises InvalidArgumentError naming the field that is wrong.");
  module.def(
      "parse_message",
      [](const std::string& type_name, py::bytes data) {
        std::unique_ptr<Message> message = ValueOrThrow(NewMessage(type_name));
        if (!message->ParseFromString(data.cast<std::string>())) {
          ThrowIfError(absl::InvalidArgumentError(absl::StrCat("not a serialized ", type_name)));
        }
        return MessageView(std::shared_ptr<const Message>(std::move(message)));
      },
      py::arg("type_name"), py::arg("data"), "Parses the binary encoding of a message.");
}

}  // namespace mkb::python
