"""
The results store (libmkb/store). Use metakernelbench.Store for DataFrames.
"""
from __future__ import annotations
import collections.abc
import metakernelbench._core
import typing
__all__: list[str] = ['ResultStore', 'design_difference', 'merge_stores', 'table_names']
class ResultStore:
    """
    A results store: one SQLite file (WAL). Thread-safe; every call blocks on SQLite I/O with the GIL released.
    """
    def __init__(self, path: str, create: bool = True, read_only: bool = False) -> None:
        """
        Opens (creating unless create=False) the store at `path`; read_only=True never writes the file (an older schema is migrated in a copy in memory). NotFoundError, or FailedPreconditionError for a file that is not a store.
        """
    def archived_tries(self, trial_id: str) -> list:
        """
        Archived tries of a trial, oldest first (dicts).
        """
    def cells(self, experiment: str) -> list[metakernelbench._core.Message]:
        """
        The statistics' input: CellReplicate messages of an experiment's trials (docs/protocol.md).
        """
    def check_integrity(self) -> None:
        """
        Raises (DataLoss: InternalError) when SQLite's integrity check or the store's invariants fail.
        """
    def experiment(self, name: str) -> metakernelbench._core.Message:
        """
        One experiment's spec; NotFoundError when absent.
        """
    def experiments(self) -> list[metakernelbench._core.Message]:
        """
        The experiments' specs (ExperimentSpec messages), by name.
        """
    def export(self, directory: str, format: str = 'jsonl', tables: collections.abc.Sequence[str] = [], experiment: str = '') -> list[str]:
        """
        Writes <directory>/<table>.<format> for each table (jsonl or csv); returns the paths.
        """
    def pooled_cells(self, experiments: collections.abc.Sequence[str]) -> tuple[list[metakernelbench._core.Message], list[str]]:
        """
        (cells, notes): the CellReplicates of the experiments, those that share a design
        pooled as further replicates (libmkb/store/pooling.h); notes say which were pooled.
        """
    def read_table(self, name: str, experiment: str = '') -> dict:
        """
        One table (table_names()) as {'name', 'columns', 'data': {column: list}}; experiment='' reads every experiment.
        """
    def trajectory(self, trial_id: str, try_number: typing.SupportsInt | typing.SupportsIndex = 0) -> list[metakernelbench._core.Message]:
        """
        The TrajectoryEvent messages of a try (0: the current one).
        """
    def trial(self, trial_id: str) -> dict:
        """
        The current try of a trial: a dict with state, try_number, spec, attempt (Message or None), error, ...
        """
    def trials(self, experiment: str) -> list:
        """
        Every trial of an experiment (dicts as trial()).
        """
    @property
    def path(self) -> str:
        ...
def design_difference(a: typing.Any, b: typing.Any) -> str | None:
    """
    Where two ExperimentSpecs' designs differ (all but name, concurrency, max_tries), or
    None when they share one.
    """
def merge_stores(inputs: collections.abc.Sequence[str], output: str) -> dict:
    """
    Writes the new store `output` with every experiment and trial of `inputs`
    (libmkb/store/merge.h): {'experiments', 'trials', 'duplicates', 'superseded'}. Refuses
    experiments of one name with different designs, and a trial resolved differently in two
    inputs (FailedPreconditionError); nothing is left at `output` on error.
    """
def table_names() -> list[str]:
    """
    The tables of read_table and export, in order.
    """
