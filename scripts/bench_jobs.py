"""Benchmark the experiment runner's parallelism: the demo grid with --jobs 1 and --jobs 2.

Each run starts from an empty output folder (split, baselines, every unit, report); --jobs 2
runs the units on a local Dask cluster of two worker processes (the ``dask`` extra). Prints both
wall times, the speed-up (target >= 1.8x on 2 cores) and whether the two reports are identical.

    python scripts/bench_jobs.py [CONFIG]
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed_run(config, out, jobs):
    cmd = [sys.executable, "-m", "lgb_risk.cli", "run", *([config] if config else []),
           "--out", str(out), "--jobs", str(jobs)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    config = sys.argv[1] if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory(prefix="lgb_risk_jobs_") as tmp:
        timed_run(config, Path(tmp) / "warm", 1)  # numba's compilation cache, imports
        one = timed_run(config, Path(tmp) / "jobs1", 1)
        two = timed_run(config, Path(tmp) / "jobs2", 2)
        same = ((Path(tmp) / "jobs1" / "report.csv").read_bytes()
                == (Path(tmp) / "jobs2" / "report.csv").read_bytes())
    print(f"--jobs 1: {one:.1f} s   --jobs 2: {two:.1f} s   speed-up x{one / two:.2f}   "
          f"reports identical: {same}")


if __name__ == "__main__":
    main()
