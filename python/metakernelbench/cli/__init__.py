"""The `mkb` command line."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Any

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


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"metakernelbench {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(
    suite: Path | None = typer.Option(None, "--suite", envvar="MKB_SUITE", help=_state.SUITE_HELP),
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit (mkb version: with the build and the environment).",
    ),
) -> None:
    _state.suite_root = suite


def unwrap(text: str | None) -> str | None:
    """A docstring as help: paragraphs (separated by blank lines) joined into one line each, so
    that the terminal wraps them at its own width instead of at the source's line breaks."""
    if not text:
        return text
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(text))
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


def _unwrap_help(typer_app: typer.Typer) -> None:
    """Every command's help, unwrapped (unwrap), in `typer_app` and its sub-apps."""
    for command in typer_app.registered_commands:
        command.help = unwrap(command.help or inspect.getdoc(command.callback))
    for group in typer_app.registered_groups:
        group.help = unwrap(group.help)
        sub = group.typer_instance
        sub.info.help = unwrap(sub.info.help)
        _unwrap_help(sub)


def _register() -> None:
    from . import (
        check,
        demo,
        docs,
        dsl,
        eval,
        export,
        import_,
        problems,
        report,
        run,
        stats,
        store,
        suite,
        version,
    )

    with_suite = _state.with_suite_option
    app.add_typer(problems.app, name="problems")
    app.add_typer(suite.app, name="suite")
    app.command("version")(with_suite(version.version))
    app.command("eval")(with_suite(eval.eval_kernel))
    app.command("demo")(with_suite(demo.demo))
    app.command("run")(with_suite(run.run))
    app.command("export")(export.export)
    app.command("stats")(stats.stats)
    app.add_typer(store.app, name="store")
    app.command("report")(report.report)
    app.add_typer(import_.app, name="import")
    app.add_typer(dsl.app, name="dsl")
    app.command("check")(with_suite(check.check))
    app.add_typer(docs.app, name="docs")
    _unwrap_help(app)


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
        if isinstance(error, _click_exceptions()):
            usage: Any = error  # a click.ClickException of whichever click is installed
            usage.show()
            return usage.exit_code
        raise


def _click_exceptions() -> tuple[type, ...]:
    """The ClickException classes typer may raise: typer >= 0.22 vendors click as typer._click,
    while a click installed beside it (Ray depends on one) is another class; older typers use
    click itself."""
    classes: list[type] = []
    try:
        from typer import _click

        classes.append(_click.ClickException)
    except ImportError:
        pass
    try:
        import click

        classes.append(click.ClickException)
    except ImportError:
        pass
    return tuple(classes)


if __name__ == "__main__":
    sys.exit(main())
