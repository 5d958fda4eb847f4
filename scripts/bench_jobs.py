"""Benchmark the experiment runner's parallelism: the demo grid with --jobs 1 and --jobs 2.

Each run starts from an empty output folder (split, baselines, every unit, report); --jobs 2
runs the units on a local Dask cluster of two worker processes (the ``dask`` extra). Prints both
wall times, the speed-up (target >= 1.8x on 2 cores), whether the two reports are identical, and
the CPU seconds each run used (its processes and theirs): on C cores, a speed-up of at most
C x wall(--jobs 1) / CPU(--jobs 2) is possible, which shows what the workers' start-up and Dask
cost.

    python scripts/bench_jobs.py [CONFIG]
"""

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed_run(config, out, jobs):
    cmd = [sys.executable, "-m", "lgb_risk.cli", "run", *([config] if config else []),
           "--out", str(out), "--jobs", str(jobs)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    config = sys.argv[1] if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory(prefix="lgb_risk_jobs_") as tmp:
        timed_run(config, Path(tmp) / "warm", 1)  # numba's compilation cache, imports
        one, cpu_one = timed_run(config, Path(tmp) / "jobs1", 1)
        two, cpu_two = timed_run(config, Path(tmp) / "jobs2", 2)
        same = ((Path(tmp) / "jobs1" / "report.csv").read_bytes()
                == (Path(tmp) / "jobs2" / "report.csv").read_bytes())
    print(f"--jobs 1: {one:.1f} s   --jobs 2: {two:.1f} s   speed-up x{one / two:.2f}   "
          f"reports identical: {same}")
    print(f"CPU seconds: --jobs 1: {cpu_one:.1f}   --jobs 2: {cpu_two:.1f}   best speed-up "
          f"possible on 2 cores with that CPU: x{2 * one / cpu_two:.2f}")


if __name__ == "__main__":
    main()
