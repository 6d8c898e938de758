// metakernelbench._core.protocol: the transfer protocol (libmkb/protocol) for Python. The
// friendly API is metakernelbench.experiments (Experiment, run, plan).
//
// Executors: any C++ TrialExecutor bound as a subclass of protocol.TrialExecutor (the agent's
// AgentTrialExecutor), or a Python callable taking a TrialSpec message and returning an Attempt
// (a dict or message). A callable that raises metakernelbench.UnavailableError (or a builtin
// ConnectionError / TimeoutError) reports a transient failure; any other exception fails the
// trial.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bindings/bindings.h"
#include "bindings/proto_convert.h"
#include "bindings/status.h"
#include "libmkb/model/defaults.h"
#include "libmkb/model/names.h"
#include "libmkb/protocol/plan.h"
#include "libmkb/protocol/protocol.h"
#include "libmkb/protocol/thread_pool_scheduler.h"
#include "libmkb/protocol/trial_executor.h"
#include "libmkb/store/result_store.h"
#include "libmkb/suite/suite.h"

namespace mkb::python {
namespace {

namespace py = pybind11;

// The status a Python exception stands for: the inverse of ThrowIfError for metakernelbench
// errors, Unavailable for connection errors and timeouts, Internal for anything else.
absl::Status StatusFromPython(py::error_already_set& error) {
  const std::string what = error.what();
  py::module_ core = py::module_::import("metakernelbench._core");
  const std::pair<const char*, absl::StatusCode> classes[] = {
      {"UnavailableError", absl::StatusCode::kUnavailable},
      {"InvalidArgumentError", absl::StatusCode::kInvalidArgument},
      {"NotFoundError", absl::StatusCode::kNotFound},
      {"AlreadyExistsError", absl::StatusCode::kAlreadyExists},
      {"FailedPreconditionError", absl::StatusCode::kFailedPrecondition},
      {"PermissionDeniedError", absl::StatusCode::kPermissionDenied},
      {"DeadlineExceededError", absl::StatusCode::kDeadlineExceeded},
      {"ResourceExhaustedError", absl::StatusCode::kResourceExhausted},
      {"CancelledError", absl::StatusCode::kCancelled},
  };
  for (const auto& [name, code] : classes) {
    if (error.matches(core.attr(name))) return absl::Status(code, what);
  }
  if (error.matches(PyExc_ConnectionError) || error.matches(PyExc_TimeoutError)) {
    return absl::UnavailableError(what);
  }
  return absl::InternalError(what);
}

// A Python callable as a TrialExecutor. Run takes the GIL: Python executors run one at a time
// unless they release it (numpy, I/O, subprocesses do).
class PythonTrialExecutor : public TrialExecutor {
 public:
  explicit PythonTrialExecutor(py::object callable) : callable_(std::move(callable)) {}
  ~PythonTrialExecutor() override {
    py::gil_scoped_acquire gil;
    callable_ = py::object();
  }

  absl::StatusOr<v1::Attempt> Run(const v1::TrialSpec& spec) override {
    py::gil_scoped_acquire gil;
    try {
      py::object result = callable_(ViewOf(spec));
      absl::StatusOr<v1::Attempt> attempt = MessageFromPython<v1::Attempt>(result);
      if (!attempt.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the executor's attempt for ", spec.trial_id(), ": ", attempt.status().message()));
      }
      return attempt;
    } catch (py::error_already_set& error) {
      return StatusFromPython(error);
    }
  }

 private:
  py::object callable_;
};

// Forwards run events to a Python callable, with the GIL; its exceptions are reported as
// unraisable (a progress display must not stop a run).
class PythonListener : public ProtocolListener {
 public:
  explicit PythonListener(py::object callback) : callback_(std::move(callback)) {}

  void OnTrialEvent(const TrialEvent& event) override {
    py::gil_scoped_acquire gil;
    try {
      callback_(EventToPython(event));
    } catch (py::error_already_set& error) {
      error.discard_as_unraisable("metakernelbench run progress callback");
    }
  }

  static py::dict ProgressToPython(const RunProgress& p) {
    py::dict d;
    d["planned"] = p.planned;
    d["reused"] = p.reused;
    d["running"] = p.running;
    d["finished"] = p.finished;
    d["skipped"] = p.skipped;
    d["failed"] = p.failed;
    d["blocked"] = p.blocked;
    d["retries"] = p.retries;
    d["passed"] = p.passed;
    d["done"] = p.done();
    d["submissions"] = p.submissions;
    d["input_tokens"] = p.input_tokens;
    d["output_tokens"] = p.output_tokens;
    d["cost_usd"] = p.cost_usd;
    return d;
  }

 private:
  static py::dict EventToPython(const TrialEvent& event) {
    py::dict d;
    d["kind"] = TrialEventKindName(event.kind);
    const v1::TrialSpec& spec = *event.spec;
    d["trial_id"] = spec.trial_id();
    d["problem_slug"] = spec.problem_slug();
    d["arm"] = spec.arm();
    d["replicate"] = spec.replicate();
    d["try_number"] = spec.try_number();
    d["message"] = event.message;
    if (event.attempt != nullptr) {
      d["state"] = AttemptStateName(event.attempt->state());
      d["passed"] = event.attempt->final().passed();
      d["speedup"] = event.attempt->final().has_speedup_vs_eager()
                         ? py::cast(event.attempt->final().speedup_vs_eager())
                         : py::none();
    }
    if (event.submission != nullptr) {
      d["submission_index"] = event.submission->index();
      d["counted"] = event.submission->counted();
      d["verdict"] = VerdictStatusName(event.submission->verdict().status());
    }
    if (event.usage != nullptr) {
      d["input_tokens"] = event.usage->input_tokens();
      d["output_tokens"] = event.usage->output_tokens();
      d["cost_usd"] = event.usage->cost_usd();
    }
    d["progress"] = ProgressToPython(event.progress);
    return d;
  }

  py::object callback_;
};

std::shared_ptr<TrialExecutor> ExecutorFromPython(py::object executor) {
  if (py::isinstance<TrialExecutor>(executor))
    return executor.cast<std::shared_ptr<TrialExecutor>>();
  if (PyCallable_Check(executor.ptr())) {
    return std::shared_ptr<TrialExecutor>(new PythonTrialExecutor(std::move(executor)),
                                          [](TrialExecutor* e) { delete e; });
  }
  ThrowIfError(absl::InvalidArgumentError(
      "executor: expected a protocol.TrialExecutor or a callable(spec) -> attempt"));
  return nullptr;
}

ProtocolOptions Options(bool rerun_stale, const std::string& salt, double retry_delay_s) {
  if (!(retry_delay_s >= 0))
    ThrowIfError(absl::InvalidArgumentError("retry_delay_s: must be >= 0"));
  ProtocolOptions options;
  options.rerun_stale = rerun_stale;
  options.plan.fingerprint_salt = salt;
  options.retry_delay = absl::Seconds(retry_delay_s);
  return options;
}

py::dict EntryToPython(const PlanEntry& entry) {
  const v1::TrialSpec& spec = entry.trial.spec;
  py::dict d;
  d["trial_id"] = spec.trial_id();
  d["problem_slug"] = spec.problem_slug();
  d["problem_number"] = spec.problem_number();
  d["family"] = FamilyName(spec.family());
  d["arm"] = spec.arm();
  d["dsl"] = DslName(spec.dsl());
  d["replicate"] = spec.replicate();
  d["skill_source"] =
      EnumShortName(v1::SkillSource::Kind_descriptor()->FindValueByNumber(entry.trial.skill_kind));
  d["depends_on"] = entry.depends_on;
  d["action"] = PlanActionName(entry.action);
  d["reason"] = entry.reason;
  d["stored_state"] = AttemptStateName(entry.stored_state);
  d["stored_try"] = entry.stored_try;
  d["task_fingerprint"] = spec.task_fingerprint();
  return d;
}

py::dict SummaryToPython(const RunSummary& summary) {
  py::dict d;
  d["progress"] = PythonListener::ProgressToPython(summary.progress);
  d["failed"] = summary.failed;
  d["blocked"] = summary.blocked;
  d["stale_kept"] = summary.stale_kept;
  d["warnings"] = summary.warnings;
  d["retired"] = summary.retired;
  d["complete"] = summary.complete();
  return d;
}

}  // namespace

void RegisterProtocol(py::module_& module) {
  py::module_ m = module.def_submodule(
      "protocol",
      "The transfer protocol (libmkb/protocol). Use metakernelbench.experiments to define and "
      "run experiments.");

  // Registered once per process, by whichever part of the module comes first (the agent's
  // bindings derive AgentTrialExecutor from it); here it is always protocol.TrialExecutor.
  if (py::detail::get_type_info(typeid(TrialExecutor)) == nullptr) {
    py::class_<TrialExecutor, std::shared_ptr<TrialExecutor>>(
        m, "TrialExecutor",
        "Base of executors written in C++ (libmkb/protocol/trial_executor.h), e.g. the agent's.");
  } else {
    m.attr("TrialExecutor") = py::type::of<TrialExecutor>();
  }

  m.def(
      "plan",
      [](py::handle spec, std::shared_ptr<Suite> suite, std::shared_ptr<ResultStore> store,
         bool rerun_stale, const std::string& fingerprint_salt) {
        const v1::ExperimentSpec experiment =
            ValueOrThrow(MessageFromPython<v1::ExperimentSpec>(spec, /*validate=*/false));
        const ProtocolOptions options = Options(rerun_stale, fingerprint_salt, 0);
        absl::StatusOr<ExperimentStatus> status;
        {
          py::gil_scoped_release release;
          status = PlanExperiment(experiment, *suite, store.get(), options);
        }
        const ExperimentStatus plan = ValueOrThrow(std::move(status));
        py::list entries;
        for (const PlanEntry& entry : plan.entries) entries.append(EntryToPython(entry));
        py::dict out;
        out["spec"] = ViewOf(plan.plan.spec);
        out["entries"] = entries;
        out["outside_plan"] = plan.outside_plan;
        return out;
      },
      py::arg("spec"), py::arg("suite"), py::arg("store") = nullptr, py::arg("rerun_stale") = false,
      py::arg("fingerprint_salt") = "",
      "The dry run: {'spec': the ExperimentSpec with defaults, 'entries': [one dict per trial, "
      "in start order: trial_id, arm, replicate, depends_on, action ('run', 'reuse', "
      "'rerun_failed', 'rerun_interrupted', 'stale', 'rerun_stale', 'check_skill', 'blocked'), "
      "reason, ...], 'outside_plan': [ids of the experiment's stored trials that the plan no "
      "longer holds: a run retires them]}. Reads the store only.");

  m.def(
      "run",
      [](py::handle spec, std::shared_ptr<Suite> suite, std::shared_ptr<ResultStore> store,
         py::object executor, bool rerun_stale, const std::string& fingerprint_salt,
         double retry_delay_s, py::object progress, py::object cancel) {
        const v1::ExperimentSpec experiment =
            ValueOrThrow(MessageFromPython<v1::ExperimentSpec>(spec, /*validate=*/false));
        if (store == nullptr) ThrowIfError(absl::InvalidArgumentError("store: required"));
        std::shared_ptr<TrialExecutor> trial_executor = ExecutorFromPython(std::move(executor));
        ProtocolOptions options = Options(rerun_stale, fingerprint_salt, retry_delay_s);
        std::optional<PythonListener> listener;
        if (!progress.is_none()) {
          listener.emplace(progress);
          options.listener = &*listener;
        }
        // Polled on this (the calling) thread: Python signal handlers run here, so Ctrl-C
        // cancels the run; the KeyboardInterrupt is raised again once the run has stopped.
        std::optional<py::error_already_set> interrupt;
        bool cancel_requested = false;
        options.cancelled = [&]() {
          py::gil_scoped_acquire gil;
          if (PyErr_CheckSignals() != 0) {
            if (!interrupt.has_value()) interrupt.emplace();
            PyErr_Clear();
            cancel_requested = true;
          }
          if (!cancel_requested && !cancel.is_none()) {
            try {
              cancel_requested = cancel().cast<bool>();
            } catch (py::error_already_set& error) {
              error.discard_as_unraisable("metakernelbench run cancel callback");
            }
          }
          return cancel_requested;
        };
        absl::StatusOr<RunSummary> summary;
        {
          py::gil_scoped_release release;
          ThreadPoolScheduler scheduler(*trial_executor, WithDefaults(experiment).concurrency());
          summary = RunExperiment(experiment, *suite, *store, scheduler, options);
        }
        if (interrupt.has_value()) {
          interrupt->restore();
          throw py::error_already_set();
        }
        return SummaryToPython(ValueOrThrow(std::move(summary)));
      },
      py::arg("spec"), py::arg("suite"), py::arg("store"), py::arg("executor"),
      py::arg("rerun_stale") = false, py::arg("fingerprint_salt") = "",
      py::arg("retry_delay_s") = 5.0, py::arg("progress") = py::none(),
      py::arg("cancel") = py::none(),
      "Runs the experiment into the store and returns the summary dict (progress totals, "
      "failed, blocked, stale_kept, warnings, complete). Blocks until every runnable trial has "
      "ended, with the GIL released; `progress(event: dict)` is called for each event, `cancel()` "
      "about five times a second (True: start nothing new, wait for running trials, raise "
      "CancelledError). Ctrl-C cancels likewise, then raises KeyboardInterrupt. Raises "
      "FailedPreconditionError for stale trials (unless rerun_stale) or when another process "
      "runs the experiment.");
}

}  // namespace mkb::python
