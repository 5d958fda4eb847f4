"""The TREC Web track's risk-sensitive evaluation exactly as its tool does it: gdeval.pl v1.3
(``../shared/tools/gdeval.pl``, run with perl) in its risk mode, ``-baseline B -riskAlpha A``
with and without ``-c``, against ``lgb-risk evaluate`` and the API, cell by cell, on runs
perturbed to lack topics (the run's, the baseline's, both) and to rank an unjudged topic."""

import csv
import io
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from lgb_risk import risk, trec
from tests.conftest import SHARED_DATA, shared_file
from tests.test_cli import run_cli

pytestmark = pytest.mark.shared_data

GDEVAL = SHARED_DATA.parent / "tools" / "gdeval.pl"
RUN_LACKS, BASELINE_LACKS, BOTH_LACK = {"151", "152", "153"}, {"160", "161"}, {"170"}
UNJUDGED = "999"  # a topic the qrels do not have: gdeval.pl skips it


@pytest.fixture(scope="module")
def perturbed(tmp_path_factory):
    """``run.txt`` (ql_cata without 151-153 and 170, with an unjudged topic) and ``base.txt``
    (rm_cata-filtered, indriCASP, without 160, 161 and 170), each cut to 30 documents a
    topic (the measures are @20)."""
    if shutil.which("perl") is None:
        pytest.skip("needs perl, to run gdeval.pl")
    if not GDEVAL.is_file():
        pytest.skip(f"needs {GDEVAL} (the TREC Web track's gdeval.pl, absent on this machine)")
    folder = tmp_path_factory.mktemp("gdeval_risk")

    def cut(name, drop, extra=()):
        kept, count = [], {}
        for line in shared_file(f"trec2012/runs/{name}").read_text().splitlines():
            topic = line.split()[0]
            count[topic] = count.get(topic, 0) + 1
            if topic not in drop and count[topic] <= 30:
                kept.append(line)
        path = folder / ("run.txt" if extra else "base.txt")
        path.write_text("\n".join([*kept, *extra]) + "\n")
        return path

    unjudged = [f"{UNJUDGED} Q0 clueweb09-en0000-00-{i:05d} {i + 1} {-i} indri" for i in range(5)]
    return (shared_file("trec2012/qrels.adhoc.txt"),
            cut("ql_cata.txt", RUN_LACKS | BOTH_LACK, unjudged),
            cut("rm_cata-filtered.txt", BASELINE_LACKS | BOTH_LACK))


def _gdeval(qrels, run, baseline, alpha, c):
    """gdeval.pl's risk rows: {topic: (x_q of NDCG@20, of ERR@20)} and its amean (without a
    baseline, its plain rows)."""
    risk_mode = [] if baseline is None else ["-baseline", str(baseline), "-riskAlpha",
                                             str(alpha)]
    command = ["perl", str(GDEVAL), *(["-c"] if c else []), "-k", "20", *risk_mode,
               str(qrels), str(run)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    # the risk mode's runid holds commas ("indri (rel to. indri, rs=1+a, a=5)"): read the
    # last three fields of each line
    rows = [line.rsplit(",", 3)[1:] for line in out.splitlines()]
    assert rows[0] == ["topic", "ndcg@20", "err@20"]
    values = {r[0]: (float(r[1]), float(r[2])) for r in rows[1:]}
    return {t: v for t, v in values.items() if t != "amean"}, values["amean"]


def _ours(qrels, run, baseline, alpha, c):
    options = ["--baseline", baseline, "--alpha", alpha, "--format", "csv", "--decimals", 17,
               *(["--missing-topics", "zero"] if c else [])]
    code, out, err = run_cli("evaluate", qrels, run, *options, "--per-topic")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    per_topic = {r["topic"]: (float(r[f"ndcg@20_urisk_a{alpha:g}"]),
                              float(r[f"err@20_urisk_a{alpha:g}"]))
                 for r in rows if r["run"] == "run"}
    code, out, err = run_cli("evaluate", qrels, run, *options)
    assert code == 0, err
    summary = {r["run"]: r for r in csv.DictReader(io.StringIO(out))}["run"]
    mean = (float(summary[f"ndcg@20_urisk_a{alpha:g}"]),
            float(summary[f"err@20_urisk_a{alpha:g}"]))
    return per_topic, mean, err


@pytest.mark.parametrize("alpha", [0, 1, 5, 10])
def test_risk_mode_without_c_equals_gdeval_cell_by_cell(perturbed, alpha):
    """Without -c gdeval.pl averages the run's own judged topics and takes the baseline as 0
    on a topic it lacks: every printed cell equal (5 decimals), and the notes say so."""
    qrels, run, baseline = perturbed
    theirs, their_mean = _gdeval(qrels, run, baseline, alpha, c=False)
    ours, our_mean, notes = _ours(qrels, run, baseline, alpha, c=False)
    assert set(theirs) == set(ours) and not (RUN_LACKS | BOTH_LACK | {UNJUDGED}) & set(ours)
    assert BASELINE_LACKS <= set(ours)  # scored against a baseline of 0
    for topic, values in theirs.items():
        np.testing.assert_allclose(ours[topic], values, rtol=0, atol=5e-6 + 1e-12,
                                   err_msg=topic)
    np.testing.assert_allclose(our_mean, their_mean, rtol=0, atol=5e-6 + 1e-12)
    assert "run 'run' has no ranking for topic(s) 151, 152, 153 that other runs have" in notes
    assert "baseline 'base' has no ranking for topic(s) 160, 161 that runs have" in notes


@pytest.mark.parametrize("alpha", [1, 5])
def test_risk_mode_with_c_equals_gdeval_but_for_its_carried_over_baseline(perturbed, alpha):
    """-c (``--missing-topics zero``) scores every judged topic, a missing one 0. gdeval.pl
    errs on a topic missing from both runs: it keeps the previous missing topic's baseline
    value (its ``my ($baseNDCG, $baseERR)`` is declared outside the loop), which is not
    copied: there x_q is 0."""
    qrels, run, baseline = perturbed
    theirs, their_mean = _gdeval(qrels, run, baseline, alpha, c=True)
    ours, our_mean, _ = _ours(qrels, run, baseline, alpha, c=True)
    assert set(theirs) == set(ours) and len(ours) == 50
    for topic, values in theirs.items():
        if topic not in BOTH_LACK:
            np.testing.assert_allclose(ours[topic], values, rtol=0, atol=5e-6 + 1e-12,
                                       err_msg=topic)
    # the carried-over value: topic 153's baseline (the missing topic before 170)
    carried = _gdeval(qrels, baseline, None, None, c=False)[0]["153"]
    expected = [risk.risk_deltas(np.array([0.0]), np.array([b]), alpha)[0] for b in carried]
    np.testing.assert_allclose(theirs["170"], expected, rtol=0, atol=(2 + alpha) * 5e-6)
    assert ours["170"] == (0.0, 0.0) and theirs["170"] != (0.0, 0.0)
    gap = (np.array(theirs["170"]) - 0.0) / 50  # what the error moves gdeval.pl's mean by
    np.testing.assert_allclose(our_mean, np.array(their_mean) - gap, rtol=0, atol=2e-5)


def test_the_api_gives_gdeval_numbers_for_partial_runs(perturbed):
    """``summarise`` on the run files as a list (named by their stems, as on the command line),
    with ``alpha=`` as the command line spells it, warns of the rule and gives gdeval.pl's
    amean; per_topic_risk gives its rows; risk.urisk on the aligned values agrees."""
    qrels, run, baseline = perturbed
    theirs, their_mean = _gdeval(qrels, run, baseline, 5, c=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = trec.summarise(qrels, [run, baseline], baseline="base", alpha=5)
    assert any(issubclass(w.category, trec.PartialRunsWarning) for w in caught)
    frame = summary.frame().set_index("run")
    np.testing.assert_allclose(frame.loc["run", ["ndcg@20_urisk_a5", "err@20_urisk_a5"]],
                               their_mean, rtol=0, atol=5e-6 + 1e-12)
    assert np.isnan(frame.loc["run", "ndcg@20_georisk_a5"])
    rows = summary.per_topic_risk("err@20")
    for topic, (_, err) in theirs.items():
        assert rows.loc["run", topic] == pytest.approx(err, abs=5e-6 + 1e-12)
    topics = list(theirs)
    ours = {name: dict(zip(r.topics, r.values["err@20"])) for name, r in
            summary.results.items()}
    aligned_run = np.array([ours["run"][t] for t in topics])
    aligned_base = np.array([ours["base"].get(t, 0.0) for t in topics])
    assert risk.urisk(aligned_run, aligned_base, 5) == pytest.approx(their_mean[1],
                                                                    abs=5e-6 + 1e-12)


def test_every_other_convention_keeps_the_refusal(perturbed):
    qrels, run, baseline = perturbed
    code, _, err = run_cli("evaluate", qrels, run, "--baseline", baseline, "--alpha", 5,
                           "--convention", "trec_eval", "--measures", "ndcg@20")
    assert code == 2 and "has no ranking for topic(s)" in err
