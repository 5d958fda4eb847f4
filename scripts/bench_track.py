"""A whole track's runs: ``lgb-risk evaluate`` and the Python API against gdeval.pl, trec_eval,
pytrec_eval, ir_measures and ranx on the same files and measures, process start included.

The runs are made from the eight TREC 2012 runs: each of ``--runs`` (default 96) is a seeded
perturbation of one of them (its scores multiplied by log-normal noise and its documents
re-ranked: the same topics and pool sizes), written to a temporary folder. Every command runs
``--repeats`` times, alternating; medians are printed.

- gdeval.pl (pass its path; ir_measures ships version 1.2a) run once per file, NDCG@20 and
  ERR@20, against ``lgb-risk evaluate`` with NDCG@20, ERR@20 and every risk measure against a
  baseline run (default ``--jobs``): target >= 30x.
- trec_eval (``--trec-eval PATH``; build it from https://github.com/usnistgov/trec_eval with
  ``make``) run once per file in a loop, ``-m ndcg_cut.20 -m map -m P.10``, against
  ``lgb-risk evaluate --jobs 1 --convention trec_eval --measures ndcg@20 ap p@10``: target
  <= 0.5x its time.
- In one Python process each (start, imports and reading included): pytrec_eval, ir_measures,
  ranx, and this library's API, ``read_run`` + ``evaluate_run`` per file and the one call for
  many runs, ``trec.evaluate_runs`` (the command's own path): target >= 1.5x pytrec_eval's
  throughput.

    python scripts/bench_track.py --gdeval /path/to/gdeval.pl [--trec-eval PATH] [--runs 96]
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_cli import PYTREC_EVAL, elapsed, lgb_risk_command  # this folder's: the same timing

MEASURES_TREC_EVAL = ["ndcg@20", "ap", "p@10"]

IN_PROCESS = {
    "pytrec_eval": PYTREC_EVAL,
    "ir_measures": """
import sys, ir_measures
from ir_measures import nDCG, AP, P
qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
for path in sys.argv[2:]:
    ir_measures.calc_aggregate([nDCG@20, AP, P@10], qrels, ir_measures.read_trec_run(path))
""",
    "ranx": """
import sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
for path in sys.argv[2:]:
    evaluate(qrels, Run.from_file(path, kind="trec"), ["ndcg@20", "map", "precision@10"])
""",
    "API: read_run + evaluate_run per file": """
import sys
from lgb_risk import data, trec
qrels = data.read_qrels(sys.argv[1])
for path in sys.argv[2:]:
    trec.evaluate_run(qrels, data.read_run(path), ["ndcg@20", "ap", "p@10"],
                      convention="trec_eval")
""",
    "API: trec.evaluate_runs, one call": """
import sys
from pathlib import Path
from lgb_risk import trec
trec.evaluate_runs(sys.argv[1], {Path(p).stem: p for p in sys.argv[2:]},
                   ["ndcg@20", "ap", "p@10"], convention="trec_eval")
""",
}


def make_runs(source: Path, out: Path, n_runs: int, seed: int = 2012) -> list:
    """``n_runs`` seeded perturbations of the runs in ``source`` (round robin over them)."""
    rng = np.random.default_rng(seed)
    sources = sorted(source.glob("*.txt"))
    paths = []
    for i in range(n_runs):
        lines = sources[i % len(sources)].read_text().split("\n")
        fields = [line.split() for line in lines if line.strip()]
        topics = [f[0] for f in fields]
        scores = np.array([float(f[4]) for f in fields])
        noisy = scores + np.abs(scores).mean() * 0.05 * rng.standard_normal(scores.size)
        order = np.lexsort((-noisy, np.array([int(t) for t in topics])))
        rank, last, text = 0, None, []
        for j in order:
            rank = rank + 1 if topics[j] == last else 1
            last = topics[j]
            text.append(f"{topics[j]} Q0 {fields[j][2]} {rank} {noisy[j]:.6f} run{i}")
        path = out / f"run{i:03d}.txt"
        path.write_text("\n".join(text) + "\n")
        paths.append(str(path))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gdeval", required=True, help="path of gdeval.pl")
    parser.add_argument("--trec-eval", help="path of a trec_eval binary (timed where given)")
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent
                                              / "shared" / "data" / "trec2012"))
    parser.add_argument("--runs", type=int, default=96)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = Path(args.data)
    qrels = str(data / "qrels.adhoc.txt")
    lgb_risk = lgb_risk_command()
    with tempfile.TemporaryDirectory() as folder:
        runs = make_runs(data / "runs", Path(folder), args.runs)
        lines = sum(Path(p).read_text().count("\n") for p in runs)
        positional = "qrels run k" in Path(args.gdeval).read_text(errors="replace")
        commands = {
            "lgb-risk evaluate (NDCG@20, ERR@20, risk)": [lgb_risk + [
                "evaluate", qrels, *runs, "--measures", "ndcg@20", "err@20", "--baseline",
                Path(runs[0]).stem, "--alpha", "0", "1", "5", "10", "--format", "csv"]],
            "gdeval.pl per file (NDCG@20, ERR@20)": [
                ["perl", args.gdeval, qrels, run, "20"] if positional
                else ["perl", args.gdeval, "-k", "20", qrels, run] for run in runs],
            "lgb-risk evaluate --jobs 1 (trec_eval's measures)": [lgb_risk + [
                "evaluate", qrels, *runs, "--measures", *MEASURES_TREC_EVAL, "--convention",
                "trec_eval", "--jobs", "1", "--format", "csv"]],
        }
        if args.trec_eval:
            commands["trec_eval per file (ndcg_cut.20, map, P.10)"] = [
                [args.trec_eval, "-m", "ndcg_cut.20", "-m", "map", "-m", "P.10", qrels, run]
                for run in runs]
        for name, code in IN_PROCESS.items():
            commands[f"{name} (one process)"] = [[sys.executable, "-c", code, qrels, *runs]]
        times: dict = {name: [] for name in commands}
        for _ in range(args.repeats):
            for name, command in commands.items():
                try:
                    times[name].append(elapsed(command))
                except (subprocess.CalledProcessError, FileNotFoundError) as error:
                    times[name].append(float("nan"))
                    print(f"{name}: failed ({error})", file=sys.stderr)
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"{len(runs)} runs, {lines} lines; median of {args.repeats}, process start included")
    for name, seconds in median.items():
        print(f"  {name:58s} {seconds:7.2f} s")
    ours = median["lgb-risk evaluate (NDCG@20, ERR@20, risk)"]
    gdeval = median["gdeval.pl per file (NDCG@20, ERR@20)"]
    print(f"gdeval.pl / lgb-risk evaluate: x{gdeval / ours:.1f} (target >= 30)")
    if args.trec_eval:
        loop = median["trec_eval per file (ndcg_cut.20, map, P.10)"]
        one = median["lgb-risk evaluate --jobs 1 (trec_eval's measures)"]
        print(f"lgb-risk evaluate --jobs 1 / trec_eval loop: {one / loop:.2f}x its time "
              "(target <= 0.5)")
    reference = median["pytrec_eval (one process)"]
    for name in ("API: read_run + evaluate_run per file", "API: trec.evaluate_runs, one call"):
        print(f"{name}: x{reference / median[name + ' (one process)']:.2f} pytrec_eval's "
              "throughput (target >= 1.5)")


if __name__ == "__main__":
    main()
