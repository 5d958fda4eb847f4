"""The measure registry: names, cut-offs, ranked input and the UE-normalised measures, against
the metrics functions and naive formulas written here."""

import numpy as np
import pytest

from lgb_risk import measures, metrics
from tests.conftest import random_problem


def test_ranked_lists_equal_scored_lists():
    """scores=None (documents already in rank order) gives what sorting by score gives."""
    rng = np.random.default_rng(3)
    labels, scores, group = random_problem(rng, n_queries=40, max_docs=30)
    starts = np.concatenate(([0], np.cumsum(group)))
    order = np.concatenate([a + np.argsort(-scores[a:b], kind="stable")
                            for a, b in zip(starts[:-1], starts[1:])])
    for text in ("ndcg@5", "dcg@10", "err@3", "ap", "p@5", "recall@10", "rr", "rprec",
                 "dcg_ue2@10", "ap_ue1@5"):
        spec = measures.parse(text)
        scored = spec.compute(measures.Judged(labels, scores, group))
        ranked = spec.compute(measures.Judged(labels[order], None, group))
        np.testing.assert_allclose(ranked, scored, rtol=0, atol=1e-15, err_msg=text)


def test_ue_measures_follow_the_formulas():
    """DCG^UE and MSP^UE (V1, V2) from [UE] Eqs. 5-6 written out here, per query."""
    rng = np.random.default_rng(4)
    labels, scores, group = random_problem(rng, n_queries=30, max_docs=20, max_label=2)
    judged = measures.Judged(labels, scores, group)
    k = 5
    a = metrics.dcg(labels, scores, group, k)
    iub = metrics.ideal_dcg(labels, group, k)
    reb = metrics.expected_dcg(labels, group, k)
    sp = metrics.sum_precision(labels, scores, group, k)
    relevant = np.array([np.sum(labels[s:s + n] > 0) for s, n in
                         zip(np.concatenate(([0], np.cumsum(group)[:-1])), group)])
    sp_iub = np.minimum(relevant, k).astype(float)
    sp_reb = metrics.expected_sum_precision(labels, group, k)

    def v1(x, i, r):
        return np.array([0.0 if i_ == 0 or x_ + r_ == 0 else (x_ / i_) * x_ / (x_ + r_)
                         for x_, i_, r_ in zip(x, i, r)])

    def v2(x, i, r):
        out = []
        for x_, i_, r_ in zip(x, i, r):
            den = (i_ - r_) if x_ >= r_ else r_
            out.append(0.0 if den == 0 else (x_ - r_) / den)
        return np.array(out)

    for text, want in (("dcg_ue1@5", v1(a, iub, reb)), ("dcg_ue2@5", v2(a, iub, reb)),
                       ("ndcg_ue2@5", v2(a, iub, reb)), ("ap_ue1@5", v1(sp, sp_iub, sp_reb)),
                       ("ap_ue2@5", v2(sp, sp_iub, sp_reb))):
        np.testing.assert_allclose(measures.parse(text).compute(judged), want, rtol=0,
                                   atol=1e-12, err_msg=text)


@pytest.mark.parametrize("text, name, k", [("NDCG@10", "ndcg", 10), ("map", "ap", None),
                                           ("P@5", "p", 5), ("recip_rank", "rr", None),
                                           ("Rprec", "rprec", None), ("ap@100", "ap", 100)])
def test_names_and_aliases(text, name, k):
    spec = measures.parse(text)
    assert (spec.measure.name, spec.k, spec.text) == (name, k, text)


@pytest.mark.parametrize("text, message", [("ndcg@0", "cut-off must be >= 1"),
                                           ("rprec@10", "takes no cut-off"),
                                           ("ndcg@x", "unknown measure"), ("", "unknown")])
def test_bad_measures_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        measures.parse(text)


def test_choices_written_in_the_measure_follow_naive_formulas():
    """ir_measures' grammar NAME(key=value)@K: linear gains against a naive NDCG loop, a higher
    relevance level against P@k counted by hand; the label says what was computed."""
    from tests import naive
    from tests.conftest import split_queries

    rng = np.random.default_rng(5)
    labels, scores, group = random_problem(rng, n_queries=30, max_docs=20, max_label=3)
    judged = measures.Judged(labels, scores, group)
    linear = measures.parse("ndcg(label_gain=linear)@5")
    want = [naive.ndcg(y, s, 5, label_gain=list(range(4))) for y, s in
            split_queries(labels.tolist(), scores.tolist(), group.tolist())]
    np.testing.assert_allclose(linear.compute(judged), want, rtol=1e-12)
    assert linear.label == "NDCG(label_gain=linear)@5"
    strict = measures.parse("P(relevance_level=2)@3")
    want = [sum(label >= 2 for label in naive.ranked_labels(y, s)[:3]) / 3 for y, s in
            split_queries(labels.tolist(), scores.tolist(), group.tolist())]
    np.testing.assert_allclose(strict.compute(judged), want, rtol=1e-12)
    assert not np.allclose(strict.compute(judged), measures.parse("p@3").compute(judged))
    with pytest.raises(ValueError, match="sets relevance_level=2, but relevance_level=1 was"):
        strict.compute(judged, relevance_level=1)


@pytest.mark.parametrize("text, message", [
    ("ndcg(gain=linear)@10", "'gain' is not a convention keyword"),
    ("ndcg(label_gain=cubic)@10", r"label_gain must be one of \['exponential', 'linear'\]"),
    ("ndcg(label_gain)@10", "expected NAME\\(key=value, ...\\)@K"),
    ("p(relevance_level=0)@5", "relevance_level must be a whole number >= 1"),
    ("p(ties=average, ties=stable)@5", "ties is given twice"),
])
def test_bad_choices_in_a_measure_are_refused_naming_it(text, message):
    with pytest.raises(ValueError, match=message):
        measures.parse(text)
