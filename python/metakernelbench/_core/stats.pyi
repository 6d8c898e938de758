"""
The statistics core of SPEC §6 (libmkb/stats). Use metakernelbench.stats for DataFrames.
"""
from __future__ import annotations
import metakernelbench._core
import typing
__all__: list[str] = ['bh_adjust', 'bootstrap_paired_lift', 'compute_report', 'default_tau', 'holm_adjust', 'mcnemar_exact', 'report_json', 'resolved_states', 'sign_test', 'validate_cells', 'wilcoxon_signed_rank', 'wilson_interval']
def bh_adjust(p: typing.Any) -> list[float]:
    """
    Benjamini-Hochberg-adjusted p-values (NaN entries left out and kept NaN).
    """
def bootstrap_paired_lift(sum_d: typing.Any, n: typing.Any, n_help: typing.Any, n_harm: typing.Any, resamples: typing.SupportsInt | typing.SupportsIndex = 10000, seed: typing.SupportsInt | typing.SupportsIndex = 20260101, confidence: typing.SupportsFloat | typing.SupportsIndex = 0.95, keep_distributions: bool = False) -> dict:
    """
    Cluster bootstrap of delta_gm, help_rate and harm_rate from per-problem totals (one entry per
    problem). Returns {'delta_gm': {'value', 'se', 'percentile_low', ...}, ...}.
    """
def compute_report(cells: typing.Any, config: typing.Any = None, options: typing.Any = None) -> metakernelbench._core.Message:
    """
    The StatsReport (a read-only Message) of a list of CellReplicate dicts or messages.
    config: StatsConfig dict (zero fields: the paper's constants); options: StatsOptions dict.
    Raises InvalidArgumentError naming the field at fault ('cells[3].base.speedup: ...').
    Blocks for the bootstraps (released GIL): about a second for the published design.
    """
def default_tau() -> float:
    """
    The help / harm threshold on d when neither the config nor a noise floor sets one (log 1.05).
    """
def holm_adjust(p: typing.Any) -> list[float]:
    """
    Holm-adjusted p-values (NaN entries left out and kept NaN).
    """
def mcnemar_exact(both_passed: typing.SupportsInt | typing.SupportsIndex, base_only: typing.SupportsInt | typing.SupportsIndex, skill_only: typing.SupportsInt | typing.SupportsIndex, both_failed: typing.SupportsInt | typing.SupportsIndex) -> dict:
    """
    Exact McNemar test on the discordant counts (statsmodels mcnemar(exact=True)).
    """
def report_json(report: metakernelbench._core.Message, indent: typing.SupportsInt | typing.SupportsIndex = 2) -> str:
    """
    The report as JSON with stable keys (docs/statistics.md): NaN as null, enums as short names.
    """
def resolved_states() -> list:
    """
    The attempt states that count as resolved (stats::IsResolvedState): 'finished', 'skipped'.
    """
def sign_test(d: typing.Any) -> dict:
    """
    Two-sided exact sign test (zeros dropped; p = 1 when none is left).
    """
def validate_cells(cells: typing.Any) -> None:
    """
    Raises InvalidArgumentError naming the first invalid field of the cells.
    """
def wilcoxon_signed_rank(d: typing.Any, method: str = 'auto', correction: bool = False) -> dict:
    """
    Two-sided Wilcoxon signed-rank test with Pratt's zero handling; matches
    scipy.stats.wilcoxon(d, zero_method='pratt', correction=..., method=...).
    """
def wilson_interval(k: typing.SupportsInt | typing.SupportsIndex, n: typing.SupportsInt | typing.SupportsIndex, confidence: typing.SupportsFloat | typing.SupportsIndex = 0.95) -> tuple[float, float, float]:
    """
    (rate, low, high): the Wilson score interval.
    """
