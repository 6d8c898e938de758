"""The `mkb` command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from .. import Error
from . import _state

app = typer.Typer(
    name="mkb",
    help="MetaKernelBench: cross-DSL kernel skill transfer (CuTe DSL <-> TVM TIRx).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _options(
    suite: Optional[Path] = typer.Option(
        None, "--suite", envvar="MKB_SUITE", help="Problem suite folder (default: the bundled suite)."
    ),
) -> None:
    _state.suite_root = suite


def _register() -> None:
    from . import check, demo, docs, dsl, eval, export, import_, problems, report, run, stats, suite, version

    app.add_typer(problems.app, name="problems")
    app.add_typer(suite.app, name="suite")
    app.command("version")(version.version)
    app.command("eval")(eval.eval_kernel)
    app.command("demo")(demo.demo)
    app.command("run")(run.run)
    app.command("export")(export.export)
    app.command("stats")(stats.stats)
    app.command("report")(report.report)
    app.add_typer(import_.app, name="import")
    app.add_typer(dsl.app, name="dsl")
    app.command("check")(check.check)
    app.add_typer(docs.app, name="docs")


_register()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `mkb` script. metakernelbench errors print as one line, exit 2."""
    try:
        # Without standalone mode, click returns a command's typer.Exit code instead of raising.
        code = app(args=argv, standalone_mode=False)
        return code if isinstance(code, int) else 0
    except Error as error:
        _state.console(stderr=True).print(f"[bold red]error:[/] {error}", highlight=False, soft_wrap=True)
        return 2
    except typer.Exit as done:
        return done.exit_code
    except typer.Abort:
        _state.console(stderr=True).print("aborted")
        return 130
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # click usage errors
        try:
            import click
        except ImportError:  # typer >= 0.22 vendors click as typer._click
            from typer import _click as click

        if isinstance(error, click.ClickException):
            error.show()
            return error.exit_code
        raise


if __name__ == "__main__":
    sys.exit(main())
