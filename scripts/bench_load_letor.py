"""Benchmark load_letor's growth with the number of queries: linear, where scikit-learn's
reader, asked for the query ids, is quadratic in them.

Writes LETOR files of N single-document queries (two features each: the worst case for the
query ids, one query per line) and of N/10 queries of 10 documents, and times
``lgb_risk.data.load_letor`` on each; scikit-learn's ``load_svmlight_file(query_id=True)``, the
peer, is timed on the sizes where it ends within a minute. Prints seconds and seconds per
100,000 documents: constant per 100,000 documents is linear.

    python scripts/bench_load_letor.py [--max 1000000]
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

from lgb_risk.data import load_letor


def write_file(path: Path, n_documents: int, per_query: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n_documents)
    values = rng.random((n_documents, 2))
    qid = np.arange(n_documents) // per_query
    with open(path, "w") as out:
        out.writelines(f"{y} qid:{q} 1:{a:.4f} 2:{b:.4f}\n"
                       for y, q, (a, b) in zip(labels, qid, values))


def timed(function, *args, **kwargs) -> float:
    start = time.perf_counter()
    function(*args, **kwargs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=1_000_000, help="largest number of documents")
    args = parser.parse_args()
    sizes = [n for n in (100_000, 200_000, 400_000, 1_000_000) if n <= args.max]
    print(f"{'documents':>10} {'per query':>9} {'load_letor s':>12} {'s/1e5 docs':>10} "
          f"{'sklearn qid s':>13} {'s/1e5 docs':>10}")
    sklearn_ok = {1: True, 10: True}
    with tempfile.TemporaryDirectory() as folder:
        for per_query in (1, 10):
            for n in sizes:
                path = Path(folder) / f"{n}_{per_query}.txt"
                write_file(path, n, per_query)
                ours = timed(load_letor, path)
                line = f"{n:>10,} {per_query:>9} {ours:>12.2f} {ours / n * 1e5:>10.3f}"
                if sklearn_ok[per_query]:
                    peer = timed(load_svmlight_file, str(path), zero_based=False,
                                 query_id=True)
                    line += f" {peer:>13.2f} {peer / n * 1e5:>10.3f}"
                    sklearn_ok[per_query] = peer * (2.5 if n < 400_000 else 5.0) ** 2 < 60
                else:
                    line += f" {'(skipped)':>13}"
                print(line, flush=True)
                path.unlink()


if __name__ == "__main__":
    main()
