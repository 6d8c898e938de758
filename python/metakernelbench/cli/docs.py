"""`mkb docs`: the documentation agents get in their workspace."""

from __future__ import annotations

from pathlib import Path

import typer

from . import _state

app = typer.Typer(help="The documentation every agent workspace gets.", no_args_is_help=True)


@app.command("import")
def import_(
    path: Path = typer.Argument(..., help="Your copy of the DSL's official docs (a folder or one file)."),
    dsl: str = typer.Option(..., "--dsl", help="cutedsl or tirx."),
    into: Path | None = typer.Option(
        None, "--into", help="Guides folder (default: MKB_GUIDES, or docs/dsl of the checkout)."
    ),
) -> None:
    """Index your copy of a DSL's official docs into docs/<dsl>/official/ of every workspace of that
    DSL (HTML to text, notebooks to cells, Markdown / reST kept, an INDEX.md of titles and headings)."""
    from .. import Error
    from .._paths import guides_root
    from ..docs_import import import_docs

    guides = into or guides_root()
    if guides is None:
        raise Error("no guides folder: set MKB_GUIDES or pass --into")
    result = import_docs(dsl, path, guides)
    console = _state.console()
    console.print(
        f"imported {result.pages} pages ({result.bytes / 1e6:.1f} MB) into {result.destination}",
        highlight=False,
    )
    for s in result.skipped[:20]:
        console.print(f"  skipped {s}", highlight=False)
    if len(result.skipped) > 20:
        console.print(f"  ... and {len(result.skipped) - 20} more skipped", highlight=False)
