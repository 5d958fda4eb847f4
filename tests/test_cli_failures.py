"""Every failure path of the command line ends in a message of a few lines and a non-zero exit
status, never a Python traceback unless --debug (or LGB_RISK_DEBUG=1) asks for one: each case
runs the real entry point (``lgb_risk.cli.console_main``) in a child process. Faults the machine
cannot be made to have on demand (a full disk, a read-only file system, a unit that crashes)
are injected into that child by patching one function before the entry point runs."""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import wait_for_a_unit_file
from tests.test_experiment import SMALL

#: Every test here starts processes, clusters or tools: outside the quick loop.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n2 0 d4 0\n"
RUN = "1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n2 Q0 d4 1 2.0 r\n2 Q0 d3 2 1.0 r\n"


def _restore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _lgb_risk(*args, cwd, fault="", env=None, wait=True):
    """``lgb-risk ARGS`` through console_main, after the Python statements ``fault``."""
    code = textwrap.dedent(fault) + "\nfrom lgb_risk.cli import console_main\nconsole_main()\n"
    process = subprocess.Popen(
        [sys.executable, "-c", code, *map(str, args)], cwd=cwd, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=_restore_sigint,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    if not wait:
        return process
    out, err = process.communicate(timeout=600)
    return process.returncode, out, err


def _one_message(code, err, expected_code, *pieces):
    """The command failed with ``expected_code`` and one message (after its progress lines, if
    any) of at most three lines, holding each of ``pieces``; no traceback anywhere."""
    assert code == expected_code, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.startswith("lgb-risk ")]
    assert len(starts) == 1 and len(lines) - starts[0] <= 3, err
    message = "\n".join(lines[starts[0]:])
    for piece in pieces:
        assert piece in message, err


@pytest.fixture()
def collection(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run1").write_text(RUN)
    return tmp_path


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_missing_file(tmp_path):
    code, _, err = _lgb_risk("evaluate", tmp_path / "nowhere", tmp_path / "run", cwd=tmp_path)
    _one_message(code, err, 2, "lgb-risk evaluate: error: no such file:", "nowhere")


def test_a_bad_toml_file(tmp_path):
    (tmp_path / "bad.toml").write_text("[split\nfolds = 3\n")
    code, _, err = _lgb_risk("run", tmp_path / "bad.toml", "--out", tmp_path / "out",
                             cwd=tmp_path)
    _one_message(code, err, 2, "lgb-risk run: error:", "bad.toml")
    assert not (tmp_path / "out").exists()


def test_an_unreachable_scheduler_is_refused_before_any_work(tmp_path):
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{_free_port()}"
    start = time.monotonic()
    code, _, err = _lgb_risk("run", "--scheduler", address, "--out", tmp_path / "out",
                             cwd=tmp_path)
    _one_message(code, err, 2, f"no Dask scheduler answers at {address}")
    assert time.monotonic() - start < 30
    assert not (tmp_path / "out").exists()  # nothing written


def test_an_output_onto_a_full_disk_keeps_the_previous_file(collection):
    (collection / "out.csv").write_text("the previous results\n")
    fault = """
        import errno, os
        import lgb_risk._files.atomic as io
        def full(path, mode="w", *args, **kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        io.Path.write_text = lambda self, *a, **k: full(self)
    """
    code, _, err = _lgb_risk("evaluate", "qrels", "run1", "--format", "csv", "-o", "out.csv",
                             cwd=collection, fault=fault)
    _one_message(code, err, 1, "cannot write out.csv: No space left on device (nothing was "
                               "written; the file there is kept as it was)")
    assert (collection / "out.csv").read_text() == "the previous results\n"
    assert [p.name for p in collection.iterdir() if p.name.startswith(".")] == []


def test_a_run_onto_a_full_disk_says_how_to_resume(tmp_path):
    (tmp_path / "small.toml").write_text(SMALL)
    fault = """
        import errno, os
        import lgb_risk._files.atomic as io
        replace = os.replace
        def full(source, target):
            if "units" in str(target):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            replace(source, target)
        io.os.replace = full
    """
    code, _, err = _lgb_risk("run", "--jobs", "1", "small.toml", "--out", "out", cwd=tmp_path,
                             fault=fault)
    _one_message(code, err, 1, "No space left on device (nothing was written)",
                 "run the same command again to resume")
    assert "units" in err


def test_an_output_into_a_read_only_folder_names_the_users_path(collection):
    fault = """
        import errno, os
        import lgb_risk._files.atomic as io
        def read_only(*args, **kwargs):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        io.tempfile.mkstemp = read_only
    """
    code, _, err = _lgb_risk("evaluate", "qrels", "run1", "-o", "out.txt", cwd=collection,
                             fault=fault)
    _one_message(code, err, 1, "cannot write out.txt: Read-only file system (nothing was "
                               "written)")
    assert ".lgb_risk.tmp" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_an_output_into_a_folder_without_write_permission(collection):
    folder = collection / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code, _, err = _lgb_risk("evaluate", "qrels", "run1", "-o", folder / "out.txt",
                                 cwd=collection)
    finally:
        folder.chmod(0o755)
    _one_message(code, err, 1, f"cannot write {folder / 'out.txt'}: Permission denied")


def test_an_out_folder_that_is_a_dangling_symbolic_link(tmp_path):
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    code, _, err = _lgb_risk("run", "--out", tmp_path / "link", cwd=tmp_path)
    _one_message(code, err, 2, f"--out {tmp_path / 'link'} is a symbolic link to "
                               f"{tmp_path / 'gone'}, which does not exist")


def test_a_failing_unit_is_one_line_and_debug_shows_the_traceback(tmp_path):
    (tmp_path / "small.toml").write_text(SMALL)
    fault = """
        import lgb_risk.experiment.runner as runner
        def crash(*args, **kwargs):
            raise RuntimeError("the unit crashed")
        runner.compute_unit = crash
    """
    code, _, err = _lgb_risk("run", "--jobs", "1", "small.toml", "--out", "out", cwd=tmp_path,
                             fault=fault)
    _one_message(code, err, 1, "lgb-risk run: error: RuntimeError: the unit crashed (what is "
                               "done is kept: run the same command again to resume) (--debug "
                               "shows the traceback)")
    code, _, err = _lgb_risk("--debug", "run", "--jobs", "1", "small.toml", "--out", "out",
                             cwd=tmp_path, fault=fault)
    assert code == 1 and "Traceback" in err and "RuntimeError: the unit crashed" in err
    code, _, err = _lgb_risk("run", "--jobs", "1", "small.toml", "--out", "out", cwd=tmp_path,
                             fault=fault, env={"LGB_RISK_DEBUG": "1"})
    assert code == 1 and "Traceback" in err


def test_ctrl_c_is_one_line(tmp_path):
    (tmp_path / "small.toml").write_text(SMALL)
    process = _lgb_risk("run", "--jobs", "1", "small.toml", "--out", "out", cwd=tmp_path,
                        wait=False)
    units = tmp_path / "out" / "units"
    wait_for_a_unit_file(units, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    _one_message(process.returncode, err, 130, "lgb-risk run: interrupted (what is done is "
                                               "kept: run the same command again to resume)")


def test_ctrl_c_inside_a_compiled_kernel_is_an_interruption(collection):
    """Ctrl-C landing inside a numba kernel comes back as ``SystemError(CPUDispatcher(...)
    returned a result with an exception set)`` caused by the KeyboardInterrupt (seen once in
    the test above): the same one line and status 130 as any other Ctrl-C."""
    fault = """
        import lgb_risk.trec

        def kernel_interrupted(*args, **kwargs):
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as stop:
                raise SystemError("CPUDispatcher(<function _cached_kernel>) returned a result "
                                  "with an exception set") from stop

        lgb_risk.trec.evaluate_files = kernel_interrupted
    """
    code, _, err = _lgb_risk("evaluate", "qrels", "run1", cwd=collection, fault=fault)
    _one_message(code, err, 130, "lgb-risk evaluate: interrupted")
    assert "SystemError" not in err


@pytest.mark.skipif(not hasattr(os, "fork") or not os.path.isdir("/proc"),
                    reason="forks, and looks processes up by pid")
def test_ctrl_c_while_forked_processes_evaluate_is_one_line_and_leaves_none(collection):
    """Ctrl-C reaches the whole foreground process group, this process and its forked copies
    (``--jobs 2``), while each is reading a run: one line, status 130, and no copy left."""
    (collection / "run2").write_text(RUN)
    fault = f"""
        import os, time
        import lgb_risk.trec

        def slow_reader(path):
            open(os.path.join({str(collection)!r}, f"reading.{{os.getpid()}}"), "w").close()
            time.sleep(60)

        lgb_risk.trec.read_run_columns = slow_reader
    """
    code = textwrap.dedent(fault) + "\nfrom lgb_risk.cli import console_main\nconsole_main()\n"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "evaluate", "qrels", "run1", "run2", "--jobs", "2"],
        cwd=collection, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_restore_sigint, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while len(list(collection.glob("reading.*"))) < 2 and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    readers = {int(path.suffix[1:]) for path in collection.glob("reading.*")}
    assert len(readers) == 2 and process.pid in readers
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    _one_message(process.returncode, err, 130, "lgb-risk evaluate: interrupted")
    time.sleep(0.2)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in readers - {process.pid})


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="kills processes by pid")
def test_a_scheduler_without_workers_then_lost_mid_run(tmp_path):
    pytest.importorskip("distributed")
    (tmp_path / "small.toml").write_text(SMALL)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                                  "--port", str(port), "--dashboard-address", ":0"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = None
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        code, _, err = _lgb_risk("run", "small.toml", "--scheduler", address, "--out", "out",
                                 cwd=tmp_path)
        _one_message(code, err, 2, f"the Dask cluster at {address} has no workers",
                     "--wait-for-workers SECONDS")
        assert not (tmp_path / "out").exists()
        code, _, err = _lgb_risk("run", "small.toml", "--scheduler", address, "--out", "out",
                                 "--wait-for-workers", "1", cwd=tmp_path)
        _one_message(code, err, 2, "still has no workers after waiting 1 s")

        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                   "--nthreads", "1", "--nworkers", "1", "--no-nanny"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        run = _lgb_risk("run", "small.toml", "--scheduler", address, "--out", "out",
                        "--wait-for-workers", "60", cwd=tmp_path, wait=False)
        units = tmp_path / "out" / "units"
        wait_for_a_unit_file(units, run)
        scheduler.kill()
        _, err = run.communicate(timeout=120)
        assert run.returncode == 1, err
        assert "Traceback" not in err, err
        assert "the Dask cluster was lost" in err and "run the same command again" in err
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.kill()
                process.wait()
