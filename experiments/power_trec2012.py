"""How many topics the TREC 2012 Web track risk claims need: ``lgb_risk.power.power_table`` for
the eight Indri runs against ``rm_cata-filtered`` (indriCASP), NDCG@20 and ERR@20 under
gdeval.pl's conventions, at α = 0 (the mean difference) and α = 5 (URisk, whose t-test is
TRisk), Holm-corrected over the seven runs compared (Bonferroni's level 0.05 / 7, Holm's
strictest step), with every interval and the resampled answer's interval (``simulate``), and
the topics needed to detect a difference of 0.02.

Each answer is checked by a Monte Carlo of this script's own: scipy's paired t-test of the
x_q against 0 on 4,000 fresh sets of that many topics drawn with replacement from the 50,
at the corrected level (``mc_power_at_needed``, ``mc_power_at_resampled``; standard error
about 0.006 at power 0.8).

Reads ``../shared/data/trec2012`` (``--data``); writes ``power_trec2012.csv`` (``--out``). The
reading is in ``trec2012_risk.md``.

    python experiments/power_trec2012.py [--out experiments/results/power_trec2012.csv]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from power_mq2008 import monte_carlo_power  # the same check, beside this script

from lgb_risk import risk, trec
from lgb_risk.data import run_name

HERE = Path(__file__).resolve().parent
BASELINE = "rm_cata-filtered"
MEASURES = ("ndcg@20", "err@20")
ALPHAS = (0.0, 5.0)
#: A difference of interest in the measure's units (of x_q at each α): 0.02 NDCG@20 or ERR@20.
DIFFERENCE = 0.02


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(HERE.parent.parent / "shared" / "data"
                                              / "trec2012"))
    parser.add_argument("--out", default=str(HERE / "results" / "power_trec2012.csv"))
    args = parser.parse_args()
    data = Path(args.data)
    runs = sorted((data / "runs").glob("*.txt"))
    summary = trec.summarise(data / "qrels.adhoc.txt", {run_name(r): r for r in runs},
                             list(MEASURES), baseline=BASELINE, alphas=list(ALPHAS),
                             correction="holm")
    tables = []
    for measure in MEASURES:
        table = summary.power(measure, difference=DIFFERENCE, simulate=True)
        per_topic = summary.per_topic(measure)
        level = 0.05 / (len(runs) - 1)
        for column, answer in (("mc_power_at_needed", "needed"),
                               ("mc_power_at_resampled", "needed_resampled")):
            table[column] = [
                monte_carlo_power(risk.risk_deltas(per_topic.loc[row.run].to_numpy(),
                                                   per_topic.loc[BASELINE].to_numpy(),
                                                   row.alpha),
                                  np.nan if pd.isna(getattr(row, answer)) else
                                  float(getattr(row, answer)), level)
                for row in table.itertuples()]
        tables.append(table.assign(measure=measure))
    out = pd.concat(tables, ignore_index=True)
    out = out[["measure", *[c for c in out.columns if c != "measure"]]]
    out.to_csv(args.out, index=False, float_format="%.6g")
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(out.drop(columns=["wins", "losses"], errors="ignore").to_string(index=False))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
