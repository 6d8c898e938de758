// metakernelbench._core's agent part (libmkb/agent): model clients, the shell sandbox, skills,
// TASK.md, one attempt, and the AgentTrialExecutor. The friendly API is
// metakernelbench.agent; a model written in Python reaches C++ through an adapter object with a
// chat_json(request_json) -> response_json method (agent.py wraps any object with chat()).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bindings/bindings.h"
#include "bindings/proto_convert.h"
#include "bindings/status.h"
#include "libmkb/agent/agent_trial_executor.h"
#include "libmkb/agent/anthropic_chat_model.h"
#include "libmkb/agent/attempt.h"
#include "libmkb/agent/chat_json.h"
#include "libmkb/agent/model_factory.h"
#include "libmkb/agent/model_id.h"
#include "libmkb/agent/openai_chat_model.h"
#include "libmkb/agent/price_table.h"
#include "libmkb/agent/scripted_model.h"
#include "libmkb/agent/shell_sandbox.h"
#include "libmkb/agent/shell_view.h"
#include "libmkb/agent/skill.h"
#include "libmkb/agent/submission_check.h"
#include "libmkb/agent/task.h"
#include "libmkb/judge/device_pool.h"
#include "libmkb/model/names.h"
#include "libmkb/protocol/trial_observer.h"
#include "libmkb/suite/suite.h"

namespace mkb::python {
namespace {

namespace py = pybind11;

// Reads a dict of options, naming the key at fault, and refuses keys it does not know.
class OptionReader {
 public:
  OptionReader(py::handle value, std::string what) : what_(std::move(what)) {
    if (value.is_none()) return;
    if (!py::isinstance<py::dict>(value)) {
      ThrowIfError(absl::InvalidArgumentError(absl::StrCat(what_, ": expected a dict")));
    }
    dict_ = py::reinterpret_borrow<py::dict>(value);
  }

  template <typename T>
  T Get(const char* key, T fallback) {
    known_.insert(key);
    if (!dict_.contains(key) || dict_[key].is_none()) return fallback;
    try {
      return dict_[key].cast<T>();
    } catch (const py::cast_error&) {
      ThrowIfError(absl::InvalidArgumentError(
          absl::StrCat(what_, ".", key, ": wrong type (",
                       py::str(py::type::of(dict_[key])).cast<std::string>(), ")")));
    }
    return fallback;
  }

  py::object Raw(const char* key) {
    known_.insert(key);
    if (!dict_.contains(key)) return py::none();
    return dict_[key];
  }

  void CheckAllKnown() const {
    for (auto item : dict_) {
      const std::string key = py::str(item.first);
      if (known_.count(key) == 0) {
        ThrowIfError(absl::InvalidArgumentError(absl::StrCat(
            what_, ": unknown option '", key, "' (known: ", absl::StrJoin(known_, ", "), ")")));
      }
    }
  }

 private:
  std::string what_;
  py::dict dict_;
  std::set<std::string> known_;
};

ModelOptions ModelOptionsFrom(py::handle value) {
  OptionReader r(value, "model_options");
  ModelOptions o;
  o.api_key = r.Get<std::string>("api_key", "");
  o.base_url = r.Get<std::string>("base_url", "");
  o.request_timeout = absl::Seconds(r.Get<double>("request_timeout_s", 600));
  o.connect_timeout = absl::Seconds(r.Get<double>("connect_timeout_s", 30));
  o.retry.max_attempts = r.Get<int>("max_attempts", o.retry.max_attempts);
  o.retry.initial_backoff = absl::Seconds(r.Get<double>("initial_backoff_s", 1));
  o.retry.backoff_multiplier = r.Get<double>("backoff_multiplier", o.retry.backoff_multiplier);
  o.retry.max_backoff = absl::Seconds(r.Get<double>("max_backoff_s", 60));
  o.retry.max_retry_after = absl::Seconds(r.Get<double>("max_retry_after_s", 60));
  o.retry.jitter = r.Get<double>("jitter", o.retry.jitter);
  o.max_output_tokens = r.Get<int>("max_output_tokens", 0);
  o.extra_body_json = r.Get<std::string>("extra_body", "");
  o.extra_headers = r.Get<std::vector<std::string>>("extra_headers", {});
  o.prompt_caching = r.Get<bool>("prompt_caching", true);
  o.native_tools = r.Get<bool>("native_tools", true);
  r.CheckAllKnown();
  return o;
}

ShellSandboxOptions SandboxOptionsFrom(py::handle value) {
  OptionReader r(value, "sandbox");
  ShellSandboxOptions o;
  o.workspace = r.Get<std::string>("workspace", "");
  o.cpus = r.Get<int>("cpus", o.cpus);
  o.memory_bytes = r.Get<int64_t>("memory_bytes", o.memory_bytes);
  o.max_processes = r.Get<int>("max_processes", o.max_processes);
  o.max_file_bytes = r.Get<int64_t>("max_file_bytes", o.max_file_bytes);
  o.tmp_bytes = r.Get<int64_t>("tmp_bytes", o.tmp_bytes);
  o.workspace_bytes = r.Get<int64_t>("workspace_bytes", o.workspace_bytes);
  o.workspace_files = r.Get<int64_t>("workspace_files", o.workspace_files);
  o.max_output_bytes = r.Get<size_t>("max_output_bytes", o.max_output_bytes);
  // read_only: paths (seen where they are) or [source, target] pairs.
  for (py::handle item : r.Get<py::list>("read_only", py::list())) {
    if (py::isinstance<py::str>(item)) {
      o.read_only.push_back({item.cast<std::string>(), ""});
    } else if (py::isinstance<py::sequence>(item) && py::len(item) == 2) {
      auto pair = item.cast<std::pair<std::string, std::string>>();
      o.read_only.push_back({pair.first, pair.second});
    } else {
      ThrowIfError(absl::InvalidArgumentError(
          "sandbox.read_only: each entry is a path or a [source, target] pair"));
    }
  }
  o.hidden_paths = r.Get<std::vector<std::string>>("hidden_paths", {});
  o.environment = r.Get<std::vector<std::string>>("environment", {});
  o.bwrap = r.Get<std::string>("bwrap", o.bwrap);
  o.shell = r.Get<std::string>("shell", o.shell);
  o.require_isolation = r.Get<bool>("require_isolation", true);
  r.CheckAllKnown();
  return o;
}

PriceTable PricesFrom(const std::string& json) {
  PriceTable table = ValueOrThrow(PriceTable::Default());
  if (!json.empty()) table.Overlay(ValueOrThrow(PriceTable::FromJson(json)));
  return table;
}

v1::DeviceKind DeviceFrom(const std::string& name) {
  if (name.empty() || name == "auto") return v1::DEVICE_KIND_UNSPECIFIED;
  return ValueOrThrow(ParseDeviceKind(name));
}

// A skill argument: None (a solo), a str (a fixed text), or a Skill message / dict.
v1::Skill SkillFrom(py::handle value, int64_t max_bytes) {
  if (value.is_none()) return v1::Skill();
  if (py::isinstance<py::str>(value)) {
    v1::Skill skill = MakeSkill(value.cast<std::string>(), max_bytes);
    skill.set_origin("fixed_text");
    return skill;
  }
  return ValueOrThrow(MessageFromPython<v1::Skill>(value));
}

// Holds a Python object; takes the GIL to let go of it, whichever thread drops the last copy.
std::shared_ptr<py::object> Hold(py::object object) {
  return std::shared_ptr<py::object>(new py::object(std::move(object)), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
}

absl::Status StatusFromPython(py::error_already_set& error, const std::string& what) {
  const std::string message = absl::StrCat(what, ": ", error.what());
  if (error.matches(PyExc_KeyboardInterrupt)) return absl::CancelledError(message);
  if (error.matches(PyExc_ConnectionError) || error.matches(PyExc_TimeoutError)) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

// A model written in Python, through its adapter (metakernelbench.agent wraps any object with
// a chat(messages, tools) method). Chat() takes the GIL for the call.
class PythonChatModel : public ChatModel {
 public:
  explicit PythonChatModel(py::object adapter) {
    id_ = py::str(adapter.attr("id"));
    native_tools_ = adapter.attr("native_tools").cast<bool>();
    is_llm_ = adapter.attr("is_llm").cast<bool>();
    adapter_ = Hold(std::move(adapter));
  }

  absl::StatusOr<ChatResponse> Chat(const ChatRequest& request) override {
    const std::string request_json = ChatRequestToJson(request);
    std::string reply;
    const absl::Time start = absl::Now();
    {
      py::gil_scoped_acquire gil;
      try {
        reply = adapter_->attr("chat_json")(request_json).cast<std::string>();
      } catch (py::error_already_set& error) {
        return StatusFromPython(error, absl::StrCat("the Python model ", id_, " raised"));
      } catch (const py::cast_error&) {
        return absl::InternalError(
            absl::StrCat("the Python model ", id_, ": chat_json must return a str"));
      }
    }
    absl::StatusOr<ChatResponse> response = ChatResponseFromJson(reply);
    if (!response.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the Python model ", id_, " returned a malformed reply: ", response.status().message()));
    }
    response->seconds = absl::ToDoubleSeconds(absl::Now() - start);
    return response;
  }
  const std::string& id() const override { return id_; }
  bool native_tools() const override { return native_tools_; }
  bool is_llm() const override { return is_llm_; }

 private:
  std::shared_ptr<py::object> adapter_;
  std::string id_;
  bool native_tools_ = true;
  bool is_llm_ = true;
};

// Live reports to a Python callable on_event(kind, message), kind "trajectory", "submission"
// or "usage". Exceptions in the callable are printed, not raised.
class PythonObserver : public TrialObserver {
 public:
  explicit PythonObserver(py::object callback) : callback_(Hold(std::move(callback))) {}
  void OnTrajectoryEvent(const v1::TrajectoryEvent& event) override { Call("trajectory", event); }
  void OnSubmission(const v1::Submission& submission) override { Call("submission", submission); }
  void OnUsage(const v1::Usage& usage) override { Call("usage", usage); }

 private:
  template <typename T>
  void Call(const char* kind, const T& message) {
    py::gil_scoped_acquire gil;
    try {
      (*callback_)(kind, ViewOf(message));
    } catch (py::error_already_set& error) {
      error.discard_as_unraisable("metakernelbench on_event callback");
    }
  }
  std::shared_ptr<py::object> callback_;
};

// An evaluator written in Python: a callable(request: EvaluationRequest) -> Verdict (a message
// or dict), e.g. one that sends the request to a GPU actor on another machine
// (metakernelbench.distributed). Raising UnavailableError, ConnectionError or TimeoutError is
// an infrastructure failure the attempt does not count; other exceptions are InternalError.
class PythonKernelEvaluator : public KernelEvaluator {
 public:
  explicit PythonKernelEvaluator(py::object evaluate) : evaluate_(Hold(std::move(evaluate))) {}
  absl::StatusOr<v1::Verdict> Evaluate(const v1::EvaluationRequest& request) override {
    py::gil_scoped_acquire gil;
    try {
      py::object verdict = (*evaluate_)(ViewOf(request));
      absl::StatusOr<v1::Verdict> out = MessageFromPython<v1::Verdict>(verdict, false);
      if (!out.ok()) {
        return absl::InternalError(
            absl::StrCat("the Python evaluator returned no Verdict: ", out.status().message()));
      }
      return out;
    } catch (py::error_already_set& error) {
      return StatusFromPython(error, "the Python evaluator raised");
    }
  }

 private:
  std::shared_ptr<py::object> evaluate_;
};

std::vector<std::string> GpusFrom(OptionReader& r) {
  const std::string gpus = r.Get<std::string>("gpus", "");
  if (gpus.empty()) return {};
  return ValueOrThrow(ParseGpuList(gpus, "gpus"));
}

std::unique_ptr<ChatModel> ModelFrom(py::handle model, const ModelOptions& options) {
  if (py::isinstance<py::str>(model)) {
    return ValueOrThrow(MakeChatModel(model.cast<std::string>(), options));
  }
  if (!py::hasattr(model, "chat_json")) {
    ThrowIfError(absl::InvalidArgumentError(
        "model: expected a model id or an adapter with chat_json (use metakernelbench.agent)"));
  }
  return std::make_unique<PythonChatModel>(py::reinterpret_borrow<py::object>(model));
}

// A C++ model as a Python object, for notebooks and tests of the clients.
class ChatModelHandle {
 public:
  ChatModelHandle(const std::string& id, py::object options)
      : model_(ValueOrThrow(MakeChatModel(id, ModelOptionsFrom(options)))) {}

  std::string Chat(const std::string& request_json) {
    const ChatRequest request = ValueOrThrow(ChatRequestFromJson(request_json));
    absl::StatusOr<ChatResponse> response;
    {
      py::gil_scoped_release release;
      response = model_->Chat(request);
    }
    return ChatResponseToJson(ValueOrThrow(std::move(response)));
  }

  std::string EncodeRequest(const std::string& request_json) const {
    const ChatRequest request = ValueOrThrow(ChatRequestFromJson(request_json));
    if (auto* m = dynamic_cast<const OpenAiChatModel*>(model_.get()))
      return m->EncodeRequest(request);
    if (auto* m = dynamic_cast<const AnthropicChatModel*>(model_.get())) {
      return m->EncodeRequest(request);
    }
    ThrowIfError(
        absl::FailedPreconditionError(absl::StrCat(model_->id(), " sends no HTTP request")));
    return "";
  }

  std::string Endpoint() const {
    if (auto* m = dynamic_cast<const OpenAiChatModel*>(model_.get())) return m->endpoint();
    if (auto* m = dynamic_cast<const AnthropicChatModel*>(model_.get())) return m->endpoint();
    return "";
  }

  const ChatModel& model() const { return *model_; }

 private:
  std::unique_ptr<ChatModel> model_;
};

py::dict ShellResultToPython(const ShellResult& r) {
  py::dict d;
  d["exit_code"] = r.exit_code;
  d["signal"] = r.signal;
  d["timed_out"] = r.timed_out;
  d["memory_exceeded"] = r.memory_exceeded;
  d["too_many_processes"] = r.too_many_processes;
  d["workspace_exceeded"] = r.workspace_exceeded;
  d["workspace_bytes"] = r.workspace_bytes;
  d["workspace_files"] = r.workspace_files;
  d["workspace_over_at_start"] = r.workspace_over_at_start;
  d["output"] = py::bytes(r.output).attr("decode")("utf-8", "replace");
  d["output_bytes"] = r.output_bytes;
  d["peak_memory_bytes"] = r.peak_memory_bytes;
  d["seconds"] = r.seconds;
  d["observation"] = py::bytes(r.Observation()).attr("decode")("utf-8", "replace");
  return d;
}

JudgeOptions JudgeOptionsFrom(const std::string& python, std::vector<std::string> environment) {
  JudgeOptions options;
  options.python = python;
  options.environment = std::move(environment);
  options.inherit_environment = false;
  // An attempt's submissions come one after another: each host is forked from a template that
  // has torch and the DSL imported.
  options.keep_warm_host = true;
  options.host_template = true;  // each host forked from one that imported torch and the DSL
  return options;
}

}  // namespace

void RegisterAgent(py::module_& m) {
  m.def(
      "parse_model_id",
      [](const std::string& id) {
        const ModelId parsed = ValueOrThrow(ParseModelId(id));
        py::dict d;
        d["provider"] = std::string(ModelProviderName(parsed.provider));
        d["model"] = parsed.model;
        d["base_url"] = parsed.base_url;
        return d;
      },
      py::arg("model_id"),
      "{'provider', 'model', 'base_url'} of a model id (openai/<m>, anthropic/<m>,\n"
      "openai-compatible/<m>@<base_url>, scripted/demo).");

  py::class_<ChatModelHandle>(m, "ChatModel",
                              "A model client of the C++ core (OpenAI, Anthropic, compatible "
                              "servers, scripted/demo).")
      .def(py::init<const std::string&, py::object>(), py::arg("model_id"),
           py::arg("options") = py::none(),
           "options: api_key, base_url, request_timeout_s, connect_timeout_s, max_attempts,\n"
           "initial_backoff_s, backoff_multiplier, max_backoff_s, max_retry_after_s, jitter,\n"
           "max_output_tokens, extra_body (JSON text), extra_headers, prompt_caching, "
           "native_tools.")
      .def("chat", &ChatModelHandle::Chat, py::arg("request_json"),
           "One request (provider-neutral JSON, libmkb/agent/chat_json.h) -> the response JSON.\n"
           "Blocks for the HTTP exchange and its retries (the GIL is released).")
      .def("encode_request", &ChatModelHandle::EncodeRequest, py::arg("request_json"),
           "The provider's request body for a neutral request (nothing is sent).")
      .def_property_readonly("endpoint", &ChatModelHandle::Endpoint)
      .def_property_readonly("id", [](const ChatModelHandle& h) { return h.model().id(); })
      .def_property_readonly("native_tools",
                             [](const ChatModelHandle& h) { return h.model().native_tools(); })
      .def_property_readonly("is_llm", [](const ChatModelHandle& h) { return h.model().is_llm(); });

  py::class_<ShellSandbox>(m, "ShellSandbox", "The agent's sandboxed shell (bubblewrap).")
      .def(py::init([](const std::string& workspace, py::object options) {
             ShellSandboxOptions o = SandboxOptionsFrom(options);
             o.workspace = workspace;
             absl::StatusOr<ShellSandbox> sandbox;
             {
               py::gil_scoped_release release;  // runs one probe command
               sandbox = ShellSandbox::Create(std::move(o));
             }
             return std::make_unique<ShellSandbox>(ValueOrThrow(std::move(sandbox)));
           }),
           py::arg("workspace"), py::arg("options") = py::none(),
           "options: cpus, memory_bytes, max_processes, max_file_bytes, tmp_bytes,\n"
           "workspace_bytes, workspace_files, "
           "max_output_bytes, read_only, hidden_paths, environment, bwrap, shell, "
           "require_isolation.\n"
           "Raises FailedPreconditionError when bubblewrap cannot start and isolation is "
           "required.")
      .def(
          "run",
          [](const ShellSandbox& sandbox, const std::string& command, double timeout_s) {
            absl::StatusOr<ShellResult> result;
            {
              py::gil_scoped_release release;
              result = sandbox.Run(command, absl::Seconds(timeout_s));
            }
            return ShellResultToPython(ValueOrThrow(std::move(result)));
          },
          py::arg("command"), py::arg("timeout_s") = 120.0,
          "Runs `bash -c command` in the sandbox; blocks until it ends or is killed (the GIL is\n"
          "released). A dict: exit_code, signal, timed_out, memory_exceeded, output, ...")
      .def_property_readonly("isolated", &ShellSandbox::isolated)
      .def_property_readonly("description", &ShellSandbox::description);

  m.attr("RECEIVED_SKILL_HEADER") = std::string(kReceivedSkillHeader);
  m.attr("SCRIPTED_DSL_MODEL") = std::string(kScriptedDslModelId);
  m.def("skill_rules", &SkillRules, "The rules for SKILL.md as TASK.md states them.");
  m.def("agent_fingerprint_salt", &AgentFingerprintSalt,
        "The agent's part of every task fingerprint (C++ mkb::AgentFingerprintSalt).");
  m.def(
      "refuse_before_judging",
      [](py::object problem, const std::string& dsl, const py::bytes& source,
         const std::string& workload, py::object config) -> py::object {
        v1::EvaluationRequest request;
        request.set_dsl(ValueOrThrow(ParseDsl(dsl)));
        request.set_kernel_source(std::string(source));
        request.set_workload(workload);
        *request.mutable_config() = ValueOrThrow(MessageFromPython<v1::JudgeConfig>(config));
        const auto p = ValueOrThrow(MessageFromPython<v1::Problem>(problem, /*validate=*/false));
        std::optional<v1::Verdict> refused = RefuseBeforeJudging(p, request);
        if (!refused.has_value()) return py::none();
        return py::cast(ViewOf(*std::move(refused)));
      },
      py::arg("problem"), py::arg("dsl"), py::arg("source"), py::arg("workload") = "small",
      py::arg("config") = py::none(),
      "The invalid_submission Verdict the judge gives `source` (bytes, as read from kernel.py)\n"
      "without evaluating it -- empty, oversized, not UTF-8, NUL bytes -- or None when it must\n"
      "be judged (libmkb/agent/submission_check.h). Parsing is the judge's.");
  m.def(
      "make_skill",
      [](const std::string& text, int64_t max_bytes) { return ViewOf(MakeSkill(text, max_bytes)); },
      py::arg("text"), py::arg("max_bytes") = 16384,
      "A Skill from a SKILL.md text: capped, hashed (SHA-256), flagged (empty, truncated, code).");
  m.def(
      "render_received_skill",
      [](const std::string& text) {
        v1::Skill skill;
        skill.set_text(text);
        return RenderReceivedSkill(skill);
      },
      py::arg("text"), "What a conditioned attempt reads: the fixed header, then the skill.");
  m.def(
      "render_task",
      [](py::object problem, const std::string& dsl, py::object budget, const std::string& workload,
         const std::string& target, bool cpu_judge, bool text_protocol,
         const std::string& received_skill) {
        TaskSettings settings;
        settings.dsl = ValueOrThrow(ParseDsl(dsl));
        settings.budget = ValueOrThrow(MessageFromPython<v1::Budget>(budget));
        settings.workload = workload;
        settings.target = target;
        settings.cpu_judge = cpu_judge;
        settings.text_protocol = text_protocol;
        return RenderTask(ValueOrThrow(MessageFromPython<v1::Problem>(problem, false)), settings,
                          received_skill);
      },
      py::arg("problem"), py::arg("dsl"), py::arg("budget") = py::none(),
      py::arg("workload") = "full", py::arg("target") = "", py::arg("cpu_judge") = false,
      py::arg("text_protocol") = false, py::arg("received_skill") = "", "TASK.md of an attempt.");
  m.def(
      "model_cost",
      [](const std::string& model_id, int64_t input_tokens, int64_t cached_input_tokens,
         int64_t cache_write_tokens, int64_t output_tokens, const std::string& prices_json) {
        TokenUsage usage;
        usage.input_tokens = input_tokens;
        usage.cached_input_tokens = cached_input_tokens;
        usage.cache_write_tokens = cache_write_tokens;
        usage.output_tokens = output_tokens;
        return PricesFrom(prices_json).Cost(model_id, usage);
      },
      py::arg("model_id"), py::arg("input_tokens") = 0, py::arg("cached_input_tokens") = 0,
      py::arg("cache_write_tokens") = 0, py::arg("output_tokens") = 0, py::arg("prices") = "",
      "USD for the tokens at the model's price (built-in table, MKB_PRICE_TABLE, then `prices`).");

  m.def(
      "run_attempt",
      [](py::object problem, py::object model, py::object options, const std::string& python,
         std::vector<std::string> environment, py::object on_event) {
        const v1::Problem p = ValueOrThrow(MessageFromPython<v1::Problem>(problem, false));
        OptionReader r(options, "options");
        AttemptConfig config;
        config.attempt_id = r.Get<std::string>("attempt_id", "");
        config.experiment = r.Get<std::string>("experiment", "");
        config.arm = r.Get<std::string>("arm", "");
        config.replicate = r.Get<int>("replicate", 0);
        config.try_number = r.Get<int>("try_number", 1);
        config.dsl = ValueOrThrow(ParseDsl(r.Get<std::string>("dsl", "")));
        config.budget = ValueOrThrow(MessageFromPython<v1::Budget>(r.Raw("budget")));
        const int64_t max_skill =
            config.budget.max_skill_bytes() > 0 ? config.budget.max_skill_bytes() : 16384;
        config.skill_in = SkillFrom(r.Raw("skill"), max_skill);
        config.workspace_dir = r.Get<std::string>("workspace", "");
        config.guides_root = r.Get<std::string>("guides_root", "");
        config.device = DeviceFrom(r.Get<std::string>("device", ""));
        config.workload = r.Get<std::string>("workload", "");
        config.judge = ValueOrThrow(MessageFromPython<v1::JudgeConfig>(r.Raw("judge_config")));
        config.target = r.Get<std::string>("target", "");
        config.task_fingerprint = r.Get<std::string>("task_fingerprint", "");
        config.sandbox = SandboxOptionsFrom(r.Raw("sandbox"));
        // The shell's view (shell_view.h): the judge's Python, the variant's DSL.
        config.shell_view.python = ValueOrThrow(ProbePython(python));
        const auto site_dirs =
            r.Get<std::map<std::string, std::vector<std::string>>>("dsl_site_dirs", {});
        for (const auto& [dsl, dirs] : site_dirs) {
          std::vector<std::string>& to = dsl == DslName(config.dsl)
                                             ? config.shell_view.dsl_site_dirs
                                             : config.shell_view.other_dsl_site_dirs;
          to.insert(to.end(), dirs.begin(), dirs.end());
        }
        config.grace_turns = r.Get<int>("grace_turns", config.grace_turns);
        ModelOptions model_options = ModelOptionsFrom(r.Raw("model_options"));
        // scripted/demo-dsl: the suite holding the problem (<suite>/<family>/<problem>).
        model_options.scripted_suite_root =
            std::filesystem::path(p.directory()).parent_path().parent_path().string();
        const PriceTable prices = PricesFrom(r.Get<std::string>("prices", ""));
        r.CheckAllKnown();
        config.prices = &prices;
        std::unique_ptr<ChatModel> chat_model = ModelFrom(model, model_options);
        std::unique_ptr<PythonObserver> observer;
        if (!on_event.is_none()) observer = std::make_unique<PythonObserver>(on_event);
        config.observer = observer.get();
        JudgeEvaluator evaluator(JudgeOptionsFrom(python, std::move(environment)));
        absl::StatusOr<v1::Attempt> attempt;
        {
          py::gil_scoped_release release;
          attempt = RunAttempt(p, *chat_model, evaluator, config);
          chat_model.reset();  // a Python model takes the GIL to let go of its object
        }
        return ViewOf(ValueOrThrow(std::move(attempt)));
      },
      py::arg("problem"), py::arg("model"), py::arg("options"), py::arg("python"),
      py::arg("environment"), py::arg("on_event") = py::none(),
      "Runs one attempt to its end and returns the Attempt (trajectory included). Blocks for\n"
      "the whole attempt -- model calls, shell commands, evaluations (the GIL is released; a\n"
      "Python model and on_event take it when called).");

  if (!py::detail::get_type_info(typeid(TrialExecutor))) {
    py::class_<TrialExecutor, std::shared_ptr<TrialExecutor>>(
        m, "TrialExecutor", "Runs one protocol trial (libmkb/protocol/trial_executor.h).");
  }
  py::class_<AgentTrialExecutor, TrialExecutor, std::shared_ptr<AgentTrialExecutor>>(
      m, "AgentTrialExecutor", "Runs protocol trials as agent attempts (C++ AgentTrialExecutor).")
      .def(py::init([](py::object options, const std::string& python,
                       std::vector<std::string> environment, py::object models) {
             OptionReader r(options, "options");
             AgentTrialExecutorOptions o;
             o.suite_root = r.Get<std::string>("suite_root", "");
             o.workspace_root = r.Get<std::string>("workspace_root", "");
             o.device = DeviceFrom(r.Get<std::string>("device", ""));
             o.target = r.Get<std::string>("target", "");
             o.evaluation_slots = r.Get<int>("evaluation_slots", 0);
             o.guides_root = r.Get<std::string>("guides_root", "");
             o.dsl_site_dirs =
                 r.Get<std::map<std::string, std::vector<std::string>>>("dsl_site_dirs", {});
             o.store_path = r.Get<std::string>("store_path", "");
             o.sandbox = SandboxOptionsFrom(r.Raw("sandbox"));
             o.judge_config =
                 ValueOrThrow(MessageFromPython<v1::JudgeConfig>(r.Raw("judge_config")));
             o.model_options = ModelOptionsFrom(r.Raw("model_options"));
             o.model_options.scripted_suite_root = o.suite_root;
             o.prices = PricesFrom(r.Get<std::string>("prices", ""));
             o.grace_turns = r.Get<int>("grace_turns", o.grace_turns);
             const std::vector<std::string> gpus = GpusFrom(r);
             py::object evaluator = r.Raw("evaluator");
             r.CheckAllKnown();
             o.judge = JudgeOptionsFrom(python, std::move(environment));
             o.judge.devices = gpus;
             if (!evaluator.is_none()) {
               o.evaluator = std::make_shared<PythonKernelEvaluator>(std::move(evaluator));
             }
             if (!models.is_none()) {
               std::shared_ptr<py::object> factory = Hold(models);
               const ModelOptions model_options = o.model_options;
               o.model_factory =
                   [factory, model_options](
                       const std::string& id) -> absl::StatusOr<std::unique_ptr<ChatModel>> {
                 {
                   py::gil_scoped_acquire gil;
                   try {
                     py::object adapter = (*factory)(id);
                     if (!adapter.is_none()) {
                       return std::unique_ptr<ChatModel>(
                           std::make_unique<PythonChatModel>(std::move(adapter)));
                     }
                   } catch (py::error_already_set& error) {
                     return StatusFromPython(error, absl::StrCat("models('", id, "') raised"));
                   }
                 }
                 return MakeChatModel(id, model_options);
               };
             }
             absl::StatusOr<std::unique_ptr<AgentTrialExecutor>> executor;
             {
               py::gil_scoped_release release;  // loads the suite
               executor = AgentTrialExecutor::Create(std::move(o));
             }
             return std::shared_ptr<AgentTrialExecutor>(ValueOrThrow(std::move(executor)));
           }),
           py::arg("options"), py::arg("python"), py::arg("environment"),
           py::arg("models") = py::none(),
           "options: suite_root, workspace_root (required), device, target, evaluation_slots\n"
           "(0: one per GPU), gpus ('0,1': the judge's GPUs; '': every visible one), evaluator\n"
           "(a callable(request) -> Verdict instead of the judge), guides_root, dsl_site_dirs,\n"
           "store_path, sandbox, judge_config, model_options, prices, grace_turns.\n"
           "models: None, or a callable(model_id) -> a model adapter or None (the built-in "
           "clients).")
      .def(
          "run",
          [](AgentTrialExecutor& executor, py::object spec, py::object on_event) {
            const v1::TrialSpec s = ValueOrThrow(MessageFromPython<v1::TrialSpec>(spec));
            std::unique_ptr<PythonObserver> observer;
            if (!on_event.is_none()) observer = std::make_unique<PythonObserver>(on_event);
            absl::StatusOr<v1::Attempt> attempt;
            {
              py::gil_scoped_release release;
              std::optional<ScopedTrialObserver> scope;
              if (observer != nullptr) scope.emplace(observer.get());
              attempt = executor.Run(s);
            }
            return ViewOf(ValueOrThrow(std::move(attempt)));
          },
          py::arg("spec"), py::arg("on_event") = py::none(),
          "Runs one trial (a TrialSpec message or dict) and returns its Attempt. Blocks for the\n"
          "whole attempt (the GIL is released). UnavailableError: a transient failure.");
}

}  // namespace mkb::python
