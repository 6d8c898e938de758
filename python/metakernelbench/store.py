"""The results store (SQLite) as pandas DataFrames.

    import metakernelbench as mkb
    store = mkb.Store("results.db")
    store.trials("demo")             # one row per trial: state, passed, speedup, tokens, cost ...
    store.table("submissions")       # any table of TABLES
    store.attempt(trial_id)          # the Attempt message (read-only)
    store.cells("demo")              # the statistics' input (CellReplicate messages)
    store.stats("demo")              # mkb.stats.compute on them
    store.export("out/", "parquet")  # one file per table

The store itself (schema, transactions, the statistics' input, JSON Lines and CSV export) is
C++ (libmkb/store); this module shapes tables into DataFrames and writes Parquet through
pyarrow. docs/protocol.md describes every table.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core

if TYPE_CHECKING:
    import pandas as pd

#: The tables of Store.table() and export, in export order: the C++ core's (ExportTableNames).
TABLES: tuple[str, ...] = tuple(_core.store.table_names())
FORMATS = ("jsonl", "csv", "parquet")


def _frame(table: dict[str, Any]) -> pd.DataFrame:
    import pandas

    return pandas.DataFrame(table["data"], columns=table["columns"])


class Store:
    """A results store: one SQLite file written by experiment runs (mkb run, mkb demo,
    metakernelbench.experiments.run). Opening creates it unless create=False; read_only=True
    opens an existing store without ever writing the file (what mkb stats, report and export
    do), and refuses a file that is not a store. Reads are consistent snapshots; a run may be
    writing at the same time."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True, read_only: bool = False):
        self._path = Path(path)
        self._core = _core.store.ResultStore(str(self._path), create and not read_only, read_only)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def core(self) -> Any:
        """The C++ store (metakernelbench._core.store.ResultStore)."""
        return self._core

    def __repr__(self) -> str:
        return f"Store({str(self._path)!r})"

    # Experiments and trials ---------------------------------------------------------------
    def experiment_names(self) -> list[str]:
        return [spec.name for spec in self._core.experiments()]

    def experiment(self, name: str) -> _core.Message:
        """The experiment's ExperimentSpec (defaults filled in)."""
        return self._core.experiment(name)

    def experiments(self) -> pd.DataFrame:
        return self.table("experiments")

    def table(self, name: str, experiment: str | None = None) -> pd.DataFrame:
        """One table of TABLES as a DataFrame, for one experiment or all. Columns ending in
        `_json` hold JSON text (messages as JSON)."""
        return _frame(self._core.read_table(name, experiment or ""))

    def trials(self, experiment: str | None = None) -> pd.DataFrame:
        """One row per trial (its current try): state, try_number, archived_tries, passed,
        speedup, final_status, submissions, tokens, cost, skill digests, error, times."""
        return self.table("trials", experiment)

    def submissions(self, experiment: str | None = None) -> pd.DataFrame:
        return self.table("submissions", experiment)

    def archived_tries(self, experiment: str | None = None) -> pd.DataFrame:
        return self.table("archived_tries", experiment)

    def trial(self, trial_id: str) -> dict[str, Any]:
        """The current try of a trial: state, try_number, spec, attempt (Message or None), ..."""
        return self._core.trial(trial_id)

    def attempt(self, trial_id: str) -> _core.Message | None:
        """The Attempt of a trial's current try (None while none has ended)."""
        return self._core.trial(trial_id)["attempt"]

    def trajectory(self, trial_id: str, try_number: int = 0) -> pd.DataFrame:
        """The trajectory of a try (0: the current one), one row per step."""
        import pandas

        events = [e.to_dict() for e in self._core.trajectory(trial_id, try_number)]
        columns = [
            "index",
            "t_seconds",
            "kind",
            "tool",
            "text",
            "json",
            "input_tokens",
            "output_tokens",
            "seconds",
        ]
        return pandas.DataFrame(events, columns=columns)

    # Statistics ---------------------------------------------------------------------------
    def cells(self, experiment: str) -> list[_core.Message]:
        """The statistics' input of an experiment: CellReplicate messages (docs/protocol.md)."""
        return self._core.cells(experiment)

    def pooled_cells(self, experiments: list[str]) -> tuple[list[_core.Message], list[str]]:
        """(cells, notes): the CellReplicates of `experiments`, those that share a design pooled
        as further replicates (libmkb/store/pooling.h); the notes say which were pooled."""
        cells, notes = self._core.pooled_cells(list(experiments))
        return list(cells), list(notes)

    def cells_frame(self, experiment: str | None = None) -> pd.DataFrame:
        """The same, flat, in the column layout metakernelbench.stats accepts."""
        return self.table("cells", experiment)

    def stats(self, experiment: str, config: Any = None, **options: Any) -> Any:
        """metakernelbench.stats.compute on the experiment's cells."""
        from . import stats

        return stats.compute(self.cells(experiment), config, **options)

    # Export and checks --------------------------------------------------------------------
    def export(
        self,
        out: str | os.PathLike,
        format: str = "jsonl",
        *,
        tables: Iterable[str] | None = None,
        experiment: str | None = None,
    ) -> list[Path]:
        """Writes <out>/<table>.<format> for each table (default: all of TABLES) and returns
        the paths. format: jsonl, csv (written by the C++ core) or parquet (pyarrow)."""
        if format not in FORMATS:
            raise _core.InvalidArgumentError(f"format: '{format}' is not one of {', '.join(FORMATS)}")
        names = list(tables) if tables else list(TABLES)
        for name in names:
            if name not in TABLES:
                raise _core.InvalidArgumentError(f"tables: no table '{name}'; tables are {', '.join(TABLES)}")
        if format != "parquet":
            return [Path(p) for p in self._core.export(str(out), format, names, experiment or "")]
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise _core.FailedPreconditionError(
                "parquet export needs pyarrow: pip install pyarrow (or metakernelbench[analysis])"
            ) from None
        folder = Path(out)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise _core.PermissionDeniedError(
                f"{folder}: cannot create the folder: {error.strerror}"
            ) from None
        written = []
        for name in names:
            path = folder / f"{name}.parquet"
            temporary = folder / f".{name}.parquet.tmp"
            self.table(name, experiment).to_parquet(temporary, index=False)
            os.replace(temporary, path)
            written.append(path)
        return written

    def check_integrity(self) -> None:
        """Raises when SQLite's integrity check or the store's invariants fail."""
        self._core.check_integrity()


def export(
    store: str | os.PathLike,
    out: str | os.PathLike,
    format: str = "jsonl",
    *,
    tables: Sequence[str] | None = None,
    experiment: str | None = None,
) -> list[Path]:
    """Exports an existing store (see Store.export), opened read-only."""
    return Store(store, read_only=True).export(out, format, tables=tables, experiment=experiment)


def merge(inputs: Sequence[str | os.PathLike], out: str | os.PathLike) -> dict[str, Any]:
    """Writes the new store `out` holding every experiment and trial of the stores `inputs`
    (libmkb/store/merge.h): {"experiments", "trials", "duplicates", "superseded"}. Refuses,
    writing nothing, an experiment name held by two inputs with different designs, and a trial
    resolved with different results in two inputs (different replicates: give each process
    its own experiment name; the statistics pool experiments that share a design)."""
    return dict(_core.store.merge_stores([os.fspath(p) for p in inputs], os.fspath(out)))


__all__ = ["FORMATS", "TABLES", "Store", "export", "merge"]
