// metakernelbench._core.store: the results store (libmkb/store) for Python. The friendly API,
// with pandas DataFrames and Parquet export, is metakernelbench.store.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/proto_convert.h"
#include "bindings/status.h"
#include "libmkb/model/names.h"
#include "libmkb/store/export.h"
#include "libmkb/store/merge.h"
#include "libmkb/store/pooling.h"
#include "libmkb/store/result_store.h"
#include "libmkb/store/stats_input.h"
#include "libmkb/store/table.h"

namespace mkb::python {
namespace {

namespace py = pybind11;

// Runs `call` (a store operation: SQLite I/O, may wait for another process's transaction)
// with the GIL released, then raises its error.
template <typename Call>
auto Blocking(Call call) {
  decltype(call()) result;
  {
    py::gil_scoped_release release;
    result = call();
  }
  return ValueOrThrow(std::move(result));
}

template <typename Call>
void BlockingStatus(Call call) {
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = call();
  }
  ThrowIfError(status);
}

py::object CellToPython(const Table::Cell& cell) {
  if (const auto* v = std::get_if<bool>(&cell)) return py::bool_(*v);
  if (const auto* v = std::get_if<int64_t>(&cell)) return py::int_(*v);
  if (const auto* v = std::get_if<double>(&cell)) return py::float_(*v);
  if (const auto* v = std::get_if<std::string>(&cell)) {
    // Kernel sources and tool output may hold invalid UTF-8: replaced rather than failing.
    PyObject* text = PyUnicode_DecodeUTF8(v->data(), static_cast<Py_ssize_t>(v->size()), "replace");
    if (text == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(text);
  }
  return py::none();
}

// {"name": ..., "columns": [...], "data": {column: [values]}}: columnar, for pandas.
py::dict TableToPython(const Table& table) {
  py::dict data;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    py::list values(table.rows.size());
    for (size_t r = 0; r < table.rows.size(); ++r) {
      values[r] = CellToPython(table.rows[r][c]);
    }
    data[py::str(table.columns[c])] = values;
  }
  py::dict out;
  out["name"] = table.name;
  out["columns"] = table.columns;
  out["data"] = data;
  return out;
}

py::dict TrialToPython(const TrialRecord& record) {
  py::dict out;
  out["trial_id"] = record.trial_id;
  out["experiment"] = record.experiment;
  out["problem_slug"] = record.problem_slug;
  out["arm"] = record.arm;
  out["model"] = record.model;
  out["dsl"] = DslName(record.dsl);
  out["replicate"] = record.replicate;
  out["state"] = AttemptStateName(record.state);
  out["try_number"] = record.try_number;
  out["task_fingerprint"] = record.task_fingerprint;
  out["skill_digest"] = record.skill_digest;
  out["spec"] = ViewOf(record.spec);
  out["attempt"] = record.attempt.has_value() ? py::cast(ViewOf(*record.attempt)) : py::none();
  out["error"] = record.error;
  out["updated_unix"] = record.updated_unix;
  return out;
}

}  // namespace

void RegisterStore(py::module_& module) {
  py::module_ m = module.def_submodule(
      "store", "The results store (libmkb/store). Use metakernelbench.Store for DataFrames.");

  m.def("table_names", &ExportTableNames, "The tables of read_table and export, in order.");

  py::class_<ResultStore, std::shared_ptr<ResultStore>>(
      m, "ResultStore",
      "A results store: one SQLite file (WAL). Thread-safe; every call blocks on SQLite I/O "
      "with the GIL released.")
      .def(py::init([](const std::string& path, bool create, bool read_only) {
             StoreOptions options;
             options.create = create && !read_only;
             options.read_only = read_only;
             return std::make_shared<ResultStore>(
                 Blocking([&] { return ResultStore::Open(path, options); }));
           }),
           py::arg("path"), py::arg("create") = true, py::arg("read_only") = false,
           "Opens (creating unless create=False) the store at `path`; read_only=True never "
           "writes the file (an older schema is migrated in a copy in memory). NotFoundError, "
           "or FailedPreconditionError for a file that is not a store.")
      .def_property_readonly("path", &ResultStore::path)
      .def(
          "experiments",
          [](const ResultStore& store) {
            std::vector<MessageView> out;
            for (auto& spec : Blocking([&] { return store.ListExperiments(); })) {
              out.push_back(ViewOf(std::move(spec)));
            }
            return out;
          },
          "The experiments' specs (ExperimentSpec messages), by name.")
      .def(
          "experiment",
          [](const ResultStore& store, const std::string& name) {
            return ViewOf(Blocking([&] { return store.GetExperiment(name); }));
          },
          py::arg("name"), "One experiment's spec; NotFoundError when absent.")
      .def(
          "trial",
          [](const ResultStore& store, const std::string& trial_id) {
            return TrialToPython(Blocking([&] { return store.GetTrial(trial_id); }));
          },
          py::arg("trial_id"),
          "The current try of a trial: a dict with state, try_number, spec, attempt (Message or "
          "None), error, ...")
      .def(
          "trials",
          [](const ResultStore& store, const std::string& experiment) {
            py::list out;
            for (const TrialRecord& r : Blocking([&] { return store.ListTrials(experiment); })) {
              out.append(TrialToPython(r));
            }
            return out;
          },
          py::arg("experiment"), "Every trial of an experiment (dicts as trial()).")
      .def(
          "trajectory",
          [](const ResultStore& store, const std::string& trial_id, int try_number) {
            std::vector<MessageView> out;
            for (auto& e : Blocking([&] { return store.Trajectory(trial_id, try_number); })) {
              out.push_back(ViewOf(std::move(e)));
            }
            return out;
          },
          py::arg("trial_id"), py::arg("try_number") = 0,
          "The TrajectoryEvent messages of a try (0: the current one).")
      .def(
          "archived_tries",
          [](const ResultStore& store, const std::string& trial_id) {
            py::list out;
            for (const ArchivedTry& a : Blocking([&] { return store.ArchivedTries(trial_id); })) {
              py::dict d;
              d["trial_id"] = a.trial_id;
              d["try_number"] = a.try_number;
              d["reason"] = a.reason;
              d["state"] = AttemptStateName(a.state);
              d["error"] = a.error;
              d["task_fingerprint"] = a.task_fingerprint;
              d["skill_digest"] = a.skill_digest;
              d["attempt"] = a.attempt.has_value() ? py::cast(ViewOf(*a.attempt)) : py::none();
              d["archived_unix"] = a.archived_unix;
              out.append(d);
            }
            return out;
          },
          py::arg("trial_id"), "Archived tries of a trial, oldest first (dicts).")
      .def(
          "read_table",
          [](const ResultStore& store, const std::string& name, const std::string& experiment) {
            return TableToPython(
                Blocking([&] { return ReadExportTable(store, name, experiment); }));
          },
          py::arg("name"), py::arg("experiment") = "",
          "One table (table_names()) as {'name', 'columns', 'data': {column: list}}; "
          "experiment='' reads every experiment.")
      .def(
          "cells",
          [](const ResultStore& store, const std::string& experiment) {
            std::vector<MessageView> out;
            for (auto& cell :
                 Blocking([&] { return CellReplicatesFromStore(store, experiment); })) {
              out.push_back(ViewOf(std::move(cell)));
            }
            return out;
          },
          py::arg("experiment"),
          "The statistics' input: CellReplicate messages of an experiment's trials "
          "(docs/protocol.md).")
      .def(
          "pooled_cells",
          [](const ResultStore& store, const std::vector<std::string>& experiments) {
            PooledCells pooled =
                Blocking([&] { return PooledCellReplicatesFromStore(store, experiments); });
            std::vector<MessageView> cells;
            for (auto& cell : pooled.cells) cells.push_back(ViewOf(std::move(cell)));
            return py::make_tuple(cells, pooled.notes);
          },
          py::arg("experiments"),
          "(cells, notes): the CellReplicates of the experiments, those that share a design\n"
          "pooled as further replicates (libmkb/store/pooling.h); notes say which were pooled.")
      .def(
          "export",
          [](const ResultStore& store, const std::string& directory, const std::string& format,
             const std::vector<std::string>& tables, const std::string& experiment) {
            ExportOptions options;
            options.directory = directory;
            options.format = ValueOrThrow(ParseExportFormat(format));
            options.tables = tables;
            options.experiment = experiment;
            return Blocking([&] { return ExportStore(store, options); });
          },
          py::arg("directory"), py::arg("format") = "jsonl",
          py::arg("tables") = std::vector<std::string>(), py::arg("experiment") = "",
          "Writes <directory>/<table>.<format> for each table (jsonl or csv); returns the paths.")
      .def(
          "check_integrity",
          [](const ResultStore& store) { BlockingStatus([&] { return store.CheckIntegrity(); }); },
          "Raises (DataLoss: InternalError) when SQLite's integrity check or the store's "
          "invariants fail.");

  m.def(
      "merge_stores",
      [](const std::vector<std::string>& inputs, const std::string& output) {
        const MergeSummary summary = Blocking([&] { return MergeStores(inputs, output); });
        py::dict d;
        d["experiments"] = summary.experiments;
        d["trials"] = summary.trials;
        d["duplicates"] = summary.duplicates;
        d["superseded"] = summary.superseded;
        return d;
      },
      py::arg("inputs"), py::arg("output"),
      "Writes the new store `output` with every experiment and trial of `inputs`\n"
      "(libmkb/store/merge.h): {'experiments', 'trials', 'duplicates', 'superseded'}. Refuses\n"
      "experiments of one name with different designs, and a trial resolved differently in two\n"
      "inputs (FailedPreconditionError); nothing is left at `output` on error.");
  m.def(
      "design_difference",
      [](py::object a, py::object b) -> std::optional<std::string> {
        return DesignDifference(ValueOrThrow(MessageFromPython<v1::ExperimentSpec>(a, false)),
                                ValueOrThrow(MessageFromPython<v1::ExperimentSpec>(b, false)));
      },
      py::arg("a"), py::arg("b"),
      "Where two ExperimentSpecs' designs differ (all but name, concurrency, max_tries), or\n"
      "None when they share one.");
}

}  // namespace mkb::python
