"""Benchmarks of pytest-rag against its peers: ``python tests/benchmarks/run.py [--quick]``.

Every workload is built deterministically, every peer is checked to agree
with pytest-rag on the metrics they define alike, and only then are the sides
timed (see :mod:`bench_harness`).  One table is printed: workload, size,
pytest-rag's time, the peer and its time, the ratio (pytest-rag / peer, lower
is better), the issue's goal, whether it is met, the agreement, and the peak
memory of each side.  A peer that is not installed is a row saying so.

``--quick`` runs every workload at 1/10 of its size, one timed call per side
after the warm-up and without the memory processes (``--repeat`` and
``--memory`` change that); ``--scale`` sets any size.  The exit
status is 1 when a peer disagrees with pytest-rag.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_harness import Row, compare, installed, measure_memory, peak_extra_mib, time_sides  # noqa: E402

#: Workload name -> module, in table order.
WORKLOADS = {
    "ranking": "bench_ranking",
    "evidence": "bench_evidence",
    "embedding": "bench_embedding",
    "answers": "bench_answers",
    "plugin": "bench_plugin",
    "sweep": "bench_sweep",
    "cli": "bench_cli",
    "gate": "bench_gate",
    "merge": "bench_merge",
    "xdist": "bench_xdist",
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(WORKLOADS[name])


def _sizes(module: ModuleType, scale: float) -> list[float]:
    """The scales a workload runs at: its ``SIZES`` (fractions of ``scale``) or just ``scale``."""
    return [scale * fraction for fraction in getattr(module, "SIZES", (1.0,))]


def run_workload(name: str, scale: float, repeat: int, memory: bool) -> list[Row]:
    """Every row of one workload (one per peer and size)."""
    module = _module(name)
    if hasattr(module, "rows"):
        rows: list[Row] = module.rows(scale, repeat)
        return rows
    rows = []
    sizes = _sizes(module, scale)
    for size in sizes:
        inputs = module.make(size)
        sides = module.sides()
        rag = sides[0]
        variants = [rag, *(side for side in sides[1:] if side.rag)]
        peers = [side for side in sides[1:] if not side.rag]
        ready = [side for side in sides if not installed(side)]
        best, results = time_sides(ready, inputs, repeat)
        same, said = previous_engine(name, size, results[rag.name])
        rag_rows: list[Row] = []
        for variant in variants:
            label = name if variant is rag else f"{name}: {variant.name}"
            variant_rows = []
            compared = [peer for peer in peers if _paired(variant, peer)]
            for peer in compared:
                row = Row(label, inputs.size(), best.get(variant.name), peer.name,
                          goal=peer.goal.text if peer.goal and (
                              variant is rag or peer.pair == variant.name) else "")
                _judge(row, peer, best.get(peer.name), results.get(variant.name),
                       results.get(peer.name))
                variant_rows.append(row)
            _judge_fastest(variant_rows, compared)
            rows.extend(variant_rows)
            if variant is rag:
                rag_rows = variant_rows
            if variant is not rag and variant.name in results and variant_rows:
                _, text = compare(results[rag.name], results[variant.name], variant.shared)
                rows[-1].notes.append(f"{variant.name} against the stage: {text}")
        if rag_rows:
            rag_rows[0].notes.append(f"pytest-rag at {inputs.size()}: {said}")
            if not same:
                for row in rag_rows:
                    row.status = "disagrees"
        if memory and size == sizes[-1]:
            _add_memory(name, rag_rows, [rag, *(peer for peer in peers if _paired(rag, peer))],
                        scale)
        del inputs, results
    return rows


# -- outputs of the previous engine ------------------------------------------------
#: Per workload and size, a digest of each per-query array of pytest-rag's side,
#: written by the engine before issue 16 (``--record-outputs``).
EXPECTED = HERE / "outputs_expected.json"


def digests(metrics: Any) -> dict[str, str]:
    """SHA-256 of each per-query array (as float64 bytes): equal only when bit-identical."""
    import hashlib

    import numpy as np

    return {key: hashlib.sha256(np.ascontiguousarray(values, dtype=np.float64).tobytes())
            .hexdigest() for key, values in sorted(metrics.items())}


def previous_engine(name: str, size: float, metrics: Any) -> tuple[bool, str]:
    """Whether pytest-rag's per-query values are bit-identical to the stored ones of the
    engine before issue 16 at this workload and size, and a text saying so."""
    stored = json.loads(EXPECTED.read_text(encoding="utf-8")) if EXPECTED.exists() else {}
    wanted = stored.get(name, {}).get(f"{size:g}")
    if wanted is None:
        return True, f"not checked against the previous engine (no stored outputs at {size:g})"
    found = digests(metrics)
    differing = sorted(key for key in wanted if found.get(key) != wanted[key])
    if differing or found.keys() != wanted.keys():
        return False, ("MISMATCH with the previous engine: "
                       + ", ".join(differing or sorted(found.keys() ^ wanted.keys())))
    return True, (f"identical to the previous engine ({len(wanted)} per-query arrays, "
                  "bit for bit)")


def record_outputs(names: list[str], scale: float) -> None:
    """``--record-outputs``: store the installed engine's digests at ``scale``."""
    stored = json.loads(EXPECTED.read_text(encoding="utf-8")) if EXPECTED.exists() else {}
    for name in names:
        module = _module(name)
        if hasattr(module, "rows"):
            continue  # the sweep and the CLI keep their own expected outputs
        for size in _sizes(module, scale):
            inputs = module.make(size)
            rag = module.sides()[0]
            stored.setdefault(name, {})[f"{size:g}"] = digests(rag.extract(rag.run(inputs), inputs))
            print(f"[{name} at {size:g} recorded]", flush=True)
    EXPECTED.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _paired(variant: Any, peer: Any) -> bool:
    """Whether a row compares ``variant`` with ``peer``: sides with a ``pair`` (one
    configuration timed on both sides, such as one thread) only with each other."""
    if variant.pair or peer.pair:
        return variant.pair == peer.name and peer.pair == variant.name
    return True


def _judge_fastest(rows: list[Row], peers: list[Any]) -> None:
    """A goal against the fastest peer is met on every row or on none."""
    times = [row.peer_seconds for row in rows if row.peer_seconds]
    for row, peer in zip(rows, peers):
        if (peer.goal is not None and peer.goal.fastest_peer and times and row.rag_seconds
                and row.status in ("met", "not met")):
            met = row.rag_seconds / min(times) <= peer.goal.max_ratio
            row.status = "met" if met else "not met"


def _judge(row: Row, peer: Any, seconds: float | None, mine: Any, theirs: Any) -> None:
    """Fill a row's peer time, agreement and goal status."""
    missing = installed(peer)
    if missing:
        row.status = "not installed"
        row.agreement = f"{', '.join(missing)} not installed"
        return
    row.peer_seconds = seconds
    agree, row.agreement = compare(mine, theirs, peer.shared)
    if peer.not_shared:
        row.notes.append(f"{peer.name}: {peer.not_shared}")
    ratio = row.ratio
    if not agree:
        row.status = "disagrees"
    elif row.goal and ratio is not None:
        row.status = "met" if ratio <= peer.goal.max_ratio else "not met"


def _add_memory(name: str, rows: list[Row], sides: list[Any], scale: float) -> None:
    rag_mib = measure_memory(name, sides[0].name, scale) if not installed(sides[0]) else None
    for row, side in zip(rows, sides[1:]):
        row.rag_mib = rag_mib
        if not installed(side):
            row.peer_mib = measure_memory(name, side.name, scale)


def memory_child(name: str, side_name: str, scale: float) -> None:
    """``--memory-of``: peak extra MiB of one side's full call, as one JSON line."""
    import tracemalloc

    module = _module(name)
    side = next(side for side in module.sides() if side.name == side_name)
    inputs = module.make(_sizes(module, scale)[-1])
    side.run(inputs)  # imports, JIT compiles (numba specialises on the id length), caches
    resident = peak_extra_mib(lambda: side.run(inputs))
    # Freed memory that the allocator reuses hides from the resident set, so
    # the Python and numpy allocations are also traced; the larger count wins.
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    side.run(inputs)
    traced = (tracemalloc.get_traced_memory()[1] - before) / 2**20
    tracemalloc.stop()
    peak = traced if resident is None else max(resident, traced)
    print(json.dumps({"workload": name, "side": side_name, "peak_mib": peak,
                      "resident_mib": resident, "traced_mib": traced}))


# -- output ----------------------------------------------------------------------
def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def table(rows: list[Row]) -> str:
    """The results as a Markdown table."""
    from tabulate import tabulate

    body = []
    for row in rows:
        ratio = row.ratio
        body.append([
            row.workload, row.size, _seconds(row.rag_seconds), row.peer,
            row.status if row.status in ("not installed", "plugin not built yet") and
            row.peer_seconds is None else _seconds(row.peer_seconds),
            "-" if ratio is None else f"{ratio:.3g}", row.goal or "-", row.status or "-",
            row.agreement or "-", f"{_mib(row.rag_mib)} / {_mib(row.peer_mib)}",
        ])
    headers = ["workload", "size", "pytest-rag", "peer", "peer time", "ratio", "goal", "goal met",
               "agreement", "peak MiB (rag / peer)"]
    return tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)


def machine() -> dict[str, Any]:
    """CPU, cores, memory, Python and library versions, and the BLAS numpy runs."""
    info: dict[str, Any] = {"python": platform.python_version(), "cores": os.cpu_count()}
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in cpuinfo.splitlines()
                           if line.startswith("model name"))
        meminfo = Path("/proc/meminfo").read_text(encoding="ascii")
        kib = int(next(line.split()[1] for line in meminfo.splitlines()
                       if line.startswith("MemTotal")))
        info["memory"] = f"{kib / 2**20:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        info["cpu"] = platform.processor()
    from importlib.metadata import PackageNotFoundError, version

    for package in ("numpy", "ranx", "pytrec-eval-terrier", "rouge-score", "faiss-cpu", "numba",
                    "pytest"):
        try:
            info[package] = version(package)
        except PackageNotFoundError:
            info[package] = "not installed"
    info["OPENBLAS_CORETYPE"] = os.environ.get("OPENBLAS_CORETYPE", "(unset)")
    info["OPENBLAS_L2_SIZE"] = os.environ.get("OPENBLAS_L2_SIZE", "(unset)")
    try:
        import numpy  # noqa: F401  (threadpoolctl only sees loaded libraries)
        from threadpoolctl import threadpool_info

        info["blas"] = [f"{pool.get('internal_api')} {pool.get('version')} "
                        f"{pool.get('architecture')} threads={pool.get('num_threads')}"
                        for pool in threadpool_info() if pool.get("user_api") == "blas"]
    except ImportError:
        info["blas"] = "threadpoolctl not installed"
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every workload at 1/10 of its size")
    parser.add_argument("--scale", type=float, default=None,
                        help="size as a fraction of the full workloads (default 1, or 0.1 "
                             "with --quick)")
    parser.add_argument("--only", default=",".join(WORKLOADS),
                        help=f"comma-separated workloads (default all: {','.join(WORKLOADS)})")
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed calls per side after the warm-up, the best is kept "
                             "(default 3, or 1 with --quick)")
    parser.add_argument("--memory", action=argparse.BooleanOptionalAction, default=None,
                        help="measure peak memory in a fresh process per side "
                             "(default: on, off with --quick)")
    parser.add_argument("--json", type=Path, help="also write the rows and the machine here")
    parser.add_argument("--record-outputs", action="store_true",
                        help="store the installed engine's per-query outputs at this scale in "
                             "outputs_expected.json (run with the previous engine first on "
                             "PYTHONPATH), then exit")
    parser.add_argument("--memory-of", nargs=2, metavar=("WORKLOAD", "SIDE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    scale = args.scale if args.scale is not None else (0.1 if args.quick else 1.0)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    if args.memory_of:
        memory_child(args.memory_of[0], args.memory_of[1], scale)
        return 0
    names = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in names if name not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    if args.record_outputs:
        record_outputs(names, scale)
        return 0
    described = machine()
    print("machine: " + "; ".join(f"{key} {value}" for key, value in described.items()), flush=True)
    rows: list[Row] = []
    for name in names:
        memory = args.memory if args.memory is not None else not args.quick
        new = run_workload(name, scale, repeat, memory)
        rows.extend(new)
        print(f"[{name} done]", flush=True)
    print()
    print(table(rows))
    notes = dict.fromkeys(f"- {row.workload.split(':')[0]} / {note}"
                          for row in rows for note in row.notes)
    if notes:
        print("\nnotes (what is not compared, and why; the checks against the previous engine):\n"
              + "\n".join(notes))
    if args.json:
        args.json.write_text(json.dumps({"machine": described, "scale": scale,
                                         "rows": [vars(row) | {"ratio": row.ratio}
                                                  for row in rows]},
                                        indent=2), encoding="utf-8")
    return 1 if any(row.status == "disagrees" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
