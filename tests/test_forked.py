"""Work shared with forked copies of this process (lgb_risk._runtime.forked), as ``lgb-risk evaluate
--jobs`` uses it: results in order, failures raised here, no child left behind."""

import os
import signal
import time

import pytest

from lgb_risk._runtime import forked

pytestmark = pytest.mark.skipif(not forked.can_fork(), reason="needs os.fork (POSIX)")


def _pid_and_sum(share):
    return os.getpid(), sum(share)


def test_results_in_order_and_the_first_share_computed_here():
    results = forked.map_in_forks(_pid_and_sum, [[1, 2], [3], [4, 5, 6]])
    assert [total for _, total in results] == [3, 3, 15]
    pids = [pid for pid, _ in results]
    assert pids[0] == os.getpid() and len(set(pids)) == 3


def test_one_share_or_no_fork_computes_here(monkeypatch):
    assert forked.map_in_forks(_pid_and_sum, [[7]]) == [(os.getpid(), 7)]
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    assert forked.map_in_forks(_pid_and_sum, [[1], [2]]) == [(os.getpid(), 1),
                                                               (os.getpid(), 2)]


def _fail_in_child(share):
    if share == "bad":
        raise ValueError("run.txt:3: SCORE must be a finite number, got 'x'")
    return share


def test_an_exception_in_a_child_is_raised_here_with_its_message():
    with pytest.raises(ValueError, match=r"run.txt:3: SCORE must be a finite number"):
        forked.map_in_forks(_fail_in_child, ["good", "bad"])


class _Unpicklable(Exception):
    def __reduce__(self):
        raise TypeError("cannot pickle")


def _raise_unpicklable(share):
    raise _Unpicklable(f"share {share} failed")


def test_an_exception_that_does_not_pickle_keeps_its_type_name_and_message():
    with pytest.raises(RuntimeError, match=r"_Unpicklable: share 2 failed"):
        forked.map_in_forks(lambda share: share if share == 1 else _raise_unpicklable(share),
                             [1, 2])


def _die(share):
    if share == "exit":
        os._exit(3)
    if share == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    return share


@pytest.mark.parametrize("share, how", [("exit", r"exit status 3"),
                                        ("kill", r"killed by signal 9")])
def test_a_child_that_ends_without_a_result_says_how(share, how):
    with pytest.raises(ChildProcessError, match=rf"working on '{share}' ended without a "
                                                 rf"result \({how}\)"):
        forked.map_in_forks(_die, ["here", share])


def test_a_failure_here_kills_and_reaps_the_children(tmp_path):
    """This process's share fails while a child is still at work: the call returns at once,
    the child is gone (killed and reaped, not a zombie)."""
    pid_file = tmp_path / "child.pid"

    def work(share):
        if share == "child":
            pid_file.write_text(str(os.getpid()))
            time.sleep(60)
            return share
        while not pid_file.exists() or not pid_file.read_text():
            time.sleep(0.01)
        raise KeyError("this process failed")

    start = time.monotonic()
    with pytest.raises(KeyError, match="this process failed"):
        forked.map_in_forks(work, ["here", "child"])
    assert time.monotonic() - start < 30
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # reaped: no such process
