"""Shared fixtures: the location of ../shared/data and random ranking problems."""

from pathlib import Path

import numpy as np
import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file(relative: str) -> Path:
    """Path of a file under ../shared/data, or skip the test saying which file is missing."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"needs {path} (the project's shared data, absent on this machine)")
    return path


def random_problem(rng, n_queries=30, max_docs=25, max_label=4, tie_levels=None):
    """Flat labels, scores and group sizes with every edge case in reach.

    Query sizes run from 1 (single-document queries) to ``max_docs``; some queries get all-zero
    labels; with ``tie_levels`` scores are drawn from that many values, so ties are frequent.
    """
    group = rng.integers(1, max_docs + 1, size=n_queries)
    group[0] = 1
    n = int(group.sum())
    labels = rng.integers(0, max_label + 1, size=n)
    starts = np.concatenate(([0], np.cumsum(group)[:-1]))
    for q in rng.choice(n_queries, size=max(1, n_queries // 5), replace=False):
        labels[starts[q]:starts[q] + group[q]] = 0
    if tie_levels:
        scores = rng.integers(0, tie_levels, size=n).astype(float)
    else:
        scores = rng.normal(size=n)
    return labels, scores, group


def split_queries(labels, scores, group):
    """Per-query (labels, scores) lists, for the naive references."""
    out, start = [], 0
    for size in group:
        out.append((labels[start:start + size], scores[start:start + size]))
        start += size
    return out


def wait_for_a_unit_file(units, process, seconds=300):
    """Wait until an experiment's ``units`` folder holds a finished unit's file, while
    ``process`` (the run) is alive; fail at once if it ends first."""
    import time

    deadline = time.time() + seconds
    while not (units.exists() and any(units.glob("*.csv"))):
        assert process.poll() is None, f"the run ended before any unit: {process.stderr.read()}"
        assert time.time() < deadline, f"no unit finished within {seconds} s"
        time.sleep(0.05)


def pdf_facts(path) -> tuple[float, set]:
    """(page width in pt, font types) of a PDF, read by poppler's tools (skips without them)."""
    import shutil
    import subprocess

    if not shutil.which("pdffonts") or not shutil.which("pdfinfo"):
        pytest.skip("poppler-utils (pdffonts, pdfinfo) is not installed")
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
    size = next(line for line in info.stdout.splitlines() if line.startswith("Page size"))
    width = float(size.split(":")[1].split("x")[0])
    fonts = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True, check=True)
    types = {" ".join(line.split()[1:3]) for line in fonts.stdout.splitlines()[2:]}
    return width, types
