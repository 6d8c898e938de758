"""`mkb dsl`: the DSL toolchains (install, show, pack for a machine without network)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import typer

from . import _state

app = typer.Typer(
    help="The DSL toolchains: one site directory per DSL over the base environment.", no_args_is_help=True
)


def _dsls(dsl: list[str] | None) -> list[str]:
    from .. import toolchains

    return [toolchains.check_dsl(d) for d in dsl] if dsl else list(toolchains.DSLS)


@app.command("install")
def install(
    dsl: list[str] | None = typer.Option(None, "--dsl", help="cutedsl or tirx (default: both)."),
    spec: str | None = typer.Option(
        None, "--spec", help="Requirements instead of the pinned ones, space-separated (one DSL only)."
    ),
    force: bool = typer.Option(False, "--force", help="Reinstall even when the same spec is installed."),
) -> None:
    """Install the pinned DSL toolchains into their site directories (MKB_DSL_HOME, or
    .dsl/ of the checkout). Only what a DSL adds over the base environment goes there."""
    from .. import toolchains

    chosen = _dsls(dsl)
    if spec and len(chosen) != 1:
        raise typer.BadParameter("--spec needs exactly one --dsl", param_hint="--spec")
    console = _state.console()
    for d in chosen:
        tc = toolchains.install(
            d,
            tuple(shlex.split(spec)) if spec else None,
            force=force,
            log=lambda m: console.print(m, highlight=False),
        )
        console.print(tc.describe(), highlight=False)


@app.command("info")
def info(as_json: bool = typer.Option(False, "--json", help="Print JSON. " + _state.JSON_NULLS)) -> None:
    """Where each DSL's toolchain is and what it holds."""
    from .. import toolchains

    chains = [toolchains.toolchain(d) for d in toolchains.DSLS]
    if as_json:
        _state.print_json(
            [
                {
                    "dsl": c.dsl,
                    "site": str(c.site),
                    "installed": c.installed,
                    "spec": c.spec,
                    "packages": c.packages,
                    "python": c.python,
                }
                for c in chains
            ]
        )
        return
    for c in chains:
        _state.console().print(c.describe(), highlight=False)


@app.command("pack")
def pack(
    dsl: str = typer.Option(..., "--dsl", help="cutedsl or tirx."),
    out: Path = typer.Option(..., "--out", "-o", help="The .tar.xz to write."),
    python_version: str = typer.Option("3.12", "--python-version", help="The target machine's Python."),
    drop: list[str] | None = typer.Option(None, "--drop", help="Distributions to leave out."),
) -> None:
    """Pack a DSL's site directory for another machine's Python (e.g. the lent GPU machine,
    which has no network); scripts/gpu-check.sh --dsl unpacks it there."""
    from .. import toolchains

    record = toolchains.pack(
        dsl, out, python_version, tuple(drop or ()), log=lambda m: _state.console().print(m, highlight=False)
    )
    out.with_suffix("").with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
