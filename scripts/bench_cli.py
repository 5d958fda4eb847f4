"""``lgb-risk evaluate`` against gdeval.pl (and trec_eval, ranx, pytrec_eval) on the eight TREC
2012 runs, process start included.

gdeval.pl (the TREC Web track's evaluation script, not distributed with lgb_risk: pass its path;
both the TREC version, ``gdeval.pl [-k K] qrels run``, and version 1.2a that ships with
ir_measures, ``gdeval.pl qrels run k``, are recognised by their usage line) is run once per run
at @20, as one evaluates eight runs with it; ``lgb-risk evaluate`` (the installed script) once
for all eight, with more work: NDCG@20, ERR@20, AP, P@10 and every risk measure against the
baseline ``rm_cata-filtered`` at α = 0, 1, 5, 10, with its default ``--jobs`` (one process per
usable core here: the runs total 13 MB) or the ``--jobs`` given. With ``--trec-eval PATH``, the
``trec_eval`` binary computes NDCG@20, AP and P@10 of each run (``-m ndcg_cut.20 -m map -m
P.10``), once per run; where it is absent, build it from its source
(https://github.com/usnistgov/trec_eval, ``make CFLAGS='-O2 -I. -DVERSIONID=\\"10.0\\"'``).
ranx and pytrec_eval, where installed, compute NDCG@20, AP and P@10 of the eight runs in one
Python process (started, imports and reading included, as a command).
Every command runs ``--repeats`` times, alternating; the medians and ratios are printed.
Targets (issue 24): lgb-risk evaluate >= 5x gdeval.pl, and no slower than trec_eval.

A track's scale (N seeded perturbations of the eight runs, every tool and the Python API) is
``scripts/bench_track.py``'s, which takes the same options and this file's timing.

    python scripts/bench_cli.py --gdeval /path/to/gdeval.pl [--trec-eval PATH] [--jobs 1]
"""

import argparse
import importlib.util
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

RANX = """
import sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
for path in sys.argv[2:]:
    evaluate(qrels, Run.from_file(path, kind="trec"), ["ndcg@20", "map", "precision@10"])
"""
PYTREC_EVAL = """
import sys
import pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.20", "map", "P.10"})
for path in sys.argv[2:]:
    with open(path) as f:
        evaluator.evaluate(pytrec_eval.parse_run(f))
"""


def lgb_risk_command() -> list:
    """The ``lgb-risk`` script installed beside this Python (what a user types), else ``python
    -m lgb_risk``. Not ``python -m lgb_risk.cli``: Python compiles a module run as ``__main__``
    from its source each time, which the installed script does not.

    The package's modules are byte-compiled first, as ``pip install`` does: an editable install
    where ``PYTHONDONTWRITEBYTECODE`` is set would otherwise compile every module from its
    source in every process (0.03 s of each command's start)."""
    import compileall

    import lgb_risk

    compileall.compile_dir(str(Path(lgb_risk.__file__).parent), quiet=1)
    script = shutil.which("lgb-risk", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "lgb_risk"]


def elapsed(commands) -> float:
    start = time.perf_counter()
    for command in commands:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gdeval", required=True, help="path of gdeval.pl")
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent
                                              / "shared" / "data" / "trec2012"))
    parser.add_argument("--trec-eval", help="path of a trec_eval binary (timed where given)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--jobs", type=int,
                        help="lgb-risk evaluate --jobs (default: the command's own default)")
    args = parser.parse_args()
    data = Path(args.data)
    qrels = str(data / "qrels.adhoc.txt")
    runs = sorted(str(p) for p in (data / "runs").glob("*.txt"))
    positional = "qrels run k" in Path(args.gdeval).read_text(errors="replace")
    gdeval = [["perl", args.gdeval, qrels, run, "20"] if positional
              else ["perl", args.gdeval, "-k", "20", qrels, run] for run in runs]
    ours = [[*lgb_risk_command(), "evaluate", qrels, *runs, "--measures",
             "ndcg@20", "err@20", "ap", "p@10", "--baseline", "rm_cata-filtered", "--alpha", "0",
             "1", "5", "10", "--format", "csv",
             *(["--jobs", str(args.jobs)] if args.jobs else [])]]
    commands = {"gdeval.pl": gdeval, "lgb-risk": ours}
    if args.trec_eval:
        commands["trec_eval"] = [[args.trec_eval, "-m", "ndcg_cut.20", "-m", "map", "-m",
                                  "P.10", qrels, run] for run in runs]
    for tool, script in (("ranx", RANX), ("pytrec_eval", PYTREC_EVAL)):
        if importlib.util.find_spec(tool) is not None:
            commands[f"{tool} (in process)"] = [[sys.executable, "-c", script, qrels, *runs]]
        else:
            print(f"{tool} is not installed: not timed")
    for command in commands.values():
        elapsed(command)  # warm the file cache and numba's on-disk caches
    times: dict = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, command in commands.items():
            times[name].append(elapsed(command))
    medians = {name: statistics.median(values) for name, values in times.items()}
    lines = sum(1 for run in runs for _ in open(run))
    print(f"{len(runs)} runs, {lines} lines; median of {args.repeats}, process start included")
    for name, value in medians.items():
        ratio = value / medians["lgb-risk"]
        print(f"  {name:24s} {value:6.3f} s  (min {min(times[name]):.3f})  "
              f"{ratio:5.2f}x lgb-risk evaluate's time")
    print(f"gdeval.pl / lgb-risk evaluate: x{medians['gdeval.pl'] / medians['lgb-risk']:.2f} "
          "(target >= 5)")


if __name__ == "__main__":
    main()
