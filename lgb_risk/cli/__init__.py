"""The lgb-risk command line: risk-sensitive evaluation of TREC runs, topic-set sizes, active
evaluation, and the papers' risk-sensitive LambdaMART experiments. ``lgb-risk COMMAND --help``
gives a command's options and examples (:data:`EXAMPLES`).

The parser is built in ``_parser`` (no command's module imported), each command lives in a
module of its own (``_evaluate``: evaluate, risk, power, demo; ``_active``; ``_run``: run,
split, baselines) and the tables are written by ``_output``; this module runs a command and
turns every failure into one line and an exit status.
"""

from __future__ import annotations

import gc
import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from lgb_risk._runtime.kernel_calls import caused_by_ctrl_c
from lgb_risk.cli._output import FORMATS, write_output
from lgb_risk.cli._parser import DEBUG_VARIABLE, EXAMPLES, build_parser

__all__ = ["main", "console_main", "build_parser", "write_output", "EXAMPLES", "FORMATS",
           "DEBUG_VARIABLE"]


#: Each command's module and function, imported when the command runs.
_COMMANDS = {"evaluate": ("_evaluate", "evaluate_command"), "risk": ("_evaluate", "risk_command"),
             "power": ("_evaluate", "power_command"), "demo": ("_evaluate", "demo_command"),
             "active": ("_active", "active_command"), "run": ("_run", "run_command"),
             "split": ("_run", "split_command"), "baselines": ("_run", "baselines_command")}


def _command(name: str):
    """The function that runs the command ``name``."""
    module, function = _COMMANDS[name]
    return getattr(importlib.import_module(f"lgb_risk.cli.{module}"), function)


#: The arguments that name input files: read from a pipe (``<(...)``) or standard input (``-``)
#: too, through :func:`_spooled`.
_INPUT_FILES = ("qrels", "runs", "scores", "pool", "scores2", "probabilities", "relevance_data",
                "doc_cost")


def _spooled(args, folder: Path) -> dict:
    """Copy every input that is a pipe, a device or ``-`` (standard input, at most one) into
    ``folder`` under its own name, so that the readers, which read a file more than once, get
    a regular file; returns {copy: given} to name the given path in messages."""
    given: dict = {}
    for name in _INPUT_FILES:
        value = getattr(args, name, None)
        if value is None:
            continue
        paths = value if isinstance(value, list) else [value]
        copies = []
        for path in paths:
            text = str(path)
            if text != "-" and os.path.isdir(text):
                raise ValueError(f"{text} is a folder, where a file was expected; give the "
                                 f"file(s) in it (e.g. {Path(text) / '*'})")
            if text != "-" and (not os.path.exists(text) or os.path.isfile(text)):
                copies.append(path)
                continue
            if text == "-" and "-" in given.values():
                raise ValueError("standard input (-) can be read once: give it to one input")
            stem = "stdin" if text == "-" else Path(text).name
            copy = folder / f"{len(given)}" / stem
            copy.parent.mkdir()
            with open(copy, "wb") as out:
                if text == "-":
                    shutil.copyfileobj(sys.stdin.buffer, out)
                else:
                    with open(text, "rb") as source:
                        shutil.copyfileobj(source, out)
            given[str(copy)] = text
            copies.append(str(copy))
        setattr(args, name, copies if isinstance(value, list) else copies[0])
    return given


def main(argv=None) -> int:
    """Run the command; return its exit status. Every failure ends in one message on standard
    error: 2 for bad input (a file, an option, a configuration), 1 for anything else (a full
    disk, a lost cluster, an unexpected error, whose traceback ``--debug`` shows), 130 for
    Ctrl-C."""
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = args.debug or os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")
    given: dict = {}
    resumable = args.command in ("run", "split", "baselines")
    again = " (what is done is kept: run the same command again to resume)" if resumable else ""

    def say(message: str) -> None:
        for copy, path in given.items():
            message = message.replace(copy, "<standard input>" if path == "-" else path)
        print(f"lgb-risk {args.command}: {message}", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="lgb-risk-input-") as folder:
        try:
            given = _spooled(args, Path(folder))
            _command(args.command)(args)
        except (ValueError, FileNotFoundError) as exc:
            if debug:
                raise
            say(f"error: {exc}")
            return 2
        except KeyboardInterrupt:
            say(f"interrupted{again}")
            return 130
        except OSError as exc:  # the disk, the network: nothing the command line did wrong
            if debug:
                raise
            say(f"error: {_unexpected(exc) if _from_dask(exc) else _os_error(exc)}{again}")
            return 1
        except Exception as exc:
            if caused_by_ctrl_c(exc):
                say(f"interrupted{again}")
                return 130
            if debug:
                raise
            say(f"error: {_unexpected(exc)}{again} (--debug shows the traceback)")
            return 1
    return 0


def _from_dask(exc: BaseException) -> bool:
    return type(exc).__module__.startswith(("distributed", "tornado")) or type(
        exc).__name__ in ("FutureCancelledError", "CancelledError")


def _os_error(exc: OSError) -> str:
    """An OSError as one line: this library's (a sentence naming the file) as it is."""
    return exc.strerror if exc.filename is None and exc.strerror else str(exc)


def _unexpected(exc: BaseException) -> str:
    """One line for an error no check of ours foresaw (a lost Dask scheduler among them)."""
    kind = type(exc).__name__
    text = str(exc).strip().splitlines()
    said = f"{kind}: {text[0]}" if text else kind
    return f"the Dask cluster was lost ({said})" if _from_dask(exc) else said


def console_main() -> None:
    """The ``lgb-risk`` command: :func:`main`, then exit with its status. Objects still alive
    then are left out of Python's last search for reference cycles (``gc.freeze``): over the
    objects of SciPy's and scikit-learn's modules, that search made up most of the exit time of
    an ``lgb-risk run`` (``scripts/bench_jobs.py`` times whole runs). Every file is closed by
    then, and exit handlers still run."""
    status = main()
    gc.freeze()
    sys.exit(status)
