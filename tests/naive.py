"""Naive per-query references written for the tests: plain loops over one query at a time.

They are deliberately independent of lgb_risk: their own sorting, their own formulas.
"""

import math


def ranked_labels(labels, scores, ties="stable"):
    """Labels in ranked order: score descending, ties by the convention."""
    idx = list(range(len(labels)))
    if ties == "pessimistic":
        key = lambda i: (-scores[i], labels[i], i)  # noqa: E731
    elif ties == "optimistic":
        key = lambda i: (-scores[i], -labels[i], i)  # noqa: E731
    else:
        key = lambda i: (-scores[i], i)  # noqa: E731
    return [int(labels[i]) for i in sorted(idx, key=key)]


def gain(label, label_gain=None):
    return (2 ** label - 1) if label_gain is None else label_gain[label]


def dcg(ranked, k, label_gain=None):
    total = 0.0
    for r, label in enumerate(ranked, start=1):
        if k is not None and r > k:
            break
        total += gain(label, label_gain) / math.log2(r + 1)
    return total


def ndcg(labels, scores, k, ties="stable", empty="zero", short="available", label_gain=None):
    if short == "zero" and k is not None and len(labels) < k:
        return 0.0
    ideal = dcg(sorted((int(v) for v in labels), reverse=True), k, label_gain)
    if ideal == 0:
        return {"zero": 0.0, "one": 1.0, "skip": float("nan")}[empty]
    return dcg(ranked_labels(labels, scores, ties), k, label_gain) / ideal


def err(labels, scores, k, max_label, ties="stable"):
    total, keep_going = 0.0, 1.0
    for r, label in enumerate(ranked_labels(labels, scores, ties), start=1):
        if k is not None and r > k:
            break
        stop = (2 ** label - 1) / 2 ** max_label
        total += keep_going * stop / r
        keep_going *= 1 - stop
    return total


def sum_precision(labels, scores, k, ties="stable"):
    total, hits = 0.0, 0
    for r, label in enumerate(ranked_labels(labels, scores, ties), start=1):
        if k is not None and r > k:
            break
        if label > 0:
            hits += 1
            total += hits / r
    return total


def average_precision(labels, scores, k, ties="stable", empty="zero"):
    n_relevant = sum(1 for v in labels if v > 0)
    if n_relevant == 0:
        return {"zero": 0.0, "one": 1.0, "skip": float("nan")}[empty]
    return sum_precision(labels, scores, k, ties) / n_relevant
