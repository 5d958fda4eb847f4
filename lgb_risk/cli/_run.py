"""``lgb-risk run``, ``split`` and ``baselines``: an experiment's configuration run (or
resumed) in this process or on a Dask cluster, and its report summed up on the terminal."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from lgb_risk._files.atomic import check_folder_can_be_written


def _experiment_config(args):
    from lgb_risk.experiment.config import load_config

    return load_config(args.config, data=args.data)


def default_jobs(stream=sys.stderr) -> int:
    """``lgb-risk run``'s ``--jobs`` when not given: one job per usable core where Dask is
    installed; otherwise 1, saying which extra would use the others."""
    import importlib.util

    from lgb_risk._runtime.machine import usable_cores

    cores = usable_cores()
    if cores > 1 and importlib.util.find_spec("distributed") is None:
        print(f"training one unit at a time: Dask, which trains {cores} at a time on this "
              "machine's cores, is an optional extra (pip install 'lgb_risk[dask]')",
              file=stream)
        return 1
    return cores


def run_command(args) -> None:
    """``lgb-risk run``: the whole experiment, its kernels compiled first, its summary printed."""
    _run(args, stop_after=None)


def split_command(args) -> None:
    """``lgb-risk split``: the experiment's query split only."""
    _run(args, stop_after="split")


def baselines_command(args) -> None:
    """``lgb-risk baselines``: the experiment's split and baselines only."""
    _run(args, stop_after="baselines")


def _run(args, stop_after) -> None:
    if getattr(args, "jobs", 1) is None:  # run's default
        args.jobs = 1 if args.scheduler is not None else default_jobs()
    if getattr(args, "jobs", 1) > 1 and getattr(args, "scheduler", None) is not None:
        raise ValueError("--jobs starts a local cluster and --scheduler uses another: give one")
    if getattr(args, "wait_for_workers", 0.0) and getattr(args, "scheduler", None) is None:
        raise ValueError("--wait-for-workers waits for the workers of --scheduler's cluster: "
                         "give --scheduler")
    if getattr(args, "jobs", 1) > 1 or getattr(args, "scheduler", None) is not None:
        from lgb_risk._runtime.dask_client import require_dask, silence_dask_logs

        # Dask's client logs a lost scheduler or worker with tracebacks; the command says it in
        # one line (and each failed unit in one line as it happens).
        try:
            require_dask(needed_for="--jobs > 1 or --scheduler")
        except ImportError as error:
            raise ValueError(str(error)) from None
        silence_dask_logs()
    if getattr(args, "jobs", 1) > 1 and getattr(args, "scheduler", None) is None:
        from lgb_risk._runtime.dask_client import start_worker_server

        # The local workers' modules are imported there while this process imports its own.
        start_worker_server(preload=("lgb_risk.experiment.runner",))
    from lgb_risk.experiment.runner import run_experiment

    config = _experiment_config(args)
    out = Path(args.out) if args.out else Path("runs") / config.name
    check_folder_can_be_written(out, "--out")
    if stop_after is None:
        compile_kernels_saying_so()
    result = run_experiment(config, out, jobs=getattr(args, "jobs", 1),
                            scheduler=getattr(args, "scheduler", None), stop_after=stop_after,
                            wait_for_workers=getattr(args, "wait_for_workers", 0.0))
    if stop_after is None:
        _print_run_summary(config, result.parent)
    print(f"wrote {result}")


#: How long the objectives' first call may take before the command says that it compiles.
_COMPILE_NOTE_AFTER_S = 2.0


def compile_kernels_saying_so() -> None:
    """Load the objectives' compiled kernels (LambdaMART's, which the risk objectives share,
    and GeoRisk's) before training; where that takes longer than
    :data:`_COMPILE_NOTE_AFTER_S` — numba compiling them on first use, once per machine and
    Python version, its cache kept after — say so, so that the command is not silent."""
    import threading

    from lgb_risk.objectives import GeoRisk, LambdaMART

    note = threading.Timer(_COMPILE_NOTE_AFTER_S, lambda: print(
        "compiling the training kernels on first use (once per machine and Python version; "
        "a few seconds) ...", file=sys.stderr, flush=True))
    note.daemon = True
    note.start()
    try:
        scores, labels, group = np.array([0.2, 0.1]), np.array([1, 0]), np.array([2])
        LambdaMART().gradients(scores, labels, group)
        GeoRisk(baselines=[[0.5]]).gradients(scores, labels, group)
    finally:
        note.cancel()


def _print_run_summary(config, folder: Path) -> None:
    """A narrow table of the run's learners (the report's first measure: its mean, and the
    feature baseline's Risk, wins and losses), where the whole report is too wide for a
    terminal."""
    import pandas as pd

    from lgb_risk.experiment.layout import RunFolder

    report = pd.read_csv(folder / "report.csv")
    measure = RunFolder(folder).measures(config).reported[0]  # the report's first
    feature = config.baselines.feature_name
    shown = {"learner": report["learner"], "α": report["alpha"].map("{:g}".format),
             measure.label: report[measure.measure.name].map("{:.4f}".format)}
    if f"{feature}_risk" in report:
        shown[f"Risk vs {feature}"] = report[f"{feature}_risk"].map("{:.4f}".format)
        shown["wins/losses"] = [f"{w:.0f}/{lo:.0f}" for w, lo in
                                zip(report[f"{feature}_wins"], report[f"{feature}_losses"])]
    print(pd.DataFrame(shown).to_string(index=False))
