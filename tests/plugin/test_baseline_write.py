"""The baseline file is written atomically: a failed or killed write keeps the old file whole."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ragproject import BASELINE, FEWER_PLUGINS, WORSE, set_inputs

#: How many times test_baseline_kill_* kills a writing pytest.
KILLS = 50  # issue: 50 interrupted writes, the baseline always complete


def _temporary_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{BASELINE}."))


@pytest.fixture
def recorded(rag_pytester: pytest.Pytester) -> bytes:
    """A baseline of the dataset's run, then inputs that change it."""
    rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(
        passed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    return (rag_pytester.path / BASELINE).read_bytes()


@pytest.mark.parametrize("failing", ["replace", "fsync", "write"])
def test_failed_write_keeps_the_old_baseline(rag_pytester: pytest.Pytester, recorded: bytes,
                                             monkeypatch: pytest.MonkeyPatch,
                                             failing: str) -> None:
    target = rag_pytester.path / BASELINE

    def no_space(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if failing == "replace":
        real_replace = os.replace

        def replace(src: str, dst: str, **kwargs: object) -> None:
            if Path(dst) == target:
                no_space()
            real_replace(src, dst, **kwargs)

        monkeypatch.setattr(os, "replace", replace)
    elif failing == "fsync":
        monkeypatch.setattr(os, "fsync", no_space)
    else:
        real_fdopen = os.fdopen

        class Full:
            def __init__(self, stream: object) -> None:
                self.stream = stream

            def __enter__(self) -> Full:  # noqa: PYI034 - typing.Self needs Python 3.11
                return self

            def __exit__(self, *exc: object) -> None:
                self.stream.close()  # type: ignore[attr-defined]

            def write(self, text: str) -> None:
                self.stream.write(text[:10])  # type: ignore[attr-defined]
                self.stream.flush()  # type: ignore[attr-defined]
                no_space()

        monkeypatch.setattr(os, "fdopen", lambda *a, **k: Full(real_fdopen(*a, **k)))
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline")
    monkeypatch.undo()
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines([f"pytest-rag: could not write baseline {target}: No space "
                                 "left on device"])
    assert target.read_bytes() == recorded
    assert _temporary_files(rag_pytester.path) == []


def test_successful_write_leaves_no_temporary_file(rag_pytester: pytest.Pytester,
                                                   recorded: bytes) -> None:
    rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(
        passed=1)
    assert (rag_pytester.path / BASELINE).read_bytes() != recorded
    assert _temporary_files(rag_pytester.path) == []


def test_a_baseline_folder_that_cannot_be_made_is_a_note_not_a_traceback(
        rag_pytester: pytest.Pytester) -> None:
    (rag_pytester.path / "blocked").write_text("a file where the folder should be\n")
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline",
                                    "--rag-baseline", "blocked/rag-baseline.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    target = rag_pytester.path / "blocked" / "rag-baseline.json"
    result.stdout.fnmatch_lines([f"pytest-rag: could not write baseline {target}: *exists*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def _big_dataset(queries: int, shift: int) -> str:
    chunks = 97
    return json.dumps({
        "queries": [{"id": f"q{i}", "relevant": [f"c{i % chunks}", f"c{(i * 7) % chunks}"]}
                    for i in range(queries)],
        "run": {f"q{i}": {"retrieved_ids": [f"c{(i + shift * j) % chunks}" for j in range(5)],
                          "retrieval_latency_ms": float(i % 300 + shift)}
                for i in range(queries)},
    })


BIG_TEST = """
import pytest


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_retrieval(rag, k):
    rag.retrieval(k=k)
"""


def _kill_while_writing(process: subprocess.Popen[bytes], folder: Path, delay: float,
                       timeout: float) -> None:
    """Kill ``process`` ``delay`` seconds after its temporary baseline file appears."""
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if _temporary_files(folder):
            time.sleep(delay)
            break
        time.sleep(0.0005)
    process.send_signal(signal.SIGKILL)


@pytest.mark.slow
def test_baseline_kill_leaves_the_old_or_the_new_file(pytester: pytest.Pytester) -> None:
    """SIGKILL a writing ``pytest --rag-update-baseline`` at random moments, KILLS times.

    Every other kill comes at a random moment of the run; the others come a
    random few milliseconds after the temporary file appears, while the file
    is being written, synced or renamed.
    """
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = gold.json\n")
    pytester.makepyfile(test_big=BIG_TEST)
    gold = pytester.path / "gold.json"
    path = pytester.path / BASELINE
    # Tolerance 0: every changed ratio moves its reference (a change within the tolerance
    # would keep it, and the second run would leave the file as it was).
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *FEWER_PLUGINS, "-q",
               "--rag-update-baseline", "--rag-tolerance=0"]

    def run() -> float:
        start = time.perf_counter()
        subprocess.run(command, cwd=pytester.path, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start

    gold.write_text(_big_dataset(3000, shift=1))
    run()
    old = path.read_bytes()
    gold.write_text(_big_dataset(3000, shift=2))
    duration = run()
    new = path.read_bytes()
    assert old != new
    json.loads(new)
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    outcomes = []
    for attempt in range(KILLS):
        path.write_bytes(old)
        for leftover in _temporary_files(pytester.path):  # from an earlier kill
            (pytester.path / leftover).unlink()
        process = subprocess.Popen(command, cwd=pytester.path, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        if attempt % 2:
            delay = rng.uniform(0.0, 0.02)
            _kill_while_writing(process, pytester.path, delay, timeout=10 * duration)
        else:
            delay = rng.uniform(0.3, 1.05) * duration
            try:
                process.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        outcomes.append(process.returncode)
        content = path.read_bytes()
        assert content in (old, new), (
            f"kill {attempt + 1} (delay {delay:.3f}s, seed {seed}) left a file that is neither "
            f"the old nor the new baseline: {content[:200]!r}...")
        json.loads(content)
    assert all(code in (0, -signal.SIGKILL) for code in outcomes), outcomes
