"""Every cell gdeval.pl v1.3 prints in its risk mode against ``lgb-risk evaluate``'s, on the
TREC 2012 Web track's eight Indri runs: each run against two baselines (``rm_cata-filtered``,
indriCASP, and ``ql_cata``), at α = 0, 1, 5 and 10, with and without ``-c``: the per-topic rows
(x_q of NDCG@20 and ERR@20) and the ``amean`` row, compared to gdeval.pl's five decimals.
Prints the count of equal cells and exits non-zero on any difference.

    python scripts/gdeval_conformance.py [--data ../shared/data/trec2012]
        [--gdeval ../shared/tools/gdeval.pl]
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINES = ("rm_cata-filtered", "ql_cata")
ALPHAS = (0, 1, 5, 10)


def gdeval_rows(gdeval: Path, qrels: Path, run: Path, baseline: Path, alpha, c: bool) -> dict:
    """{topic or 'amean': (NDCG@20 cell, ERR@20 cell)} as gdeval.pl prints them."""
    command = ["perl", str(gdeval), *(["-c"] if c else []), "-k", "20", "-baseline",
               str(baseline), "-riskAlpha", str(alpha), str(qrels), str(run)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rows = [line.rsplit(",", 3)[1:] for line in out.splitlines()[1:]]  # its runid has commas
    return {topic: (float(ndcg), float(err)) for topic, ndcg, err in rows}


def our_rows(qrels: Path, run: Path, baseline: Path, alpha, c: bool) -> dict:
    """The same cells from ``lgb-risk evaluate`` (per topic, and the summary's URisk)."""
    from lgb_risk import cli

    options = [str(qrels), str(run), "--baseline", str(baseline), "--alpha", str(alpha),
               "--format", "csv", "--decimals", "17",
               *(["--missing-topics", "zero"] if c else [])]
    columns = (f"ndcg@20_urisk_a{alpha:g}", f"err@20_urisk_a{alpha:g}")
    found = {}
    for per_topic in (True, False):
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            code = cli.main(["evaluate", *options, *(["--per-topic"] if per_topic else [])])
        assert code == 0
        for row in csv.DictReader(io.StringIO(out.getvalue())):
            if row["run"] == run.stem:
                found[row["topic"] if per_topic else "amean"] = tuple(
                    float(row[c]) for c in columns)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "trec2012"))
    parser.add_argument("--gdeval", default=str(ROOT.parent / "shared" / "tools" / "gdeval.pl"))
    args = parser.parse_args()
    data, gdeval = Path(args.data), Path(args.gdeval)
    qrels = data / "qrels.adhoc.txt"
    runs = sorted((data / "runs").glob("*.txt"))
    equal = cells = 0
    for name in BASELINES:
        baseline = data / "runs" / f"{name}.txt"
        for run in runs:
            if run == baseline:
                continue
            for alpha in ALPHAS:
                for c in (False, True):
                    theirs = gdeval_rows(gdeval, qrels, run, baseline, alpha, c)
                    ours = our_rows(qrels, run, baseline, alpha, c)
                    assert set(theirs) == set(ours), (run.stem, name, alpha, c)
                    for key, values in theirs.items():
                        for mine, their in zip(ours[key], values):
                            cells += 1
                            if abs(mine - their) <= 5e-6 + 1e-12:
                                equal += 1
                            else:
                                print(f"differs: {run.stem} against {name}, alpha {alpha}, "
                                      f"-c {c}, {key}: {mine!r} against {their}")
    print(f"{equal} of {cells} cells equal")
    return 0 if equal == cells else 1


if __name__ == "__main__":
    sys.exit(main())
