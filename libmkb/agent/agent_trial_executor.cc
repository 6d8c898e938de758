#include "libmkb/agent/agent_trial_executor.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libmkb/agent/attempt.h"
#include "libmkb/agent/detail/json_util.h"
#include "libmkb/model/names.h"
#include "libmkb/protocol/trial_observer.h"

namespace mkb {
namespace {

namespace fs = std::filesystem;

v1::DeviceKind DetectDevice() { return ::access("/dev/nvidiactl", F_OK) == 0 ? v1::CUDA : v1::CPU; }

}  // namespace

std::string TrialFolder(const std::string& trial_id) {
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(trial_id, '/', absl::SkipEmpty())) {
    std::string clean;
    for (char c : part) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      clean += ok ? c : '_';
    }
    if (clean == "." || clean == "..") clean = "_";
    parts.push_back(clean);
  }
  if (parts.empty()) parts.push_back("trial");
  return absl::StrJoin(parts, "/");
}

AgentTrialExecutor::AgentTrialExecutor(AgentTrialExecutorOptions options, Suite suite,
                                       PythonLayout python)
    : options_(std::move(options)),
      suite_(std::move(suite)),
      python_(std::move(python)),
      slots_(options_.evaluation_slots) {}

absl::StatusOr<std::unique_ptr<AgentTrialExecutor>> AgentTrialExecutor::Create(
    AgentTrialExecutorOptions options) {
  if (options.suite_root.empty()) return absl::InvalidArgumentError("suite_root: required");
  if (options.workspace_root.empty()) {
    return absl::InvalidArgumentError("workspace_root: required");
  }
  absl::StatusOr<Suite> suite = Suite::Load(options.suite_root);
  if (!suite.ok()) return suite.status();
  std::error_code error;
  fs::create_directories(options.workspace_root, error);
  if (error) {
    return absl::PermissionDeniedError(absl::StrCat(
        "workspace_root: cannot create '", options.workspace_root, "': ", error.message()));
  }
  options.workspace_root = fs::canonical(options.workspace_root, error).string();
  // Hidden from every shell by path, which the sandbox takes only absolute: a store named
  // relative to the working folder (`mkb demo`'s mkb-demo.db) is made so here.
  for (auto [field, path] :
       {std::pair<const char*, std::string*>{"suite_root", &options.suite_root},
        {"store_path", &options.store_path}}) {
    if (path->empty()) continue;
    const fs::path absolute = fs::absolute(*path, error);
    if (error) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": cannot make '", *path, "' absolute: ", error.message()));
    }
    *path = absolute.lexically_normal().string();
  }
  if (options.model_options.scripted_suite_root.empty())
    options.model_options.scripted_suite_root = options.suite_root;
  if (!options.model_factory) options.model_factory = DefaultModelFactory(options.model_options);
  if (!options.evaluator) options.evaluator = std::make_shared<JudgeEvaluator>(options.judge);
  if (options.evaluation_slots <= 0) {
    const auto* judge = dynamic_cast<const JudgeEvaluator*>(options.evaluator.get());
    options.evaluation_slots =
        judge != nullptr ? static_cast<int>(judge->judge().devices().size()) : 1;
  }
  if (options.device == v1::DEVICE_KIND_UNSPECIFIED) options.device = DetectDevice();
  if (options.guides_root.empty()) {
    const fs::path guess = fs::path(options.suite_root).parent_path() / "docs" / "dsl";
    if (fs::is_directory(guess, error)) options.guides_root = guess.string();
  }
  absl::StatusOr<PythonLayout> python = ProbePython(options.judge.python);
  if (!python.ok()) {
    return absl::Status(python.status().code(),
                        absl::StrCat("judge.python: ", python.status().message()));
  }
  return std::unique_ptr<AgentTrialExecutor>(
      new AgentTrialExecutor(std::move(options), *std::move(suite), *std::move(python)));
}

absl::StatusOr<v1::Attempt> AgentTrialExecutor::Run(const v1::TrialSpec& spec) {
  TrialObserver* observer = CurrentTrialObserver();
  if (spec.trial_id().empty()) return absl::InvalidArgumentError("trial_id: required");
  absl::StatusOr<const v1::Problem*> problem = suite_.Find(spec.problem_slug());
  if (!problem.ok()) return problem.status();
  if (spec.dsl() != v1::CUTEDSL && spec.dsl() != v1::TIRX) {
    return absl::InvalidArgumentError(
        absl::StrCat("trial ", spec.trial_id(), ": dsl must be cutedsl or tirx"));
  }
  absl::StatusOr<std::unique_ptr<ChatModel>> model = options_.model_factory(spec.model());
  if (!model.ok()) return model.status();

  AttemptConfig config;
  config.attempt_id = absl::StrCat(spec.trial_id(), "#", std::max(1, spec.try_number()));
  config.experiment = spec.experiment();
  config.arm = spec.arm();
  config.replicate = spec.replicate();
  config.try_number = std::max(1, spec.try_number());
  config.dsl = spec.dsl();
  config.budget = spec.budget();
  config.skill_in = spec.skill_in();
  config.device = spec.device() != v1::DEVICE_KIND_UNSPECIFIED ? spec.device() : options_.device;
  config.workload = spec.workload();
  config.judge = options_.judge_config;
  config.target = options_.target;
  config.task_fingerprint = spec.task_fingerprint();
  config.guides_root = options_.guides_root;
  config.sandbox = options_.sandbox;
  // The shell's view: the judge's Python, this variant's DSL (never the other's), and nothing
  // of other trials or of the store.
  config.shell_view.python = python_;
  for (const auto& [dsl, dirs] : options_.dsl_site_dirs) {
    std::vector<std::string>& to = dsl == DslName(spec.dsl())
                                       ? config.shell_view.dsl_site_dirs
                                       : config.shell_view.other_dsl_site_dirs;
    to.insert(to.end(), dirs.begin(), dirs.end());
  }
  for (const std::string& dir : config.shell_view.dsl_site_dirs)
    config.judge.add_dsl_site_dirs(dir);
  config.shell_view.private_paths.push_back(options_.workspace_root);
  config.shell_view.private_paths.push_back(options_.suite_root);
  if (!options_.store_path.empty()) {
    // SQLite's companions of a database file.
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      config.shell_view.private_paths.push_back(absl::StrCat(options_.store_path, suffix));
    }
  }
  config.slots = &slots_;
  config.prices = &options_.prices;
  config.observer = observer;
  config.grace_turns = options_.grace_turns;

  // A folder per try; one left by a process that died mid-try is kept, and this try goes beside
  // it.
  const fs::path base = fs::path(options_.workspace_root) / TrialFolder(spec.trial_id());
  std::string dir = (base / absl::StrCat("try", config.try_number)).string();
  std::error_code error;
  for (int n = 2; fs::exists(dir, error) && !fs::is_empty(dir, error); ++n) {
    dir = (base / absl::StrCat("try", config.try_number, "-", n)).string();
  }
  config.workspace_dir = dir;
  return RunAttempt(**problem, **model, *options_.evaluator, config);
}

}  // namespace mkb
