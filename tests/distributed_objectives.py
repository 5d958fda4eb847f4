"""Objectives for the distributed tests, importable by the Dask workers: each records the
predictions and gradients of every call on its rank, or fails on purpose."""

import os
import signal
import time
from pathlib import Path

import numpy as np

from lgb_risk import TSARO, GeoRisk, TStarFARO


class Recording:
    """Saves (preds, grad, hess) of call n on rank r as ``record_dir/rank{r}_call{n}.npz``."""

    record_dir = None

    def gradients(self, preds, labels, group, weight=None):
        grad, hess = super().gradients(preds, labels, group, weight)
        self.calls = getattr(self, "calls", 0) + 1
        rank = self.shard.collective.rank
        np.savez(Path(self.record_dir) / f"rank{rank}_call{self.calls}.npz",
                 preds=np.asarray(preds), grad=grad, hess=hess)
        return grad, hess


class RecordingTSARO(Recording, TSARO):
    pass


class RecordingTStarFARO(Recording, TStarFARO):
    pass


class RecordingGeoRisk(Recording, GeoRisk):
    pass


class FailingTSARO(TSARO):
    """Rank ``fail_rank`` raises at its call ``fail_at`` (or its process is killed, ``die=True``,
    stopped, ``stop=True``, or it hangs, ``hang=True``)."""

    fail_rank, fail_at, die, stop, hang = 1, 3, False, False, False

    def gradients(self, preds, labels, group, weight=None):
        self.calls = getattr(self, "calls", 0) + 1
        if self.shard.collective.rank == self.fail_rank and self.calls == self.fail_at:
            if self.die:
                os.kill(os.getpid(), signal.SIGKILL)
            if self.stop:
                os.kill(os.getpid(), signal.SIGSTOP)
            if self.hang:
                time.sleep(600)
            raise RuntimeError("an objective failing on purpose")
        return super().gradients(preds, labels, group, weight)


class SlowTSARO(TSARO):
    """Each call takes at least ``pause`` seconds: a training that lasts, whatever the machine,
    long enough for the caller's checks (each second) to run."""

    pause = 0.05

    def gradients(self, preds, labels, group, weight=None):
        time.sleep(self.pause)
        return super().gradients(preds, labels, group, weight)
