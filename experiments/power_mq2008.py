"""How many queries MQ2008's risk claims need: the topic-set size of each comparison the MQ2008
readings discuss, from the committed runs' per-query values (their variance the pilot's).

Reads three finished runs (the commands in ``experiments/results/mq2008.md`` and
``mq2008_targets.md``):

- ``experiments/runs/mq2008`` (``mq2008.toml``): U-CRO's and T-SARO's cut in losses to BM25,
  each query's loss max(0, M_BM25 − M) in NDCG@10 against plain LambdaMART's (paired t-test,
  the report's ``bm25_risk_p_vs_lambdamart``); GeoRisk at α = 5 against the learned baselines,
  each learner against plain LambdaMART (the report's paired randomisation test).
- ``experiments/runs/mq2008_targets_ndcg`` and ``..._err``: the ERR@20 target's gain in ERR@20
  over the NDCG@10 target, learner by learner (paired t-test).

For the t-tests: :func:`lgb_risk.power.topic_set_answers` at power 0.8 and level 0.05, alone
and Bonferroni-corrected over the m comparisons the report corrects over (Holm's strictest step,
so enough under Holm): the exact normal-theory answer (``needed``), its 95% percentile-bootstrap
interval over the 784 queries resampled 2,000 times (``needed_low``/``_high``; not determined,
NaN with an unbounded upper end, where the resampled difference changes sign in more than 2.5%
of resamples: ``sign_flips``), and the answer of the t-test applied to queries drawn from the
pilot's own differences (``needed_resampled``, 2,000 draws; its interval from 200 bootstrap
pilots of 200 draws each). ``mc_power_at_needed`` and ``mc_power_at_resampled`` check both
answers with a Monte Carlo of this script's own: scipy's paired t-test on 4,000 fresh sets of
that many queries drawn from the pilot (standard error about 0.006 at 0.8).

For GeoRisk's randomisation test the report gives its detectable difference at n, (z_{1−level/2}
+ z_power) times the null distribution's sd; that sd falls as 1/√n, so n · (detectable /
observed)² queries detect the observed difference (the normal approximation the report's
detectable difference already is; :meth:`lgb_risk.significance.PairedTest.queries_needed`). Its
interval resamples the queries and recomputes the GeoRisk difference (the null distribution's
sd held at the pilot's).

Writes ``power_mq2008.csv`` (``--out``); the reading, ``power_mq2008.md``, is written by hand.

    python experiments/power_mq2008.py [--out experiments/results/power_mq2008.csv]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from lgb_risk import significance
from lgb_risk.experiment import RunFolder
from lgb_risk.experiment.config import load_config
from lgb_risk.experiment.report import averaged_baselines, collect_results, results_table
from lgb_risk.objectives import OBJECTIVES
from lgb_risk.power import randomisation_test_answers, topic_set_answers
from lgb_risk.risk import georisk_against

HERE = Path(__file__).resolve().parent
POWER, LEVEL = 0.8, 0.05
LAMBDAMART = ("LambdaMART", 0.0)


#: The pilot resamples of the intervals, the draws of the resampled answer's interval, and the
#: fresh draws of the Monte Carlo check.
PILOT_RESAMPLES, DRAWS, MC_DRAWS = 2000, 200, 4000


def monte_carlo_power(d: np.ndarray, n: float, level: float = LEVEL, seed: int = 2024) -> float:
    """scipy's paired t-test (of the differences against 0) on ``MC_DRAWS`` sets of ``n``
    queries drawn with replacement from ``d``: the share that rejects at ``level``."""
    if not np.isfinite(n):
        return np.nan
    rng = np.random.default_rng(seed)
    sets = d[rng.integers(0, d.size, (MC_DRAWS, int(n)))]
    with np.errstate(all="ignore"):
        p = stats.ttest_1samp(sets, 0.0, axis=1).pvalue
    return float(np.mean(np.nan_to_num(p, nan=1.0) < level))


def _t_rows(claim: str, differences: dict, comparisons: int) -> list[dict]:
    """One row per compared system: the per-query differences' mean and sd, the detectable
    difference at n, and the queries needed for the observed mean with their intervals, the
    resampled answer and a Monte Carlo power at each, alone and corrected."""
    rows = []
    for name, d in differences.items():
        mean, sd, n = float(d.mean()), float(d.std(ddof=1)), int(d.size)
        alone = topic_set_answers(d, power=POWER, level=LEVEL, pilot_resamples=PILOT_RESAMPLES,
                                  simulate=True, draws=DRAWS)
        corrected = topic_set_answers(d, power=POWER, level=LEVEL, comparisons=comparisons,
                                      pilot_resamples=PILOT_RESAMPLES)
        row = {"claim": claim, "system": name, "test": "paired t-test", "queries": n,
               "observed": mean, "sd": sd, "p": float(stats.ttest_1samp(d, 0.0).pvalue),
               "sign_flips": alone["sign_flips"],
               "detectable": alone["detectable"],
               "detectable_corrected": significance.detectable_difference(
                   sd, n, power=POWER, level=LEVEL, comparisons=comparisons)}
        for key in ("needed", "needed_low", "needed_high", "needed_resampled",
                    "needed_resampled_low", "needed_resampled_high"):
            row[key] = alone[key]
        row["mc_power_at_needed"] = monte_carlo_power(d, alone["needed"])
        row["mc_power_at_resampled"] = monte_carlo_power(d, alone["needed_resampled"])
        for key in ("needed", "needed_low", "needed_high", "needed_resampled"):
            row[key.replace("needed", "needed_corrected")] = corrected[key]
        row["comparisons"] = comparisons
        rows.append(row)
    return rows


def _label(learner: str, alpha: float) -> str:
    return f"{OBJECTIVES[learner].paper_name} α={alpha:g}"


def losses_to_bm25(out: Path) -> list[dict]:
    """U-CRO and T-SARO against plain LambdaMART: each query's loss to BM25 (NDCG@10)."""
    config = load_config(HERE / "mq2008.toml")
    results = collect_results(config, out)
    feature, _ = averaged_baselines(config, out, list(results.index))
    loss = {key: np.maximum(0.0, feature - results[key].to_numpy()) for key in results.columns}
    compared = [key for key in results.columns if key != LAMBDAMART]
    differences = {_label(*key): loss[key] - loss[LAMBDAMART] for key in compared
                   if key[0] in ("UCRO", "TSARO")}
    return _t_rows("loss to BM25 (NDCG@10), against LambdaMART", differences, len(compared))


def georisk_against_learned(out: Path) -> list[dict]:
    """Every learner's GeoRisk at the report's α against the learned baselines, against plain
    LambdaMART: from the report's own randomisation tests, with the interval of the queries
    needed from the queries resampled (:func:`lgb_risk.power.randomisation_test_answers`)."""
    config = load_config(HERE / "mq2008.toml")
    table = results_table(config, out)
    results = collect_results(config, out)
    _, learned = averaged_baselines(config, out, list(results.index))
    alpha = config.report.alpha
    n = len(results)
    reference = float(table.loc[table["learner"] == "LambdaMART", "georisk"].iloc[0])
    reference_values = results[LAMBDAMART].to_numpy()
    m = len(table) - 1
    z = stats.norm.ppf(1 - LEVEL / 2) + stats.norm.ppf(POWER)
    rows = []
    for key in results.columns:
        if key == LAMBDAMART:
            continue
        row = table[(table["learner"] == OBJECTIVES[key[0]].paper_name)
                    & (table["alpha"] == key[1])].iloc[0]
        # The report's test again, from its columns: its null distribution's sd is the
        # detectable difference over z, and PairedTest answers by the normal approximation.
        test = significance.PairedTest(float(row["georisk"]) - reference,
                                       float(row["georisk_p_vs_lambdamart"]),
                                       float(row["georisk_detectable"]), n,
                                       spread=float(row["georisk_detectable"]) / z * np.sqrt(n),
                                       test="randomisation")
        both = np.vstack([results[key].to_numpy(), reference_values])

        def difference_on(queries, both=both):
            return float(np.subtract(*georisk_against(both[:, queries], learned[:, queries],
                                                      alpha)))

        alone, corrected = (randomisation_test_answers(difference_on, test, power=POWER,
                                                       level=LEVEL, comparisons=comparisons,
                                                       pilot_resamples=PILOT_RESAMPLES)
                            for comparisons in (1, m))
        rows.append({"claim": "GeoRisk at α = 5 against the learned baselines, against "
                              "LambdaMART", "system": _label(*key),
                     "test": "paired randomisation (normal approximation)", "queries": n,
                     "observed": test.difference, "sd": np.nan,  # not a per-query mean
                     "p": test.p_value, "sign_flips": alone["sign_flips"],
                     "detectable": test.detectable,
                     "detectable_corrected": test.detectable * (
                         stats.norm.ppf(1 - LEVEL / (2 * m)) + stats.norm.ppf(POWER)) / z,
                     **{key: alone[key] for key in ("needed", "needed_low", "needed_high")},
                     **{key.replace("needed", "needed_corrected"): corrected[key]
                        for key in ("needed", "needed_low", "needed_high")},
                     "comparisons": m})
    return rows


def err_target_gain(ndcg_out: Path, err_out: Path) -> list[dict]:
    """Each learner trained toward ERR@20 against the same learner toward NDCG@10, in ERR@20."""
    runs = {}
    for name, toml, out in (("ndcg", "mq2008_targets_ndcg.toml", ndcg_out),
                            ("err", "mq2008_targets_err.toml", err_out)):
        config = load_config(HERE / toml)
        err = next(m for m in RunFolder(out).measures(config).reported
                   if m.measure.name == "err")
        runs[name] = collect_results(config, out, err)
    queries = runs["ndcg"].index.intersection(runs["err"].index)
    differences = {_label(*key): runs["err"].loc[queries, key].to_numpy()
                   - runs["ndcg"].loc[queries, key].to_numpy() for key in runs["ndcg"].columns}
    rows = _t_rows("ERR@20: the ERR@20 target against the NDCG@10 target", differences,
                   len(differences))
    for row, d in zip(rows, differences.values()):
        for_gain = topic_set_answers(d, difference=0.01, power=POWER, level=LEVEL,
                                     pilot_resamples=PILOT_RESAMPLES)
        for key in ("", "_low", "_high"):
            row[f"needed_for_0.01{key}"] = for_gain[f"needed_for_difference{key}"]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default=str(HERE / "runs"), help="the runs' parent folder")
    parser.add_argument("--out", default=str(HERE / "results" / "power_mq2008.csv"))
    args = parser.parse_args()
    runs = Path(args.runs)
    rows = (losses_to_bm25(runs / "mq2008") + georisk_against_learned(runs / "mq2008")
            + err_target_gain(runs / "mq2008_targets_ndcg", runs / "mq2008_targets_err"))
    table = pd.DataFrame(rows)
    for column in table.columns:  # whole numbers of queries, every digit (inf: unbounded)
        if column.startswith("needed") and not column.endswith("_high"):
            table[column] = table[column].astype("Int64")
    table.to_csv(args.out, index=False, float_format="%.6g")
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(table.drop(columns=["claim", "test"]).to_string(index=False))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
