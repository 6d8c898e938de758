#include "libmkb/agent/shell_view.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libmkb/agent/detail/json_util.h"
#include "libmkb/agent/detail/spawn.h"
#include "libmkb/model/names.h"
#include "libmkb/suite/suite.h"

namespace mkb {
namespace {

namespace fs = std::filesystem;

// The folders ShellSandbox shows itself; Python roots inside them need no mount.
constexpr const char* kSystemFolders[] = {"/usr",   "/bin",   "/sbin",   "/lib",
                                          "/lib32", "/lib64", "/libx32", "/etc"};

// Printed by the probe after a marker, so that whatever a .pth file prints is ignored.
constexpr char kProbeMarker[] = "@@mkb-python-layout@@";
constexpr char kProbe[] = R"py(
import importlib.util, json, os, sys
spec = importlib.util.find_spec("metakernelbench")
exe = os.path.realpath(sys.executable)
roots = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
         os.path.dirname(os.path.dirname(exe))] + [p for p in sys.path if p]
roots += [os.path.realpath(p) for p in roots]  # scripts' #! lines name the resolved venv
packages = list(spec.submodule_search_locations or []) if spec is not None else []
print("@@mkb-python-layout@@" + json.dumps({"roots": roots, "packages": packages}))
)py";

bool IsWithin(const std::string& path, const std::string& folder) {
  return path == folder || absl::StartsWith(path, folder + "/");
}

std::string Normal(const std::string& path) { return fs::path(path).lexically_normal().string(); }

std::string FindOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    std::error_code error;
    const fs::path absolute = fs::absolute(name, error);
    return error ? name : Normal(absolute.string());
  }
  const std::string path = detail::GetEnv("PATH");
  for (absl::string_view dir : absl::StrSplit(path.empty() ? "/usr/bin:/bin" : path, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = absl::StrCat(dir, "/", name);
    if (::access(candidate.c_str(), X_OK) == 0) return Normal(candidate);
  }
  return "";
}

// `paths` that exist, absolute and normalised, outside the system's folders, none inside
// another, in their first order.
std::vector<std::string> OutermostFolders(const std::vector<std::string>& paths) {
  std::vector<std::string> kept;
  for (const std::string& raw : paths) {
    std::error_code error;
    if (raw.empty() || !fs::path(raw).is_absolute() || !fs::exists(raw, error)) continue;
    const std::string path = Normal(raw);
    if (path == "/") continue;  // never the whole host
    bool covered = false;
    for (const char* system : kSystemFolders) covered |= IsWithin(path, system);
    for (const std::string& k : kept) covered |= IsWithin(path, k);
    if (covered) continue;
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](const std::string& k) { return IsWithin(k, path); }),
               kept.end());
    kept.push_back(path);
  }
  return kept;
}

// `path` inside the sandbox when `from` (a folder on the host) is mounted at `to`.
std::string Translate(const std::string& path, const std::string& from, const std::string& to) {
  const std::string p = Normal(path);
  if (!IsWithin(p, from)) return p;
  return to + p.substr(from.size());
}

}  // namespace

absl::StatusOr<PythonLayout> ProbePython(const std::string& python) {
  PythonLayout layout;
  layout.interpreter = FindOnPath(python);
  if (layout.interpreter.empty() || ::access(layout.interpreter.c_str(), X_OK) != 0) {
    return absl::NotFoundError(
        absl::StrCat("python: '", python, "' is not an executable file or a name on PATH"));
  }
  absl::StatusOr<detail::Finished> run =
      detail::RunToEnd({layout.interpreter, "-E", "-s", "-c", kProbe},
                       {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}, absl::Seconds(60));
  if (!run.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "python: '", layout.interpreter, "' did not answer: ", run.status().message()));
  }
  const size_t marker = run->output.rfind(kProbeMarker);
  nlohmann::json answer;
  if (run->exit_code == 0 && marker != std::string::npos) {
    answer = detail::ParseJson(absl::StripTrailingAsciiWhitespace(
        absl::string_view(run->output).substr(marker + sizeof(kProbeMarker) - 1)));
  }
  if (!answer.is_object() || !answer["roots"].is_array() || !answer["packages"].is_array()) {
    return absl::FailedPreconditionError(
        absl::StrCat("python: '", layout.interpreter, "' (exit code ", run->exit_code,
                     ") did not say where it lives: ", run->output.substr(0, 2000)));
  }
  std::vector<std::string> roots;
  for (const nlohmann::json& root : answer["roots"]) {
    if (root.is_string()) roots.push_back(root.get<std::string>());
  }
  layout.roots = OutermostFolders(roots);
  for (const nlohmann::json& dir : answer["packages"]) {
    if (dir.is_string()) layout.package_dirs.push_back(Normal(dir.get<std::string>()));
  }
  return layout;
}

std::string TargetArch(absl::string_view target) {
  const size_t open = target.rfind("(sm_");
  if (open == absl::string_view::npos) return "";
  const size_t close = target.find(')', open);
  if (close == absl::string_view::npos) return "";
  return std::string(target.substr(open + 1, close - open - 1));
}

void AddShellView(const ShellView& view, const v1::Problem& problem, v1::Dsl dsl,
                  absl::string_view target, bool isolated, ShellSandboxOptions* options) {
  std::vector<std::string> environment;
  std::vector<ShellMount>& mounts = options->read_only;
  std::vector<std::string>& hidden = options->hidden_paths;

  if (view.python.has_value()) {
    for (const std::string& root : view.python->roots) mounts.push_back({root, ""});
    for (const std::string& package : view.python->package_dirs) {
      hidden.push_back(package + "/problems");
      mounts.push_back({package + "/judge", "", {"__init__.py"}});
    }
    const std::string bin = fs::path(view.python->interpreter).parent_path().string();
    environment.push_back(absl::StrCat("PATH=", bin, ":/usr/local/bin:/usr/bin:/bin"));
  }

  // The variant's DSL: its site folder at kShellDslHome/<dsl>, the other entries (folders
  // inside it, as a toolchain's python_path lists them) translated there.
  const std::string dsl_name = DslName(dsl);
  if (!view.dsl_site_dirs.empty()) {
    const std::string site = Normal(view.dsl_site_dirs.front());
    const std::string inside = absl::StrCat(kShellDslHome, "/", dsl_name);
    mounts.push_back({site, inside});
    std::vector<std::string> python_path;
    for (const std::string& dir : view.dsl_site_dirs) {
      if (!IsWithin(Normal(dir), site)) mounts.push_back({Normal(dir), ""});
      python_path.push_back(Translate(dir, site, inside));
    }
    if (isolated) {
      environment.push_back(absl::StrCat("PYTHONPATH=", absl::StrJoin(python_path, ":")));
      environment.push_back(absl::StrCat("MKB_DSL_HOME=", kShellDslHome));
    } else {
      environment.push_back(absl::StrCat("PYTHONPATH=", absl::StrJoin(view.dsl_site_dirs, ":")));
    }
  }
  for (const std::string& dir : view.other_dsl_site_dirs) hidden.push_back(dir);
  environment.push_back(absl::StrCat("MKB_DSL=", dsl_name));

  // The problem, alone in a suite: <root>/<family>/<NN_slug>/ as Suite::Load reads it.
  const fs::path problem_dir = fs::path(problem.directory()).lexically_normal();
  if (!problem.directory().empty()) {
    const fs::path inside =
        fs::path(kShellSuiteRoot) / problem_dir.parent_path().filename() / problem_dir.filename();
    mounts.push_back(
        {problem_dir.string(), inside.string(), {kProblemFileName, kReferenceFileName}});
    environment.push_back(
        absl::StrCat("MKB_SUITE=", isolated ? kShellSuiteRoot
                                            : problem_dir.parent_path().parent_path().string()));
  }

  for (const std::string& path : view.private_paths) hidden.push_back(path);
  if (const std::string arch = TargetArch(target); !arch.empty()) {
    environment.push_back(absl::StrCat("MKB_TARGET_ARCH=", arch));
  }
  // The view's variables first: entries the caller gave win (ShellSandbox keeps the last).
  options->environment.insert(options->environment.begin(), environment.begin(), environment.end());
}

}  // namespace mkb
