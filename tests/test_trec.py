"""TREC readers and gdeval.pl-style evaluation against a hand-written gdeval reference."""

import glob
import math
import os

import numpy as np
import pandas as pd
import pytest

from lgb_risk import data, measures, trec
from tests.conftest import SHARED_DATA, shared_file


def gdeval_reference(qrels_path, run_path, k=20, max_grade=4):
    """A from-scratch reading of gdeval.pl's rules (dicts, sorted, loops): topic -> (ndcg, err)."""
    judged = {}
    for line in open(qrels_path):
        f = line.split()
        if f:
            judged.setdefault(f[0], {})[f[2]] = max(int(f[3]), 0)
    run = {}
    for line in open(run_path):
        f = line.split()
        if f:
            run.setdefault(f[0], []).append((float(f[4]), f[2]))
    out = {}
    for topic, docs in run.items():
        grades = judged.get(topic, {})
        ideal_grades = sorted(grades.values(), reverse=True)
        if not ideal_grades or ideal_grades[0] == 0:
            continue
        ranked = sorted(docs, key=lambda d: (d[0], d[1]), reverse=True)  # score desc, docno desc
        dcg = idcg = err = 0.0
        p = 1.0
        for r, (_, docno) in enumerate(ranked[:k], start=1):
            g = grades.get(docno, 0)
            dcg += (2 ** g - 1) / math.log2(r + 1)
            stop = (2 ** g - 1) / 2 ** max_grade
            err += p * stop / r
            p *= 1 - stop
        for r, g in enumerate(ideal_grades[:k], start=1):
            idcg += (2 ** g - 1) / math.log2(r + 1)
        out[topic] = (dcg / idcg, err)
    return out


def _write(path, text):
    path.write_text(text)
    return path


def test_gdeval_conventions_on_a_hand_made_case(tmp_path):
    qrels = _write(tmp_path / "qrels", "1 0 a 2\n1 0 b -2\n1 0 c 1\n1 0 z 3\n2 0 a 0\n3 0 x 1\n")
    # Topic 1: b (spam, -2) and a tie between c and d broken by DOCNO descending (d before c);
    # z is relevant but not retrieved (it still counts in IDCG). Topic 2 has nothing relevant.
    run = _write(tmp_path / "myrun.txt", "1 Q0 b 1 9.0 r\n1 Q0 c 2 5.0 r\n1 Q0 d 3 5.0 r\n"
                                         "1 Q0 a 4 1.0 r\n2 Q0 a 1 1.0 r\n")
    result = trec.evaluate_run(data.read_qrels(qrels), data.read_run(run), ["ndcg@20", "err@20"])
    assert list(result.index) == ["1"]
    ranked_gains = [0, 0, 1, 3]  # b (spam -> 0), d (unjudged -> 0), c (1), a (2)
    dcg = sum(g / math.log2(r + 2) for r, g in enumerate(ranked_gains))
    idcg = 7 + 3 / math.log2(3) + 1 / 2
    assert result.loc["1", "ndcg@20"] == pytest.approx(dcg / idcg, abs=1e-12)
    want = gdeval_reference(qrels, run)
    assert result.loc["1"].tolist() == pytest.approx(list(want["1"]), abs=1e-12)


@pytest.mark.shared_data
def test_indri_casp_mean_err20_is_0_1947_as_published():
    qrels = data.read_qrels(shared_file("trec2012/qrels.adhoc.txt"))
    run = data.read_run(shared_file("trec2012/runs/rm_cata-filtered.txt"))
    result = trec.evaluate_run(qrels, run, ["err@20"])
    assert len(result) == 50
    assert round(result["err@20"].mean(), 4) == 0.1947  # [GEO] Table 6, [TR] Table 1


@pytest.mark.shared_data
@pytest.mark.slow
def test_all_trec2012_runs_match_the_gdeval_reference_per_topic():
    qrels_path = shared_file("trec2012/qrels.adhoc.txt")
    qrels = data.read_qrels(qrels_path)
    paths = sorted(glob.glob(str(SHARED_DATA / "trec2012/runs/*.txt")))
    assert len(paths) == 8
    for path in paths:
        got = trec.evaluate_run(qrels, data.read_run(path), ["ndcg@20", "err@20"])
        want = gdeval_reference(qrels_path, path)
        assert sorted(got.index) == sorted(want)
        ref = np.array([want[t] for t in got.index])
        assert np.abs(got.to_numpy() - ref).max() < 1e-12, path


def test_topics_in_natural_order():
    assert trec.natural_topic_order(["10", "9", "b", "151", "a"]) == ["9", "10", "151", "a", "b"]


def test_unknown_measure_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match="unknown measure 'mapp'.*ndcg@20, p@10"):
        measures.parse("mapp")
    with pytest.raises(ValueError, match="rprec takes no cut-off"):
        measures.parse("rprec@5")
    with pytest.raises(FileNotFoundError, match="no such file"):
        data.read_run(tmp_path / "absent.txt")


def test_ties_broken_by_docno_descending_in_every_path():
    """Equal scores: DOCNO descending (gdeval, trec_eval), whatever the file order."""
    qrels = pd.DataFrame({"topic": ["1", "1", "1"], "docno": ["a", "b", "c"], "grade": [1, 0, 2]})
    run = pd.DataFrame({"topic": ["1"] * 3, "docno": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]})
    got = trec.evaluate_run(qrels, run, ["rr", "p@1", "ndcg@1"])
    # order c, b, a: the first document (c, grade 2) is relevant and ideal
    assert got.loc["1"].tolist() == [1.0, 1.0, 1.0]
    reordered = trec.evaluate_run(qrels, run.iloc[::-1], ["rr", "p@1", "ndcg@1"])
    assert reordered.equals(got)


def test_automatic_jobs_one_process_per_core_for_large_runs_only(tmp_path):
    small = [_write(tmp_path / f"s{i}.txt", "1 Q0 a 1 0.5 r\n") for i in range(3)]
    assert trec.automatic_jobs(small) == 1
    large = []
    for i in range(3):
        large.append(tmp_path / f"l{i}.txt")
        large[-1].write_bytes(b"x" * (trec.PARALLEL_FROM_BYTES // 2))
    cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
             else os.cpu_count())
    assert trec.automatic_jobs(large) == min(cores, 3)
    assert trec.automatic_jobs(large[:1]) == 1
    assert trec.automatic_jobs([*large, tmp_path / "absent.txt"]) == 1


@pytest.mark.parametrize("jobs", [2, 3, 7])
def test_evaluating_in_several_processes_gives_each_run_its_own_result(tmp_path, jobs):
    """With jobs > 1 this process evaluates its share of the runs and forked processes the
    rest: every run's result is the one-process result, under its own name, in the order
    given (five runs that differ, so that a mix-up shows)."""
    qrels = _write(tmp_path / "qrels.txt", "".join(f"{t} 0 d{d} {(t + d) % 3}\n"
                                                   for t in (1, 2) for d in range(6)))
    runs = []
    for r in range(5):
        lines = [f"{t} Q0 d{d} {p + 1} {10 - p} run{r}\n" for t in (1, 2)
                 for p, d in enumerate(np.roll(np.arange(6), r + t))]
        runs.append(_write(tmp_path / f"run{r}.txt", "".join(lines)))
    one = trec.evaluate_files(qrels, runs, ["ndcg@3", "p@2"], jobs=1)
    several = trec.evaluate_files(qrels, runs, ["ndcg@3", "p@2"], jobs=jobs)
    assert list(several) == list(one) == [f"run{r}" for r in range(5)]
    for name in one:
        assert several[name].topics == one[name].topics
        for measure in ("ndcg@3", "p@2"):
            np.testing.assert_array_equal(several[name].values[measure],
                                          one[name].values[measure])
    assert len({tuple(result.values["ndcg@3"]) for result in one.values()}) > 1


def test_shares_balance_bytes_and_this_process_takes_the_lightest(tmp_path):
    """Every run in exactly one share; by brute force over all splits, the heaviest share is as
    light as it can be for these sizes (greedy largest-first is optimal here); the first share
    (this process's, which also gathers results) is the lightest."""
    import itertools

    sizes = [420, 2590, 1110, 2560, 420, 2590, 1140, 2590]
    paths = []
    for i, size in enumerate(sizes):
        paths.append(tmp_path / f"r{i}.txt")
        paths[-1].write_bytes(b"x" * size)
    shares = trec._shares_by_size(paths, 2)
    assert sorted(i for share in shares for i in share) == list(range(len(sizes)))
    loads = [sum(sizes[i] for i in share) for share in shares]
    best = min(max(sum(s for s, side in zip(sizes, split) if side == j) for j in (0, 1))
               for split in itertools.product((0, 1), repeat=len(sizes)))
    assert max(loads) == best and loads[0] == min(loads)
    assert trec._shares_by_size(paths, 1) == [list(range(len(sizes)))]
    assert len(trec._shares_by_size(paths[:2], 2)) == 2


def test_a_malformed_run_in_another_process_names_its_file_and_line(tmp_path):
    qrels = _write(tmp_path / "qrels.txt", "1 0 a 1\n1 0 b 0\n")
    good = _write(tmp_path / "good.txt", "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    bad = _write(tmp_path / "bad.txt", "1 Q0 a 1 2.0 r\n1 Q0 b 2 high r\n" + "#" * 5000)
    shares = trec._shares_by_size([good, bad], 2)
    assert shares[0] == [0]  # the malformed run is the other process's
    with pytest.raises(ValueError, match=r"bad.txt:2: SCORE must be a finite number, got "
                                         r".high."):
        trec.evaluate_files(qrels, [good, bad], ["p@1"], jobs=2)


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_the_error_reported_is_the_first_bad_run_whatever_the_processes(tmp_path, jobs):
    """Two malformed runs, the first in argument order in another process than the second (the
    second in this process's share, which finishes first): as with one process, the first
    one's error is raised."""
    qrels = _write(tmp_path / "qrels.txt", "1 0 a 1\n1 0 b 0\n")
    first = _write(tmp_path / "first.txt", "1 Q0 a 1 2.0 r\n1 Q0 b 2 high r\n" + "#" * 5000)
    good = _write(tmp_path / "good.txt", "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    second = _write(tmp_path / "second.txt", "1 Q0 a 1 2.0 r\n1 Q0 a 2 1.0 r\n" + "#" * 2000)
    runs = [first, good, second]
    if jobs == 2:
        assert trec._shares_by_size(runs, 2) == [[1, 2], [0]]
    with pytest.raises(ValueError, match=r"first.txt:2: SCORE must be a finite number"):
        trec.evaluate_files(qrels, runs, ["p@1"], jobs=jobs)


def _write_run(path, lines):
    ranks = {}
    return _write(path, "".join(
        f"{topic} Q0 {docno} {ranks.setdefault(topic, []).append(0) or len(ranks[topic])} "
        f"{score} r\n" for topic, docno, score in lines))


def _first_byte_keys_under_seed_zero(topic, docno, seed=0):
    """A pair key as weak as a hash can be: under seed 0 it sees only an id's first byte, so
    a1, a2 and a3 share one; other seeds key the whole id."""
    from lgb_risk._files.pair_keys import pair_keys

    return pair_keys(topic, docno.astype("S1") if seed == 0 else docno, seed)


def test_documents_whose_keys_collide_keep_their_own_grades(tmp_path, monkeypatch):
    """Keys find judgments, the ids decide: under keys that collide, every grade and every
    duplicate check is still the exact one (against the unweakened evaluation and hand-made
    values)."""
    run = _write_run(tmp_path / "r.txt", [("1", "a2", 4.0), ("1", "a1", 3.0), ("1", "b1", 2.0),
                                          ("2", "a2", 4.0), ("2", "a3", 3.0), ("2", "a1", 2.0)])
    apart = {"1": {"a1": 2, "b1": 1}, "2": {"a1": 1, "b9": 2}}  # no two keys equal in either
    together = {"1": {"a1": 2, "b1": 1}, "2": {"a1": 0, "a2": 3}}  # a1, a2 of 2 share a key
    measures_ = ["p@1", "ndcg@3", "ap"]
    exact = {name: trec.evaluate_run(q, run, measures_, convention="trec_eval")
             for name, q in (("apart", apart), ("together", together))}
    monkeypatch.setattr(trec, "pair_keys", _first_byte_keys_under_seed_zero)
    monkeypatch.setattr(data, "pair_keys", _first_byte_keys_under_seed_zero)
    assert trec.judgments(data.QrelsColumns(np.array([b"2", b"2"]), np.array([b"a1", b"a2"]),
                                            np.array([0, 3]))).seed == 1
    for name, q in (("apart", apart), ("together", together)):
        weak = trec.evaluate_run(q, run, measures_, convention="trec_eval")
        pd.testing.assert_frame_equal(weak, exact[name])
    # a2 heads both topics: unjudged for topic 1 in both qrels (a1's key is no match), judged
    # 3 for topic 2 in `together` only
    p1 = {name: frame["p@1"].to_dict() for name, frame in exact.items()}
    assert p1 == {"apart": {"1": 0.0, "2": 0.0}, "together": {"1": 0.0, "2": 1.0}}
    # the reader's duplicate check: a1, a2 and a3 share keys, so the lines are compared exactly
    assert data.read_run_columns(run).docno.tolist() == [b"a2", b"a1", b"b1", b"a2", b"a3", b"a1"]
    twice = _write_run(tmp_path / "twice.txt", [("1", "a2", 4.0), ("1", "a2", 3.0)])
    with pytest.raises(ValueError, match="twice.txt:2: document 'a2' appears again"):
        data.read_run_columns(twice)


def test_keys_that_collide_under_every_seed_are_an_error_not_a_wrong_grade(monkeypatch):
    monkeypatch.setattr(trec, "pair_keys", lambda topic, docno, seed=0: np.zeros(docno.size,
                                                                                  np.uint64))
    with pytest.raises(RuntimeError, match="share a key"):
        trec.judgments(data.QrelsColumns(np.array([b"1", b"1"]), np.array([b"a", b"b"]),
                                         np.array([1, 0])))


def test_judgments_in_memory_give_a_document_one_grade_per_topic():
    qrels = pd.DataFrame({"topic": ["7", "7", "8"], "docno": ["d", "d", "d"],
                          "grade": [1, 2, 0]})
    with pytest.raises(ValueError, match="judge document 'd' for topic '7' twice"):
        trec.evaluate_run(qrels, {"7": {"d": 1.0}}, ["p@1"])


def test_the_key_directory_finds_every_key_as_a_dictionary_does():
    """rows_of against a dict, with keys crowded into few buckets (their top bits shared) so
    that a bucket holds several keys and the scan runs several rounds."""
    from lgb_risk._files.pair_keys import key_index, rows_of

    rng = np.random.default_rng(11)
    crowded = (rng.integers(0, 4, 3000, dtype=np.uint64) << np.uint64(60)) | rng.integers(
        0, 1 << 40, 3000, dtype=np.uint64)
    spread = rng.integers(0, np.iinfo(np.uint64).max, 3000, dtype=np.uint64, endpoint=True)
    assert np.diff(key_index(np.unique(crowded)).start).max() >= 5  # several keys a bucket
    for judged_keys in (np.unique(crowded), np.unique(spread)):
        index = key_index(rng.permutation(judged_keys))
        row_of = {int(k): r for r, k in enumerate(index.sorted_keys[np.argsort(index.rows)])}
        asked = np.concatenate([judged_keys[::3], judged_keys[::7] + np.uint64(1),
                                rng.integers(0, 1 << 62, 500, dtype=np.uint64)])
        want = [row_of.get(int(k), -1) for k in asked]
        assert rows_of(asked, index).tolist() == want
    assert key_index(np.array([3, 5, 3], np.uint64)) is None
