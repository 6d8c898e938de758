// The judge's C++ parts as used by the Python judge host and worker
// (python/metakernelbench/judge/): sandbox, supervisor, channel, shared segments, comparisons,
// static audit, verdict assembly and the report.
#include <pybind11/stl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bindings/bindings.h"
#include "bindings/dlpack_capsule.h"
#include "bindings/proto_convert.h"
#include "bindings/python_ast.h"
#include "bindings/status.h"
#include "libmkb/judge/channel.h"
#include "libmkb/judge/compare.h"
#include "libmkb/judge/device_pool.h"
#include "libmkb/judge/judge.h"
#include "libmkb/judge/measurement_plan.h"
#include "libmkb/judge/process_supervisor.h"
#include "libmkb/judge/python_parser.h"
#include "libmkb/judge/python_syntax.h"
#include "libmkb/judge/report.h"
#include "libmkb/judge/runtime_audit.h"
#include "libmkb/judge/sandbox.h"
#include "libmkb/judge/seeds.h"
#include "libmkb/judge/shared_segment.h"
#include "libmkb/judge/static_audit.h"
#include "libmkb/judge/structure.h"
#include "libmkb/judge/timing_summary.h"
#include "libmkb/judge/verdict_builder.h"
#include "libmkb/model/names.h"

namespace mkb::python {
namespace {

namespace py = pybind11;

template <typename Enum>
Enum EnumFromName(const google::protobuf::EnumDescriptor* type, const std::string& name,
                  const char* what) {
  const auto* value = FindEnumValue(type, name);
  if (value == nullptr) {
    ThrowIfError(absl::InvalidArgumentError(
        absl::StrCat(what, ": '", name, "' is not one of ", EnumShortNames(type))));
  }
  return static_cast<Enum>(value->number());
}

v1::JudgePhase Phase(const std::string& name) {
  return EnumFromName<v1::JudgePhase>(v1::JudgePhase_descriptor(), name, "phase");
}

// A tensor leaf of a draw, as the host passes it: (path, out, out_dtype, expected, expected_dtype,
// anchor or None, anchor_dtype, exact).
struct Leaf {
  std::string path;
  py::object out;
  std::string out_dtype;
  py::object expected;
  std::string expected_dtype;
  py::object anchor;
  std::string anchor_dtype;
  bool exact;
};

TensorRef Ref(py::handle capsule, const std::string& dtype, const std::string& what) {
  return ValueOrThrow(TensorRefFromCapsule(capsule, dtype, what));
}

TensorComparison Compare(const Leaf& leaf, const AnchorTolerance& tolerance, TensorRef* out_ref) {
  *out_ref = Ref(leaf.out, leaf.out_dtype, leaf.path);
  const TensorRef expected = Ref(leaf.expected, leaf.expected_dtype, leaf.path + " (expected)");
  absl::StatusOr<TensorComparison> result;
  if (leaf.exact || leaf.anchor.is_none()) {
    py::gil_scoped_release release;
    result = CompareExact(*out_ref, expected);
  } else {
    const TensorRef anchor = Ref(leaf.anchor, leaf.anchor_dtype, leaf.path + " (anchor)");
    py::gil_scoped_release release;
    result = CompareToAnchor(*out_ref, expected, anchor, tolerance);
  }
  return ValueOrThrow(std::move(result));
}

}  // namespace

void RegisterJudge(py::module_& m) {
  // --- isolation ---------------------------------------------------------------------------
  m.def(
      "enter_sandbox",
      [](std::vector<int> keep_fds, int64_t address_space_bytes, int64_t cpu_seconds,
         bool isolate_network, std::string view_root, std::vector<std::string> read_only_paths,
         std::vector<std::string> writable_paths, std::vector<std::string> hidden_paths,
         std::vector<std::string> device_paths, int64_t tmp_bytes, int64_t writable_bytes, int uid,
         int gid, bool seccomp) {
        SandboxOptions options;
        options.keep_fds = std::move(keep_fds);
        options.address_space_bytes = address_space_bytes;
        options.cpu_seconds = cpu_seconds;
        options.isolate_network = isolate_network;
        options.view_root = std::move(view_root);
        options.read_only_paths = std::move(read_only_paths);
        options.writable_paths = std::move(writable_paths);
        options.hidden_paths = std::move(hidden_paths);
        options.device_paths = std::move(device_paths);
        if (tmp_bytes > 0) options.tmp_bytes = tmp_bytes;
        if (writable_bytes >= 0) options.writable_bytes = writable_bytes;
        options.uid = static_cast<uid_t>(uid);
        options.gid = static_cast<gid_t>(gid);
        options.seccomp = seccomp;
        // Returns in the worker only (the keeper process never comes back from here).
        const SandboxReport report = ValueOrThrow(EnterSandbox(options));
        py::dict out;
        out["own_process_group"] = report.own_process_group;
        out["own_pid_namespace"] = report.own_pid_namespace;
        out["own_mount_namespace"] = report.own_mount_namespace;
        out["filesystem_view"] = report.filesystem_view;
        out["network_isolated"] = report.network_isolated;
        out["privileges_dropped"] = report.privileges_dropped;
        out["no_new_privileges"] = report.no_new_privileges;
        out["syscall_filter"] = report.syscall_filter;
        out["dies_with_host"] = report.dies_with_host;
        out["uid"] = static_cast<int>(report.uid);
        out["notes"] = report.notes;
        return out;
      },
      py::arg("keep_fds"), py::arg("address_space_bytes") = 0, py::arg("cpu_seconds") = 0,
      py::arg("isolate_network") = true, py::arg("view_root") = "",
      py::arg("read_only_paths") = std::vector<std::string>{},
      py::arg("writable_paths") = std::vector<std::string>{},
      py::arg("hidden_paths") = std::vector<std::string>{},
      py::arg("device_paths") = std::vector<std::string>{}, py::arg("tmp_bytes") = 0,
      py::arg("writable_bytes") = -1, py::arg("uid") = 65534, py::arg("gid") = 65534,
      py::arg("seccomp") = true,
      "Worker side, first thing after fork: namespaces, the filesystem view (writable directories "
      "as tmpfs copies of writable_bytes; -1: the default, 0: binds), a second fork (the "
      "caller continues as PID 1 of its own PID namespace; the intermediate keeper never "
      "returns), an unprivileged user without capabilities, no_new_privs, the syscall filter. "
      "Raises when the worker cannot be isolated.");
  m.def("seccomp_denied_syscalls", &SeccompDeniedSyscalls,
        "The system calls the worker's filter refuses.");
  m.def(
      "seal_cpu_affinity", [] { ThrowIfError(SealCpuAffinity()); },
      "Worker side, once pinned: sched_setaffinity refused (EPERM) to every thread of this "
      "process, now and later. Raises when the filter cannot be installed.");
  m.def(
      "seal_processes", [] { ThrowIfError(SealProcesses()); },
      "Refuses new processes to every thread of this process from now on (fork, vfork, clone "
      "without CLONE_THREAD: EPERM; a seccomp filter): the CPU judge's worker, once prepared.");
  m.def(
      "protect_host", [] { ThrowIfError(ProtectHost()); },
      "Host side: makes this process non-dumpable (no /proc/<pid>/mem or ptrace for same-user "
      "processes).");

  py::class_<ProcessSupervisor>(m, "ProcessSupervisor",
                                "Watches a forked worker: output tails, memory, kill, exit.")
      .def(py::init([](int pid, int stdout_fd, int stderr_fd, int64_t memory_limit_bytes,
                       int tail_bytes) {
             SupervisorOptions options;
             options.memory_limit_bytes = memory_limit_bytes;
             options.tail_bytes = static_cast<size_t>(tail_bytes);
             // The supervisor owns the descriptors from here (Python hands them over).
             return std::make_unique<ProcessSupervisor>(pid, UniqueFd(stdout_fd),
                                                        UniqueFd(stderr_fd), options);
           }),
           py::arg("pid"), py::arg("stdout_fd"), py::arg("stderr_fd"),
           py::arg("memory_limit_bytes") = 0, py::arg("tail_bytes") = 8192)
      .def_property_readonly("pid", &ProcessSupervisor::pid)
      .def(
          "watch_thread",
          [](ProcessSupervisor& s, int local_tid) { ThrowIfError(s.WatchThread(local_tid)); },
          py::arg("local_tid"),
          "The worker's thread of this id in its PID namespace (KernelThread.native_id): from "
          "now on cpu_sample reads the worker's CPU time, its main thread's and that thread's.")
      .def(
          "cpu_sample",
          [](const ProcessSupervisor& s) {
            const ProcessSupervisor::CpuSample c = s.SampleCpu();
            return py::make_tuple(c.process_ns, c.main_thread_ns, c.kernel_thread_ns);
          },
          "(worker process, its main thread, the kernel's thread) CPU time in ns, from the "
          "kernel's accounting; zeros before watch_thread, the kernel thread's -1 once it is "
          "gone.")
      .def("alive", &ProcessSupervisor::alive)
      .def("kill", &ProcessSupervisor::Kill, py::arg("timed_out") = false)
      .def_property_readonly("peak_rss_bytes", &ProcessSupervisor::peak_rss_bytes)
      .def("snapshot", [](ProcessSupervisor& s) { return ViewOf(s.Snapshot()); })
      .def(
          "finish",
          [](ProcessSupervisor& s, double timeout_s) {
            v1::ProcessOutcome outcome;
            {
              py::gil_scoped_release release;
              outcome = s.Finish(absl::Seconds(timeout_s));
            }
            return ViewOf(outcome);
          },
          py::arg("timeout_s") = 5.0,
          "Waits for the worker to exit (killing it after timeout_s); blocks.");

  py::class_<Channel>(m, "Channel", "One end of the host/worker message channel (SOCK_SEQPACKET).")
      .def(py::init<int>(), py::arg("fd"))
      .def_static("pair",
                  [] {
                    auto pair = ValueOrThrow(Channel::CreatePair());
                    return std::make_pair(std::move(pair.first), std::move(pair.second));
                  })
      .def("fileno", &Channel::fd)
      .def("detach", &Channel::Release)
      .def(
          "send",
          [](Channel& c, py::bytes data, std::vector<int> fds) {
            std::string bytes = data;
            absl::Status sent;
            {
              py::gil_scoped_release release;
              sent = c.Send(bytes, fds);
            }
            ThrowIfError(sent);  // builds a Python exception: with the GIL
          },
          py::arg("data"), py::arg("fds") = std::vector<int>{})
      .def(
          "receive",
          [](Channel& c, double timeout_s) {
            absl::StatusOr<ChannelMessage> message;
            {
              py::gil_scoped_release release;
              message = c.Receive(absl::Now() + absl::Seconds(timeout_s));
            }
            ChannelMessage value = ValueOrThrow(std::move(message));
            return py::make_tuple(py::bytes(value.bytes), value.fds);
          },
          py::arg("timeout_s"),
          "Blocks up to timeout_s; raises DeadlineExceededError, or UnavailableError when the peer "
          "is gone, or PermissionDeniedError for a message that fails authentication.")
      .def(
          "authenticate",
          [](Channel& c, py::bytes key, const std::string& own, const std::string& peer) {
            if (own.size() != 1 || peer.size() != 1)
              throw py::value_error("own and peer are one-character direction tags");
            c.Authenticate(std::string(key), own[0], peer[0]);
          },
          py::arg("key"), py::arg("own"), py::arg("peer"),
          "Tags every message sent and checks every message received (HMAC-SHA256, in sequence).")
      .def(
          "accept_key",
          [](Channel& c, double timeout_s, const std::string& own, const std::string& peer) {
            if (own.size() != 1 || peer.size() != 1)
              throw py::value_error("own and peer are one-character direction tags");
            absl::Status accepted;
            {
              py::gil_scoped_release release;
              accepted = c.AcceptKey(absl::Now() + absl::Seconds(timeout_s), own[0], peer[0]);
            }
            ThrowIfError(accepted);
          },
          py::arg("timeout_s"), py::arg("own"), py::arg("peer"),
          "Receives the key as the next message and keeps it inside the channel (never returned "
          "to Python); blocks.")
      .def_property_readonly("authenticated", &Channel::authenticated);

  py::class_<SharedSegment, std::shared_ptr<SharedSegment>>(
      m, "SharedSegment", "Shared memory (memfd) for CPU tensors.")
      .def_static(
          "create",
          [](int64_t bytes) {
            return std::make_shared<SharedSegment>(
                ValueOrThrow(SharedSegment::Create(static_cast<size_t>(bytes))));
          },
          py::arg("bytes"))
      .def_static(
          "map",
          [](int fd, bool writable) {
            return std::make_shared<SharedSegment>(ValueOrThrow(SharedSegment::Map(fd, writable)));
          },
          py::arg("fd"), py::arg("writable"), "Maps a received segment, taking ownership of fd.")
      .def_static(
          "identity",
          [](int fd) {
            // fstat(2) here, not os.fstat: the worker's main thread calls this for each call's
            // inputs, and os.fstat builds its result through the posix module's state (its
            // `billion`), Python objects that six red-team rounds rewrote with raw memory so that
            // this thread ran the kernel's work before the clock (2026-12-07).
            struct stat st {};
            if (::fstat(fd, &st) != 0) {
              PyErr_SetFromErrno(PyExc_OSError);
              throw py::error_already_set();
            }
            return py::make_tuple(static_cast<uint64_t>(st.st_dev),
                                  static_cast<uint64_t>(st.st_ino));
          },
          py::arg("fd"),
          "(st_dev, st_ino) of a descriptor, by fstat(2) in C++: which segment a received "
          "descriptor names. OSError if it names none.")
      .def_property_readonly("fd", &SharedSegment::fd)
      .def_property_readonly("size", &SharedSegment::size)
      .def(
          "capsule",
          [](std::shared_ptr<SharedSegment> segment) {
            SharedSegment* raw = segment.get();
            auto keep = std::make_shared<std::shared_ptr<SharedSegment>>(std::move(segment));
            return ByteCapsule(raw->data(), static_cast<int64_t>(raw->size()), DLDevice{kDLCPU, 0},
                               [keep]() mutable { keep->reset(); });
          },
          "A DLPack capsule of the whole segment as uint8[size] (torch.from_dlpack it).");
  m.def("align_tensor_offset", &AlignTensorOffset);

  // --- checks ------------------------------------------------------------------------------
  m.def(
      "draw_seeds", [](int count) { return ValueOrThrow(DrawSeeds(count)); }, py::arg("count"),
      "count secret 63-bit seeds from the OS entropy source.");
  m.def(
      "static_audit",
      [](const std::string& source, const std::string& dsl, bool require_dsl, py::object policy,
         const std::string& filename, const std::string& parser,
         std::vector<std::pair<std::string, std::string>> module_aliases,
         std::vector<std::string> third_party_roots) {
        StaticAuditOptions options;
        options.third_party_roots = std::move(third_party_roots);
        options.dsl = dsl.empty() ? v1::DSL_UNSPECIFIED : ValueOrThrow(ParseDsl(dsl));
        options.require_dsl = require_dsl;
        options.filename = filename;
        options.module_aliases = std::move(module_aliases);
        std::vector<v1::AuditFinding> findings;
        if (parser == "cpython") {
          // The interpreter's own parse; source it refuses goes to the C++ parser, which
          // reports it (static.unparsable) if it cannot read it either.
          absl::StatusOr<std::unique_ptr<PyNode>> tree = CPythonSyntaxTree(source);
          findings =
              tree.ok() ? StaticAudit(source, **tree, options) : StaticAudit(source, options);
        } else if (parser == "mkb") {
          findings = StaticAudit(source, options);
        } else {
          throw py::value_error(
              absl::StrCat("parser: '", parser, "' is neither 'cpython' nor 'mkb'"));
        }
        ApplyAuditPolicy(ValueOrThrow(MessageFromPython<v1::AuditPolicy>(policy)), &findings);
        py::list out;
        for (v1::AuditFinding& f : findings) out.append(ViewOf(std::move(f)));
        return out;
      },
      py::arg("source"), py::arg("dsl") = "", py::arg("require_dsl") = true,
      py::arg("policy") = py::none(), py::arg("filename") = "kernel.py",
      py::arg("parser") = "cpython",
      py::arg("module_aliases") = std::vector<std::pair<std::string, std::string>>{},
      py::arg("third_party_roots") = std::vector<std::string>{},
      "The static audit of a kernel source: a list of AuditFinding. module_aliases: (alias, "
      "module) pairs, attribute paths that hold a module under another name (a path through one "
      "is checked as the module's own too). third_party_roots: top-level packages installed "
      "beside the toolchain that a kernel may not import. parser 'cpython' reads the "
      "source with this interpreter's ast.parse (what the judge host does), 'mkb' with the C++ "
      "parser (what C++ callers of mkb::StaticAudit get).");
  m.def(
      "python_syntax_dump",
      [](const std::string& source, const std::string& parser) {
        if (parser == "cpython") return DumpPySyntax(*ValueOrThrow(CPythonSyntaxTree(source)));
        if (parser == "mkb") return DumpPySyntax(*ValueOrThrow(ParsePython(source)));
        throw py::value_error(
            absl::StrCat("parser: '", parser, "' is neither 'cpython' nor 'mkb'"));
      },
      py::arg("source"), py::arg("parser") = "cpython",
      "The syntax tree the static audit reads, as text (DumpPySyntax): from this interpreter's "
      "ast.parse ('cpython') or the C++ parser ('mkb'). InvalidArgumentError for source the "
      "parser refuses.");
  m.def("static_audit_codes", &StaticAuditCodes);
  m.def(
      "audit_kernel_calls",
      [](py::list calls, bool require_dsl_kernel, double library_share_limit, double floor_ms) {
        std::vector<v1::CallTrace> traces;
        for (py::handle c : calls)
          traces.push_back(ValueOrThrow(MessageFromPython<v1::CallTrace>(c)));
        RuntimeAuditOptions options;
        options.require_dsl_kernel = require_dsl_kernel;
        if (library_share_limit > 0) options.library_share_limit = library_share_limit;
        options.floor_ms = floor_ms;
        py::list out;
        for (v1::AuditFinding& f : AuditKernelCalls(traces, options))
          out.append(ViewOf(std::move(f)));
        return out;
      },
      py::arg("calls"), py::arg("require_dsl_kernel") = true, py::arg("library_share_limit") = 0.0,
      py::arg("floor_ms") = 0.0,
      "The runtime audits of SPEC §3 over the kernel's timed calls (CallTrace messages).");
  m.def(
      "audit_launches",
      [](py::object launches, const std::string& phase, bool call_returned,
         bool require_dsl_kernel) {
        py::list out;
        for (v1::AuditFinding& f :
             AuditLaunches(ValueOrThrow(MessageFromPython<v1::LaunchCounts>(launches)),
                           Phase(phase), call_returned, require_dsl_kernel))
          out.append(ViewOf(std::move(f)));
        return out;
      },
      py::arg("launches"), py::arg("phase"), py::arg("call_returned"),
      py::arg("require_dsl_kernel"),
      "The DSL rule and the launch policy over one call's LaunchCounts (runtime_audit.h): "
      "violations of `phase` (\"correctness\", \"timing\"), before any policy.");
  m.def(
      "audit_knockout",
      [](py::object launches, bool outputs_passed) -> py::object {
        std::optional<v1::AuditFinding> f = AuditKnockout(
            ValueOrThrow(MessageFromPython<v1::LaunchCounts>(launches)), outputs_passed);
        return f ? ToPython(*f) : py::object(py::none());
      },
      py::arg("launches"), py::arg("outputs_passed"),
      "The knockout draw's finding (runtime.dsl_result_unused) or None (runtime_audit.h).");
  m.def(
      "audit_judge_out_of_memory",
      [](bool kernel_loaded, const std::string& phase, double free_bytes, double total_bytes,
         double judge_bytes, const std::string& error) -> py::object {
        std::optional<v1::AuditFinding> f = AuditJudgeOutOfMemory(
            kernel_loaded, Phase(phase), free_bytes, total_bytes, judge_bytes, error);
        return f ? ToPython(*f) : py::object(py::none());
      },
      py::arg("kernel_loaded"), py::arg("phase"), py::arg("free_bytes"), py::arg("total_bytes"),
      py::arg("judge_bytes"), py::arg("error"),
      "The finding for the judge's own GPU work running out of memory "
      "(runtime.gpu_memory_exhausted) once kernel.py's import began, else None: the judge's "
      "failure (runtime_audit.h).");
  m.def(
      "apply_audit_policy",
      [](py::list findings, py::object policy) {
        std::vector<v1::AuditFinding> all;
        for (py::handle f : findings)
          all.push_back(ValueOrThrow(MessageFromPython<v1::AuditFinding>(f)));
        ApplyAuditPolicy(ValueOrThrow(MessageFromPython<v1::AuditPolicy>(policy)), &all);
        py::list out;
        for (v1::AuditFinding& f : all) out.append(ViewOf(std::move(f)));
        return out;
      },
      py::arg("findings"), py::arg("policy") = py::none(),
      "Findings with a policy's allow / deny applied.");
  m.def(
      "physical_floor_ms",
      [](py::object roofline, double bandwidth, double peak_flops) {
        return PhysicalFloorMs(ValueOrThrow(MessageFromPython<v1::RooflineFacts>(roofline, false)),
                               bandwidth, peak_flops);
      },
      py::arg("roofline"), py::arg("bandwidth_bytes_per_s"), py::arg("peak_flops_per_s"));
  m.def(
      "judge_floor_ms",
      [](py::object roofline, double bandwidth) {
        return JudgeFloorMs(ValueOrThrow(MessageFromPython<v1::RooflineFacts>(roofline, false)),
                            bandwidth);
      },
      py::arg("roofline"), py::arg("measured_bandwidth_bytes_per_s"),
      "The physical floor the judge applies (ms), from the measured copy bandwidth.");
  m.def(
      "classify_kernel",
      [](const std::string& name) { return std::string(KernelOriginName(ClassifyKernel(name))); },
      py::arg("name"), "'dsl', 'aten', 'library' or 'judge'.");
  m.def(
      "kernel_names",
      [](py::object call) {
        return KernelNames(ValueOrThrow(MessageFromPython<v1::CallTrace>(call)));
      },
      py::arg("call"));
  m.def(
      "kernel_import_roots",
      [] {
        py::dict out;
        out["toolchain"] = KernelToolchainRoots();
        out["stdlib"] = KernelStdlibRoots();
        return out;
      },
      "The top-level modules a kernel may import, {'toolchain': [...], 'stdlib': [...]}: the "
      "static audit refuses every other.");
  m.def(
      "audit_module", [](const std::string& module) { return AuditModule(module); },
      py::arg("module"), "(finding code, reason) when importing module is forbidden, else None.");

  m.def(
      "compare_structure",
      [](py::object expected, py::object actual) -> py::object {
        const auto e = ValueOrThrow(MessageFromPython<v1::ValueNode>(expected));
        const auto a = ValueOrThrow(MessageFromPython<v1::ValueNode>(actual));
        std::optional<v1::Mismatch> mismatch = CompareStructure(e, a);
        if (!mismatch.has_value()) return py::none();
        return py::cast(ViewOf(*mismatch));
      },
      py::arg("expected"), py::arg("actual"),
      "The first structural difference (a Mismatch) or None.");
  m.def(
      "same_contents",
      [](py::object a, const std::string& a_dtype, py::object b, const std::string& b_dtype) {
        const TensorRef ra = Ref(a, a_dtype, "a");
        const TensorRef rb = Ref(b, b_dtype, "b");
        absl::StatusOr<bool> same;
        {
          py::gil_scoped_release release;
          same = SameContents(ra, rb);
        }
        return ValueOrThrow(std::move(same));
      },
      py::arg("a"), py::arg("a_dtype"), py::arg("b"), py::arg("b_dtype"),
      "Bitwise equality of two capsules' tensors.");
  m.def(
      "compare_tensor",
      [](py::object out, const std::string& out_dtype, py::object expected,
         const std::string& expected_dtype, py::object anchor, const std::string& anchor_dtype,
         bool exact, double allowance_factor, double eps_scale) {
        Leaf leaf{"out", out, out_dtype, expected, expected_dtype, anchor, anchor_dtype, exact};
        AnchorTolerance tolerance;
        if (allowance_factor > 0) tolerance.allowance_factor = allowance_factor;
        if (eps_scale > 0) tolerance.eps_scale = eps_scale;
        TensorRef out_ref;
        const TensorComparison c = Compare(leaf, tolerance, &out_ref);
        py::dict d;
        d["passed"] = c.passed;
        d["exact"] = c.exact;
        d["numel"] = c.numel;
        d["max_error"] = c.max_error;
        d["reference_error"] = c.reference_error;
        d["max_abs_anchor"] = c.max_abs_anchor;
        d["allowance"] = c.allowance;
        d["count_over"] = c.count_over;
        d["nan_count"] = c.nan_count;
        d["worst_index"] = out_ref.Unravel(std::max<int64_t>(c.worst_index, 0));
        d["worst_value"] = c.worst_value;
        d["worst_anchor"] = c.worst_anchor;
        d["factor_over"] =
            c.allowance > 0 ? c.max_error / c.allowance : (c.passed ? 0.0 : INFINITY);
        return d;
      },
      py::arg("out"), py::arg("out_dtype"), py::arg("expected"), py::arg("expected_dtype"),
      py::arg("anchor"), py::arg("anchor_dtype"), py::arg("exact") = false,
      py::arg("allowance_factor") = 0.0, py::arg("eps_scale") = 0.0,
      "The correctness rule on one tensor (capsules), as a dict.");

  // --- the verdict -------------------------------------------------------------------------
  py::class_<VerdictBuilder>(m, "VerdictBuilder",
                             "Assembles a Verdict and decides its status (C++).")
      .def(py::init([](py::object problem, const std::string& dsl, const std::string& workload,
                       py::object config) {
             const auto p =
                 ValueOrThrow(MessageFromPython<v1::Problem>(problem, /*validate=*/false));
             const auto c = ValueOrThrow(MessageFromPython<v1::JudgeConfig>(config));
             return std::make_unique<VerdictBuilder>(p, ValueOrThrow(ParseDsl(dsl)), workload, c);
           }),
           py::arg("problem"), py::arg("dsl"), py::arg("workload"), py::arg("config") = py::none())
      .def(
          "check_submission",
          [](VerdictBuilder& b, const std::string& source) { return b.CheckSubmission(source); },
          py::arg("source"))
      .def(
          "set_unparseable",
          [](VerdictBuilder& b, int line, const std::string& message) {
            b.SetUnparseable(line, message);
          },
          py::arg("line"), py::arg("message"))
      .def(
          "add_findings",
          [](VerdictBuilder& b, py::list findings) {
            std::vector<v1::AuditFinding> out;
            for (py::handle f : findings)
              out.push_back(ValueOrThrow(MessageFromPython<v1::AuditFinding>(f)));
            b.AddFindings(out);
          },
          py::arg("findings"))
      .def("has_violation", &VerdictBuilder::HasViolation)
      .def("can_continue", &VerdictBuilder::CanContinue)
      .def("all_draws_correct", &VerdictBuilder::AllDrawsCorrect)
      .def(
          "set_environment",
          [](VerdictBuilder& b, py::object env) {
            b.SetEnvironment(ValueOrThrow(MessageFromPython<v1::Environment>(env)));
          },
          py::arg("environment"))
      .def(
          "set_phase_times",
          [](VerdictBuilder& b, py::object times) {
            *b.mutable_phase_times() = ValueOrThrow(MessageFromPython<v1::PhaseTimes>(times));
          },
          py::arg("times"))
      .def(
          "set_import",
          [](VerdictBuilder& b, bool ok, const std::string& type, const std::string& error) {
            b.SetImport(ok, type, error);
          },
          py::arg("ok"), py::arg("error_type") = "", py::arg("error") = "")
      .def("set_kernel_names", &VerdictBuilder::SetKernelNames, py::arg("names"))
      .def(
          "record_mismatch",
          [](VerdictBuilder& b, const std::string& phase, int index, py::object mismatch,
             double seconds) {
            v1::Mismatch m = ValueOrThrow(MessageFromPython<v1::Mismatch>(mismatch));
            m.set_phase(Phase(phase));
            m.set_draw_index(index);
            v1::DrawCheck draw;
            draw.set_phase(Phase(phase));
            draw.set_index(index);
            draw.set_passed(false);
            draw.set_solve_seconds(seconds);
            b.RecordDraw(draw, m);
          },
          py::arg("phase"), py::arg("index"), py::arg("mismatch"), py::arg("seconds") = 0.0,
          "A draw that failed before any tensor comparison (structure, modified inputs, races).")
      .def(
          "judge_tensors",
          [](VerdictBuilder& b, const std::string& phase, int index, py::list leaves,
             bool inputs_unmodified, double seconds, double allowance_factor, double eps_scale) {
            v1::DrawCheck draw;
            draw.set_phase(Phase(phase));
            draw.set_index(index);
            draw.set_inputs_unmodified(inputs_unmodified);
            draw.set_solve_seconds(seconds);
            AnchorTolerance tolerance;
            if (allowance_factor > 0) tolerance.allowance_factor = allowance_factor;
            if (eps_scale > 0) tolerance.eps_scale = eps_scale;
            std::optional<v1::Mismatch> first;
            bool passed = true;
            for (py::handle item : leaves) {
              py::tuple t = py::reinterpret_borrow<py::tuple>(item);
              Leaf leaf{t[0].cast<std::string>(), t[1],
                        t[2].cast<std::string>(), t[3],
                        t[4].cast<std::string>(), py::reinterpret_borrow<py::object>(t[5]),
                        t[6].cast<std::string>(), t[7].cast<bool>()};
              TensorRef out_ref;
              const TensorComparison c = Compare(leaf, tolerance, &out_ref);
              *draw.add_tensors() = TensorCheckOf(leaf.path, c);
              if (!c.passed) {
                passed = false;
                if (!first.has_value())
                  first = MismatchOf(draw.phase(), index, leaf.path, out_ref, c);
              }
            }
            draw.set_passed(passed);
            return b.RecordDraw(draw, first);
          },
          py::arg("phase"), py::arg("index"), py::arg("leaves"),
          py::arg("inputs_unmodified") = true, py::arg("seconds") = 0.0,
          py::arg("allowance_factor") = 0.0, py::arg("eps_scale") = 0.0,
          "Compares each leaf (path, out, out_dtype, expected, expected_dtype, anchor|None, "
          "anchor_dtype, exact)\n"
          "with the correctness rule and records the draw. Returns whether it passed: a draw that\n"
          "left one of the problem's outputs uncompared does not.")
      .def(
          "record_call_error",
          [](VerdictBuilder& b, const std::string& phase, int index, const std::string& type,
             const std::string& error) { b.RecordCallError(Phase(phase), index, type, error); },
          py::arg("phase"), py::arg("index"), py::arg("error_type"), py::arg("error"))
      .def(
          "record_worker_lost",
          [](VerdictBuilder& b, const std::string& phase, int index, const std::string& what) {
            b.RecordWorkerLost(Phase(phase), index, what);
          },
          py::arg("phase"), py::arg("index"), py::arg("what"))
      .def(
          "record_infra_error",
          [](VerdictBuilder& b, const std::string& what) { b.RecordInfraError(what); },
          py::arg("what"))
      .def("set_parity_timing", &VerdictBuilder::SetParityTiming, py::arg("kernel_ms"),
           py::arg("eager_ms"), py::arg("method"),
           py::arg("kernel_throttled") = std::vector<bool>{},
           py::arg("eager_throttled") = std::vector<bool>{})
      .def("set_span_timing", &VerdictBuilder::SetSpanTiming, py::arg("kernel_span_ms"),
           py::arg("eager_span_ms"), py::arg("kernel_sum_ms"), py::arg("method"),
           py::arg("kernel_throttled"), py::arg("eager_throttled"))
      .def(
          "set_process_outcome",
          [](VerdictBuilder& b, py::object outcome) {
            b.SetProcessOutcome(ValueOrThrow(MessageFromPython<v1::ProcessOutcome>(outcome)));
          },
          py::arg("outcome"))
      .def("finish", [](VerdictBuilder& b) { return ViewOf(b.Finish()); });

  m.def(
      "parse_gpu_list",
      [](const std::string& list, const std::string& option) {
        return ValueOrThrow(ParseGpuList(list, option));
      },
      py::arg("list"), py::arg("option") = "gpus",
      "'0,1' -> ['0', '1'] (indices or GPU-/MIG- UUIDs); InvalidArgumentError naming `option`.");
  m.def(
      "visible_gpus", [](std::vector<std::string> environment) { return VisibleGpus(environment); },
      py::arg("environment"),
      "The GPUs a process with this environment ('KEY=VALUE' strings) sees: its\n"
      "CUDA_VISIBLE_DEVICES, else one per GPU device node of the driver.");

  py::class_<Judge>(
      m, "Judge",
      "Evaluates kernels in a fresh judge host process per evaluation (C++ mkb::Judge).")
      .def(
          py::init([](const std::string& python, std::vector<std::string> environment,
                      bool keep_warm_host, const std::string& gpus, bool host_template) {
            JudgeOptions options;
            options.python = python;
            options.environment = std::move(environment);
            options.inherit_environment = false;
            options.keep_warm_host = keep_warm_host;
            options.host_template = host_template;
            if (!gpus.empty()) options.devices = ValueOrThrow(ParseGpuList(gpus, "gpus"));
            return std::make_unique<Judge>(options);
          }),
          py::arg("python"), py::arg("environment"), py::arg("keep_warm_host") = false,
          py::arg("gpus") = "", py::arg("host_template") = false,
          "python: the interpreter for the host; environment: its whole environment, as KEY=VALUE\n"
          "strings; keep_warm_host: start the next host while one evaluates (it saves the host's\n"
          "torch import); gpus: the GPUs to judge on, '0,1' (one evaluation per GPU at a time;\n"
          "'': every GPU the environment makes visible); host_template: fork each host from a\n"
          "template per DSL that has imported torch and the DSL once (a host in milliseconds).")
      .def(
          "prewarm",
          [](const Judge& judge, const std::string& dsl) {
            const v1::Dsl parsed = ValueOrThrow(ParseDsl(dsl));
            py::gil_scoped_release release;
            judge.Prewarm(parsed);
          },
          py::arg("dsl"),
          "With host_template: start this DSL's template now, so that the first evaluation does\n"
          "not wait for all of its imports.")
      .def_property_readonly(
          "devices", [](const Judge& judge) { return judge.devices(); },
          "The GPU slots evaluations are spread over (a single '' without GPUs).")
      .def(
          "evaluate",
          [](const Judge& judge, py::object request) {
            const auto r = ValueOrThrow(MessageFromPython<v1::EvaluationRequest>(request));
            absl::StatusOr<v1::Verdict> verdict;
            {
              py::gil_scoped_release release;
              verdict = judge.Evaluate(r);
            }
            return ViewOf(ValueOrThrow(std::move(verdict)));
          },
          py::arg("request"),
          "Runs one evaluation (an EvaluationRequest message or dict) and returns its Verdict. "
          "Blocks for the\n"
          "whole evaluation (the GIL is released).");

  m.def(
      "render_report",
      [](py::object verdict, bool show_environment) {
        ReportOptions options;
        options.show_environment = show_environment;
        return RenderReport(ValueOrThrow(MessageFromPython<v1::Verdict>(verdict)), options);
      },
      py::arg("verdict"), py::arg("show_environment") = true,
      "The agent-facing report of a Verdict.");
  m.def(
      "judge_config",
      [](py::object config) {
        return ViewOf(WithDefaults(ValueOrThrow(MessageFromPython<v1::JudgeConfig>(config))));
      },
      py::arg("config") = py::none(), "A JudgeConfig with the specification's defaults filled in.");
  m.def(
      "summarize_samples",
      [](std::vector<double> samples_ms, const std::string& method) {
        return ViewOf(SummarizeSamples(samples_ms, method));
      },
      py::arg("samples_ms"), py::arg("method") = "");

  py::class_<MeasurementPlan>(
      m, "MeasurementPlan",
      "The seeds and order of one evaluation and when its strict pass stops (C++ policy; the "
      "host carries it out).")
      .def(py::init([](py::object config, bool gpu) {
             return ValueOrThrow(MeasurementPlan::Create(
                 ValueOrThrow(MessageFromPython<v1::JudgeConfig>(config)), gpu));
           }),
           py::arg("config"), py::arg("gpu"))
      .def_property_readonly("config", [](const MeasurementPlan& p) { return ViewOf(p.config()); })
      .def_property_readonly("require_dsl", &MeasurementPlan::require_dsl,
                             "Whether the DSL rule applies (the policy's require_dsl, else on a "
                             "GPU only).")
      .def_property_readonly(
          "correctness_sequence",
          [](const MeasurementPlan& p) {
            py::list out;
            for (const MeasurementPlan::Draw& d : p.correctness_sequence()) {
              out.append(py::make_tuple(d.seed, d.index, d.knockout));
            }
            return out;
          },
          "(seed, index, knockout) per correctness call, in order.")
      .def_property_readonly("warmup_seeds", &MeasurementPlan::warmup_seeds)
      .def_property_readonly("timing_seeds", &MeasurementPlan::timing_seeds)
      .def_property_readonly("calibration_calls", &MeasurementPlan::calibration_calls)
      .def_property_readonly("recheck_draws", &MeasurementPlan::recheck_draws)
      .def_property_readonly("fastest_recheck_draws", &MeasurementPlan::fastest_recheck_draws)
      .def_property_readonly("kernel_thread_spin_us", &MeasurementPlan::kernel_thread_spin_us,
                             "How long the worker's kernel thread polls for its next call "
                             "before it sleeps (0 on the CPU).")
      .def_property_readonly("strict_pass", &MeasurementPlan::strict_pass)
      .def("strict_pass_done", &MeasurementPlan::StrictPassDone, py::arg("kernel_spans_ms"),
           py::arg("eager_spans_ms"), py::arg("elapsed_s"))
      .def(
          "next_eager_strict_seed",
          [](MeasurementPlan& p, const std::vector<double>& eager_spans_ms, double elapsed_s) {
            return ValueOrThrow(p.NextEagerStrictSeed(eager_spans_ms, elapsed_s));
          },
          py::arg("eager_spans_ms"), py::arg("elapsed_s"),
          "The eager strict series' next seed, or None once it is done.")
      .def(
          "next_kernel_strict_seed",
          [](MeasurementPlan& p, const std::vector<double>& kernel_spans_ms,
             const std::vector<double>& eager_spans_ms, double elapsed_s) {
            return ValueOrThrow(p.NextKernelStrictSeed(kernel_spans_ms, eager_spans_ms, elapsed_s));
          },
          py::arg("kernel_spans_ms"), py::arg("eager_spans_ms"), py::arg("elapsed_s"),
          "The kernel's strict series' next seed (the eager series' seeds first), or None once "
          "the pass is done.");
  m.def("default_workload", &DefaultWorkload, py::arg("gpu"),
        "The workload judged when a request names none (\"full\" on a GPU, \"small\" on the "
        "CPU).");
  m.def(
      "accept_strict_sample",
      [](double span_ms, double kernel_sum_ms, double round_trip_ms) {
        const StrictSample s = AcceptStrictSample(span_ms, kernel_sum_ms, round_trip_ms);
        return py::make_tuple(s.span_ms, s.kernel_sum_ms);
      },
      py::arg("span_ms"), py::arg("kernel_sum_ms"), py::arg("round_trip_ms"),
      "(span_ms, kernel_sum_ms) as the verdict takes a strict sample: the span no longer than "
      "the call's round trip, the kernel sum no longer than the span.");

  py::class_<RecheckReservoir>(m, "RecheckReservoir",
                               "Chooses the re-checked timing draws as their outputs come in.")
      .def(py::init<int, int>(), py::arg("k"), py::arg("fastest") = 0)
      .def(
          "offer",
          [](RecheckReservoir& r, int draw, double ms) { return ValueOrThrow(r.Offer(draw, ms)); },
          py::arg("draw"), py::arg("ms") = -1.0,
          "The slot for this draw's outputs: [0, k) kept at random, [k, k + fastest) among the "
          "fastest so far (by `ms`; < 0: not a candidate), discard_slot otherwise.")
      .def_property_readonly("discard_slot", &RecheckReservoir::discard_slot)
      .def("kept", &RecheckReservoir::Kept, "(slot, draw) of the kept draws.");

  m.def(
      "accept_reported_times",
      [](std::vector<double> reported_ms, std::vector<double> round_trip_ms,
         std::vector<double> calibration_gap_ms, py::object config, bool gpu, py::object cpu,
         bool one_cpu) {
        const ClockBound bound =
            ClockBoundOf(ValueOrThrow(MessageFromPython<v1::JudgeConfig>(config)), gpu);
        WorkerCpu worker_cpu;
        worker_cpu.one_cpu = one_cpu;
        if (!cpu.is_none()) {
          auto take = [&](const char* key, std::vector<double>* into) {
            if (cpu.contains(key)) *into = cpu[key].cast<std::vector<double>>();
          };
          take("kernel_thread", &worker_cpu.kernel_thread_ms);
          take("kernel_thread_calibration", &worker_cpu.kernel_thread_calibration_ms);
          take("main_thread", &worker_cpu.main_thread_ms);
          take("main_thread_calibration", &worker_cpu.main_thread_calibration_ms);
          take("other_threads", &worker_cpu.other_threads_ms);
          take("other_threads_calibration", &worker_cpu.other_threads_calibration_ms);
        }
        AcceptedTimes a =
            AcceptReportedTimes(reported_ms, round_trip_ms, calibration_gap_ms, bound, worker_cpu);
        py::dict out;
        out["accepted_ms"] = a.accepted_ms;
        out["over_round_trip"] = a.over_round_trip;
        out["allowed_gap_ms"] = a.allowed_gap_ms;
        out["calibration_gap_ms"] = a.calibration_gap_ms;
        out["median_gap_ms"] = a.median_gap_ms;
        auto checked = [](const AcceptedTimes::CpuCheck& c) {
          py::dict d;
          d["timed_ms"] = c.timed_ms;
          d["calibrated_ms"] = c.calibrated_ms;
          d["allowed_excess_ms"] = c.allowed_excess_ms;
          return d;
        };
        out["kernel_thread"] = checked(a.kernel_thread);
        out["main_thread"] = checked(a.main_thread);
        out["other_threads"] = checked(a.other_threads);
        out["finding"] = a.finding ? ToPython(*a.finding) : py::object(py::none());
        return out;
      },
      py::arg("reported_ms"), py::arg("round_trip_ms"), py::arg("calibration_gap_ms"),
      py::arg("config") = py::none(), py::arg("gpu") = true, py::arg("cpu") = py::none(),
      py::arg("one_cpu") = false,
      "The worker's reported times checked against the host's round trips and, where the worker "
      "runs on one CPU, against its CPU time (measurement_plan.h). cpu: {kernel_thread, "
      "main_thread, other_threads} per timed call and each with _calibration per calibration "
      "call, in ms (the kernel thread's less the report).");
}

}  // namespace mkb::python
