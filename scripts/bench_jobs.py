"""Benchmark the experiment runner's parallelism: the demo grid with --jobs 1 and --jobs 2.

Each run starts from an empty output folder (split, baselines, every unit, report); --jobs 2
runs the units on a local Dask cluster of two worker processes (the ``dask`` extra). After a
warm-up run (numba's compilation cache, the file cache), the two commands alternate
``--repeats`` times (5): each --jobs 1 run is paired with the --jobs 2 run right after it, and the
speed-up is the median of the pairs' ratios (this machine's speed drifts by ±20% from one
minute to the next, which a pair shares far more than two distant runs do); the ratio of the
fastest runs is printed too. Target: >= 1.8x on 2 cores. Also prints whether the reports are
identical and, on Linux, the CPU seconds the whole machine spent during the fastest runs (the
local workers are not this script's children, so their time is read from /proc/stat): on C
cores, a speed-up of at most C x wall(--jobs 1) / CPU(--jobs 2) is possible.

    python scripts/bench_jobs.py [CONFIG] [--repeats N]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def machine_cpu_seconds():
    """Busy CPU seconds of the whole machine since boot (user, nice, system, irq, softirq), or
    None where /proc/stat does not exist."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = map(int, fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def timed_run(config, out, jobs):
    cmd = [sys.executable, "-m", "lgb_risk.cli", "run", *([config] if config else []),
           "--out", str(out), "--jobs", str(jobs)]
    cpu_before = machine_cpu_seconds()
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    cpu = None if cpu_before is None else machine_cpu_seconds() - cpu_before
    return wall, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", nargs="?", help="TOML configuration (default: the demo)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each command (5)")
    args = parser.parse_args()
    runs = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="lgb_risk_jobs_") as tmp:
        timed_run(args.config, Path(tmp) / "warm", 1)
        for repeat in range(args.repeats):
            for jobs in (1, 2):
                out = Path(tmp) / f"jobs{jobs}_{repeat}"
                runs[jobs].append((*timed_run(args.config, out, jobs),
                                   (out / "report.csv").read_bytes()))
    reports = {report for jobs in runs for _, _, report in runs[jobs]}
    pairs = [one / two for (one, _, _), (two, _, _) in zip(runs[1], runs[2])]
    (one, cpu_one, _), (two, cpu_two, _) = min(runs[1]), min(runs[2])
    print("--jobs 1: " + ", ".join(f"{wall:.1f}" for wall, _, _ in runs[1]) + " s   --jobs 2: "
          + ", ".join(f"{wall:.1f}" for wall, _, _ in runs[2]) + " s")
    print("speed-up of each pair: " + ", ".join(f"x{r:.2f}" for r in pairs)
          + f"   median: x{statistics.median(pairs):.2f}   fastest runs: x{one / two:.2f}   "
          f"reports identical: {len(reports) == 1}")
    if cpu_two is not None:
        print(f"CPU seconds of the machine in the fastest runs: --jobs 1 {cpu_one:.1f}, --jobs 2 "
              f"{cpu_two:.1f}; best speed-up possible on 2 cores with that CPU: "
              f"x{2 * one / cpu_two:.2f}")


if __name__ == "__main__":
    main()
