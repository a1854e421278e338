"""What every workload shares: sides, agreement, timing, peak memory, the table.

A workload module (``bench_*.py``) has a ``NAME``, ``make(scale)`` that builds
its inputs deterministically (fixed seeds), and ``sides()``: pytest-rag first,
then its peers.  Every side is a function of the same Python inputs that
returns its metrics as ``{shared name: per-query float array}``, so two sides
agree when their arrays match to :data:`TOLERANCE` on the names they share.

Timing runs every side in this process on the same inputs: one warm-up call
(its result is the one checked for agreement, and it pays numba's JIT compile
and the first hashing of the id strings), then the best of ``repeat`` calls,
the sides interleaved so that a burst of noise from a shared machine does not
land on one side only.  ``gc.collect()`` runs before every call; the garbage
collector stays on, as in a user's test run.

Peak memory is measured in a fresh process per side (``run.py --memory-of``):
the inputs are built, the side is warmed up on a tiny input, and the peak
resident set of one full call is read from ``/proc/self/status`` (``VmHWM``,
reset through ``/proc/self/clear_refs``) minus the resident set before it.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Goal", "Row", "Side", "compare", "installed", "measure_memory", "peak_extra_mib",
           "time_sides"]

HERE = Path(__file__).resolve().parent
#: Two sides agree on a metric when every per-query value is this close.
TOLERANCE = 1e-9

Metrics = dict[str, np.ndarray]


@dataclass(frozen=True)
class Goal:
    """The issue's goal for one comparison: ``pytest-rag time / peer time <= max_ratio``."""

    max_ratio: float
    text: str
    #: Judged against the fastest installed peer of the workload, not each one.
    fastest_peer: bool = False


@dataclass(frozen=True)
class Side:
    """One implementation of a workload.

    ``run(inputs)`` is what is timed: input conversion, the computation, and
    nothing after it; ``extract(result, inputs)`` (not timed) turns its result
    into ``{shared name: per-query array}`` in the inputs' query order.
    ``requires`` names the modules it imports (a missing one makes the side
    "not installed"); ``shared`` the metrics compared with pytest-rag, with
    the reason any other metric is not compared in ``not_shared``.
    """

    name: str
    run: Callable[[Any], Any]
    extract: Callable[[Any, Any], Metrics]
    requires: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    not_shared: str = ""
    goal: Goal | None = None
    #: Another way to call pytest-rag (shown as its own rows; no goal).
    rag: bool = False
    #: A side compared with one other side only, the one of this name (a
    #: pytest-rag variant and a peer timed in the same configuration, such as
    #: both at one thread); ``""``: compared with every side without a pair.
    pair: str = ""


@dataclass
class Row:
    """One line of the table: pytest-rag against one peer on one workload."""

    workload: str
    size: str
    rag_seconds: float | None
    peer: str
    peer_seconds: float | None = None
    goal: str = ""
    status: str = ""
    agreement: str = ""
    rag_mib: float | None = None
    peer_mib: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if self.rag_seconds is None or not self.peer_seconds:
            return None
        return self.rag_seconds / self.peer_seconds


def installed(side: Side) -> list[str]:
    """The modules ``side`` needs that cannot be imported here."""
    return [name for name in side.requires if not _importable(name)]


def _importable(name: str) -> bool:
    if name in sys.modules:  # also catches a module blocked with sys.modules[name] = None
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def compare(mine: Metrics, theirs: Metrics, names: Sequence[str]) -> tuple[bool, str]:
    """Whether two sides agree on ``names``, and a short text saying so."""
    bad = []
    for name in names:
        a = np.asarray(mine[name], dtype=np.float64)
        b = np.asarray(theirs[name], dtype=np.float64)
        if a.shape != b.shape:
            bad.append(f"{name} (shapes {a.shape} vs {b.shape})")
            continue
        same_nan = np.array_equal(np.isnan(a), np.isnan(b))
        diff = np.abs(np.nan_to_num(a) - np.nan_to_num(b))
        worst = float(diff.max()) if diff.size else 0.0
        if not same_nan or worst > TOLERANCE:
            bad.append(f"{name} (max |diff| {worst:.3g}{'' if same_nan else ', None differs'})")
    if bad:
        return False, "MISMATCH: " + ", ".join(bad)
    return True, f"agree ({', '.join(names)})"


def _call(side: Side, inputs: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = side.run(inputs)
    return time.perf_counter() - start, result


def time_sides(sides: Sequence[Side], inputs: Any, repeat: int
               ) -> tuple[dict[str, float], dict[str, Metrics]]:
    """Warm-up result and best-of-``repeat`` seconds of every side, interleaved."""
    results: dict[str, Metrics] = {}
    for side in sides:
        results[side.name] = side.extract(_call(side, inputs)[1], inputs)
    best = {side.name: float("inf") for side in sides}
    for _ in range(repeat):
        for side in sides:
            seconds, result = _call(side, inputs)
            del result
            best[side.name] = min(best[side.name], seconds)
    return best, results


# -- peak memory ---------------------------------------------------------------
def _status(key: str) -> int:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``), in bytes."""
    with open("/proc/self/status", encoding="ascii") as file:
        for line in file:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def peak_extra_mib(call: Callable[[], object]) -> float | None:
    """Peak resident memory of ``call()`` above the resident set before it, in MiB.

    ``None`` where the peak cannot be reset (not Linux, or ``clear_refs`` not
    writable).
    """
    gc.collect()
    try:
        before = _status("VmRSS")
        with open("/proc/self/clear_refs", "w", encoding="ascii") as file:
            file.write("5")  # resets VmHWM to the current resident set
    except (OSError, KeyError):
        return None
    call()
    return (_status("VmHWM") - before) / 2**20


def measure_memory(workload: str, side: str, scale: float, extra: Sequence[str] = ()
                   ) -> float | None:
    """Peak extra MiB of one side's full call, in a fresh process; ``None`` if unknown."""
    command = [sys.executable, str(HERE / "run.py"), "--memory-of", workload, side,
               "--scale", repr(scale), *extra]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(),
                          check=False)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            value = json.loads(line).get("peak_mib")
            return None if value is None else float(value)
    sys.stderr.write(f"memory of {workload}/{side} failed:\n{done.stderr[-2000:]}\n")
    return None


def metrics_of(values: Mapping[str, Any], names: Mapping[str, str]) -> Metrics:
    """``{shared name: array}`` from ``{their name: array-like}``."""
    return {shared: np.asarray(values[theirs], dtype=np.float64)
            for shared, theirs in names.items()}
