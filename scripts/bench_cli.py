"""``lgb-risk evaluate`` against gdeval.pl on the eight TREC 2012 runs, process start included.

gdeval.pl (the TREC Web track's evaluation script, not distributed with lgb_risk: pass its path)
is run once per run at @20, as one evaluates eight runs with it; ``lgb-risk evaluate`` once for
all eight, with more work: NDCG@20, ERR@20, AP, P@10 and every risk measure against the baseline
``rm_cata-filtered`` at α = 0, 1, 5, 10, with its default ``--jobs`` (one process per usable
core here: the runs total 13 MB) or the ``--jobs`` given. Both sides run ``--repeats`` times,
alternating; the medians and their ratio are printed. The target is a ratio of at least 3.

    python scripts/bench_cli.py --gdeval /path/to/gdeval.pl [--jobs 1] [--data DIR]
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path


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
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--jobs", type=int,
                        help="lgb-risk evaluate --jobs (default: the command's own default)")
    args = parser.parse_args()
    data = Path(args.data)
    qrels = str(data / "qrels.adhoc.txt")
    runs = sorted(str(p) for p in (data / "runs").glob("*.txt"))
    gdeval = [["perl", args.gdeval, "-k", "20", qrels, run] for run in runs]
    ours = [[sys.executable, "-m", "lgb_risk.cli", "evaluate", qrels, *runs, "--measures",
             "ndcg@20", "err@20", "ap", "p@10", "--baseline", "rm_cata-filtered", "--alpha", "0",
             "1", "5", "10", "--format", "csv",
             *(["--jobs", str(args.jobs)] if args.jobs else [])]]
    elapsed(ours)  # warm the file cache and numba's on-disk cache alike
    elapsed(gdeval)
    times = {"gdeval.pl": [], "lgb-risk": []}
    for _ in range(args.repeats):
        times["gdeval.pl"].append(elapsed(gdeval))
        times["lgb-risk"].append(elapsed(ours))
    medians = {name: statistics.median(values) for name, values in times.items()}
    lines = sum(1 for run in runs for _ in open(run))
    print(f"{len(runs)} runs, {lines} lines; median of {args.repeats}, process start included")
    for name, value in medians.items():
        print(f"  {name:10s} {value:6.3f} s  (min {min(times[name]):.3f})")
    print(f"ratio gdeval.pl / lgb-risk evaluate: x{medians['gdeval.pl'] / medians['lgb-risk']:.2f}"
          f" (target >= 3)")


if __name__ == "__main__":
    main()
