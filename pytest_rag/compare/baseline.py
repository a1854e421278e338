"""The baseline file: the last accepted numbers, and what changed since.

The file is JSON with sorted keys (diff-friendly), keyed by test node id and
stage, holding each metric's value, direction and tolerance and the per-query
values, one line per query (:mod:`pytest_rag.compare.baseline_layout`; files
of version 1, one line per query per metric, are read too).  It is only ever
read with a JSON parser, written atomically (a temporary file in the same
folder, fsync, rename), never larger than its reader accepts, and never
overwritten unless an update is asked for.
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..atomic import write_atomically
from ..dataset.bounded_read import MAX_FILE_BYTES, UNREADABLE, InvalidJson, read_json
from ..escaping import quoted
from ..registry import Direction, MetricSpec
from .baseline_layout import dumps_baseline, first_layout, pack_entry, unpack_entry
from .gold import GoldChange, gold_change
from .records import StageRecord, entry_stage
from .thresholds import Tolerance, Tolerances

__all__ = ["BASELINE_FORMAT", "BASELINE_VERSION", "Baseline", "BaselineError"]

BASELINE_FORMAT = "pytest-rag-baseline"
#: 2: per-query values one row per query (version 1, one line per query and metric,
#: is read too, and rewritten as version 2 by the next update).
BASELINE_VERSION = 2
#: The largest magnitude a baseline or report value may have.  Any two values
#: within it have a finite difference and a finite relative tolerance, so a
#: comparison never overflows to infinity; a larger value is refused when read
#: and never written.
MAX_MAGNITUDE = 1e300


def _number_or_null(value: object) -> bool:
    """JSON null or a number whose magnitude is at most :data:`MAX_MAGNITUDE`
    (``bool`` is not a number)."""
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return abs(float(value)) <= MAX_MAGNITUDE  # False for NaN and infinities
    except OverflowError:  # an integer beyond the float range
        return False


#: What a baseline value may be, for the reader's and the writer's messages.
VALUE_RANGE = f"a finite number or null, of magnitude at most {MAX_MAGNITUDE:g}"


def _not_representable(value: object) -> str:
    """The reader's message for a value outside :data:`VALUE_RANGE`."""
    return f"expected {VALUE_RANGE}, got {quoted(value)}"


def _validate_stored_tolerance(metric: Mapping[str, Any], place: str,
                               bad: Callable[[str, str], BaselineError]) -> None:
    """A metric's stored ``tolerance`` is a finite number >= 0 and ``relative`` a boolean
    (both optional: files of other tools may leave them out)."""
    amount = metric.get("tolerance")
    if amount is not None and (not _number_or_null(amount) or amount < 0):
        raise bad(f"{place}.tolerance", f"expected a finite number >= 0, got {quoted(amount)}")
    relative = metric.get("relative")
    if relative is not None and not isinstance(relative, bool):
        raise bad(f"{place}.relative", f"expected true or false, got {quoted(relative)}")
    slack = metric.get("slack")
    if slack is not None and (not _number_or_null(slack) or slack < 0):
        raise bad(f"{place}.slack", f"expected a finite number >= 0, got {quoted(slack)}")


def _validate_gold(gold: object, place: str, bad: Callable[[str, str], BaselineError]) -> None:
    """An entry's optional ``gold``: ``{"queries": {id: digest}, "documents": digest}``."""
    if gold is None:
        return
    if not isinstance(gold, dict):
        raise bad(place, f"expected an object, got {quoted(gold)}")
    queries = gold.get("queries", {})
    if not isinstance(queries, dict) or not set(map(type, queries.values())) <= {str}:
        raise bad(f"{place}.queries", "expected an object of query id to fingerprint")
    documents = gold.get("documents")
    if documents is not None and not isinstance(documents, str):
        raise bad(f"{place}.documents", f"expected a fingerprint string, got {quoted(documents)}")


def _validate_finite(value: object, place: str, bad: Callable[[str, str], BaselineError]) -> None:
    """No NaN or infinity anywhere in ``value`` (JSON has none; the writer could not
    write the file back)."""
    stack: list[tuple[str, object]] = [(place, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise bad(where, f"{item!r} is not a JSON number (NaN and infinity are not)")
        if isinstance(item, dict):
            stack.extend((f"{where}.{key}", child) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", child) for i, child in enumerate(item))


def _unreadable(values: Mapping[str, object]) -> list[str]:
    """The keys of ``values`` whose value is not :func:`_number_or_null` (plain floats in
    range are let through first: all at once when every value is one, else one by one
    without a call)."""
    if set(map(type, values.values())) <= {float}:
        floats = cast("Iterable[float]", values.values())
        try:
            if not values or (math.isfinite(math.fsum(floats))  # no NaN, no infinity
                              and max(map(abs, floats)) <= MAX_MAGNITUDE):
                return []
        except OverflowError:  # the sum of finite values beyond the float range
            pass
    return [key for key, value in values.items()
            if not (type(value) is float and -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE)
            and not _number_or_null(value)]


def _validate_writable(record: StageRecord) -> None:
    """Raise :class:`BaselineError` for a value of ``record`` the reader would refuse."""
    bad = [(key, record.values[key]) for key in _unreadable(record.values)]
    for key, values in record.per_query.items():
        bad.extend((f"{key}[{query!r}]", values[query]) for query in _unreadable(values))
    for place, value in bad[:1]:
        raise BaselineError(f"{record.nodeid} [{record.stage}] {place} = {quoted(value)}: "
                            f"a baseline holds only {VALUE_RANGE}")


class BaselineError(Exception):
    """A baseline file that is missing, corrupt or of another version."""


class NewerBaselineError(BaselineError):
    """A baseline of a newer version than this pytest-rag reads (upgrading fixes it)."""


def restore_hint(path: Path) -> str:
    """What to do about an unreadable baseline, first things first: restoring it or
    fixing the named problem keeps every accepted reference; recording a new one
    accepts today's numbers, regressions included."""
    return (f"; restore it from version control (e.g. git checkout -- {path.name}) or fix "
            "the problem named here. Recording it anew with --rag-update-baseline would "
            "accept today's numbers of every test as the baseline, regressions included")


def missing_hint(path: Path) -> str:
    """What to do about a missing baseline (see :func:`restore_hint`)."""
    return (f"; if it was committed, restore it from version control (e.g. git checkout -- "
            f"{path.name}); to start a baseline, record one with --rag-update-baseline")


def read_json_file(path: Path, kind: str, *, missing_hint: str = "",
                   corrupt_hint: str = "") -> Any:
    """The decoded JSON of ``path``, or a :class:`BaselineError` naming ``kind`` and the path.

    ``kind`` says what the file should be (``"baseline file"``); the hints are
    appended to the message of a missing and of a corrupt file.
    """
    where = f"{kind} {str(path)!r}"
    try:
        return read_json(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise BaselineError(f"{where} not found{missing_hint}") from None
    except UNREADABLE as error:
        raise BaselineError(f"{where} {error}{corrupt_hint}") from None
    except InvalidJson as error:
        if error.problem == "nested too deeply":
            raise BaselineError(f"{where} is nested too deeply to be read{corrupt_hint}") from None
        raise BaselineError(f"{where} is not valid JSON ({error}){corrupt_hint}") from None
    except OSError as error:
        raise BaselineError(f"cannot read {where}: {error.strerror or error}") from None


@contextmanager
def _no_collection() -> Iterator[None]:
    """The garbage collector paused: reading a big file makes millions of containers, and
    the collector would scan the growing heap again and again (half the time of parsing
    a 100 MB baseline) to find no cycle in plain JSON."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class Baseline:
    """``tests[nodeid][stage]`` = ``{"metrics": ..., "per_query": ..., "settings": ...}``."""

    tests: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    #: The version of the file it was read from (an older one differs from a copy
    #: with the same entries, so that an update rewrites it in the current layout).
    version: int = BASELINE_VERSION
    #: False when read from a file of the first version 2 layout (rows indented, gold
    #: digests in hex): it differs from a copy with the same entries, so that an update
    #: rewrites it in the compact one.
    compact: bool = True

    # -- reading --------------------------------------------------------------
    @classmethod
    def load(cls, path: Path) -> Baseline:
        """Read and check a baseline file.

        Raises
        ------
        BaselineError
            When the file is missing, is not valid JSON, has another format or a
            newer version, or has entries of the wrong shape.
        """
        with _no_collection():
            data = read_json_file(path, "baseline file", missing_hint=missing_hint(path),
                                  corrupt_hint=restore_hint(path))
            try:
                return cls.from_json(data, str(path))
            except NewerBaselineError:
                raise
            except BaselineError as error:
                raise BaselineError(f"{error}{restore_hint(path)}") from None

    @classmethod
    def from_json(cls, data: Any, where: str, *, kind: str = "baseline file",
                  format_id: str = BASELINE_FORMAT, max_version: int = BASELINE_VERSION
                  ) -> Baseline:
        """Check decoded JSON; ``kind``, ``format_id`` and ``max_version`` describe the file
        (a baseline by default; ``pytest-rag diff`` also reads ``--rag-report`` files)."""
        def bad(place: str, problem: str) -> BaselineError:
            return BaselineError(f"{kind} {where!r}: {place}: {problem}")

        if not isinstance(data, dict):
            raise bad("top level", "expected a JSON object")
        if data.get("format") != format_id:
            raise bad("format", f"expected {format_id!r}, got {quoted(data.get('format'))}")
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise bad("version", f"expected a whole number, got {quoted(version)}")
        if version > max_version:
            raise NewerBaselineError(
                f"{kind} {where!r}: version: version {quoted(version)} is newer than this "
                f"pytest-rag reads ({max_version}); upgrade pytest-rag")
        if version < 1:
            raise bad("version", f"unknown version {quoted(version)}")
        tests = data.get("tests")
        if not isinstance(tests, dict):
            raise bad("tests", "expected a JSON object")
        compact = True
        if format_id == BASELINE_FORMAT and version >= 2:
            packed = tests
            tests = {nodeid: {stage: unpack_entry(entry, f"tests[{nodeid!r}][{stage!r}]", bad)
                              if isinstance(entry, dict) else entry
                              for stage, entry in stages.items()}
                     if isinstance(stages, dict) else stages
                     for nodeid, stages in tests.items()}
            compact = not any(first_layout(entry) for stages in packed.values()
                              if isinstance(stages, dict) for entry in stages.values()
                              if isinstance(entry, dict))
        for nodeid, stages in tests.items():
            if not isinstance(stages, dict):
                raise bad(f"tests[{nodeid!r}]", "expected a JSON object")
            for stage, entry in stages.items():
                place = f"tests[{nodeid!r}][{stage!r}]"
                if not isinstance(entry, dict) or not isinstance(entry.get("metrics"), dict):
                    raise bad(place, "expected an object with 'metrics'")
                for key, metric in entry["metrics"].items():
                    value = metric.get("value") if isinstance(metric, dict) else metric
                    if isinstance(metric, dict):
                        _validate_stored_tolerance(metric, f"{place}.metrics.{key}", bad)
                    if not _number_or_null(value):
                        raise bad(f"{place}.metrics.{key}", _not_representable(value))
                _validate_gold(entry.get("gold"), f"{place}.gold", bad)
                dataset = entry.get("dataset")
                if dataset is not None and not isinstance(dataset, str):
                    raise bad(f"{place}.dataset",
                              f"expected the dataset's file name, got {quoted(dataset)}")
                per_query = entry.get("per_query", {})
                if not isinstance(per_query, dict) or not all(
                        isinstance(values, dict) for values in per_query.values()):
                    raise bad(f"{place}.per_query", "expected an object of objects")
                for key, values in per_query.items():
                    for query in _unreadable(values)[:1]:
                        raise bad(f"{place}.per_query.{key}[{query!r}]",
                                  _not_representable(values[query]))
                # Settings, gold and the rest: the per-query values are checked above and
                # the gold digests are strings (walking them costs a second per million).
                _validate_finite({name: value for name, value in entry.items()
                               if name not in ("per_query", "gold")}, place, bad)
                _validate_finite({name: value for name, value in (entry.get("gold") or {}).items()
                               if name != "queries"}, f"{place}.gold", bad)
        return cls(tests, version, compact)

    def entry(self, nodeid: str, stage: str) -> Mapping[str, Any] | None:
        return self.tests.get(nodeid, {}).get(stage)

    def gold_change(self, record: StageRecord) -> GoldChange | None:
        """How the gold of ``record`` differs from its entry's, or ``None`` when it does
        not (or either side has no fingerprints, or the entry was measured on other
        gold: :func:`~pytest_rag.compare.likeness.different_gold`):
        :mod:`pytest_rag.compare.gold`."""
        from .likeness import different_gold

        entry = self.entry(record.nodeid, record.entry_key)
        if different_gold(entry, record) is not None:
            return None  # not the same gold changed, but other gold: not compared at all
        change = gold_change(entry.get("gold") if entry else None, record)
        return change if change is not None and change.changed else None

    def value(self, nodeid: str, stage: str, key: str) -> float | None:
        entry = self.entry(nodeid, stage)
        if entry is None:
            return None
        metric = entry["metrics"].get(key)
        value = metric.get("value") if isinstance(metric, dict) else metric
        return None if value is None else float(value)

    # -- writing --------------------------------------------------------------
    def updated(self, records: Iterable[StageRecord], specs: Mapping[str, MetricSpec],
                tolerances: Tolerances, *,
                kept: Mapping[tuple[str, str], Collection[str]] | None = None) -> Baseline:
        """A copy with the records' entries replaced (other entries kept).

        ``kept`` names, per ``(nodeid, entry key)``, the metrics whose accepted
        value (and per-query values) stay as they are in this baseline: the
        reference that a change within the tolerance must not move
        (:func:`pytest_rag.compare.references.plan_update`).

        Raises
        ------
        BaselineError
            When a value's magnitude exceeds :data:`MAX_MAGNITUDE`: it could not
            be read back, so nothing is written.
        """
        tests = {nodeid: dict(stages) for nodeid, stages in self.tests.items()}
        for record in records:
            _validate_writable(record)
            old = self.entry(record.nodeid, record.entry_key) or {}
            keep = set((kept or {}).get((record.nodeid, record.entry_key), ()))
            metrics = {}
            for key, value in record.values.items():
                spec = specs.get(f"{record.stage}.{key}")
                direction = spec.direction.value if spec else Direction.INFO.value
                tolerance = tolerances.for_metric(spec) if spec else Tolerance(0.0, False)
                if key in keep:
                    value = self.value(record.nodeid, record.entry_key, key)
                metrics[key] = {"value": value, "direction": direction,
                                "tolerance": tolerance.amount, "relative": tolerance.relative}
                if tolerance.slack:
                    metrics[key]["slack"] = tolerance.slack
            gold = record.gold_json()
            # Not-measured queries are left out: absent reads as None.
            per_query = {key: {query: value for query, value in values.items()
                               if value is not None}
                         for key, values in record.per_query.items()}
            for key in keep & set(per_query):
                per_query[key] = dict(old.get("per_query", {}).get(key, {}))
            tests.setdefault(record.nodeid, {})[record.entry_key] = {
                "metrics": metrics,
                "per_query": per_query,
                "settings": dict(record.settings),
                **({"gold": gold} if gold else {}),
                **({"dataset": record.dataset} if record.dataset is not None else {}),
            }
        return Baseline(tests)

    def without(self, nodeids: Iterable[str]) -> Baseline:
        gone = set(nodeids)
        return Baseline({nodeid: stages for nodeid, stages in self.tests.items()
                         if nodeid not in gone})

    def without_stages(self, entries: Iterable[tuple[str, str]]) -> Baseline:
        """A copy without the ``(nodeid, stage)`` entries; a test left with no stage goes."""
        gone = set(entries)
        tests = {nodeid: {stage: entry for stage, entry in stages.items()
                          if (nodeid, stage) not in gone}
                 for nodeid, stages in self.tests.items()}
        return Baseline({nodeid: stages for nodeid, stages in tests.items() if stages})

    def stored_tolerances(self, nodeid: str, stage: str) -> dict[str, Tolerance]:
        """``{"stage.key": Tolerance}``: the tolerances written with the entry of
        ``nodeid`` and ``stage`` (an entry key: ``"retrieval[bm25]"`` reads as
        retrieval) (what the project had configured), where stored."""
        entry = self.entry(nodeid, stage) or {}
        stored = {}
        for key, metric in entry.get("metrics", {}).items():
            if isinstance(metric, Mapping) and metric.get("tolerance") is not None:
                stored[f"{entry_stage(stage)}.{key}"] = Tolerance(float(metric["tolerance"]),
                                                     bool(metric.get("relative", False)),
                                                     float(metric.get("slack") or 0.0))
        return stored

    def to_json(self) -> dict[str, Any]:
        """The file's JSON (current version: per-query values as rows)."""
        return {"format": BASELINE_FORMAT, "version": BASELINE_VERSION,
                "tests": {nodeid: {stage: pack_entry(entry) for stage, entry in stages.items()}
                          for nodeid, stages in self.tests.items()}}

    def save(self, path: Path, *, root: Path | None = None) -> None:
        """Write atomically (:func:`pytest_rag.atomic.write_atomically`): a temporary file
        beside ``path``, fsync, then rename; a symlink is written through when it stays
        inside ``root`` (the run's root; the current folder when ``None``).

        Raises
        ------
        BaselineError
            When the reader would refuse the file: larger than it accepts
            (:data:`~pytest_rag.dataset.parser.MAX_FILE_BYTES`) or holding a value it
            refuses (a stored tolerance of 1e301); checked before writing, so nothing
            is written then and every later run can still read the old file.
        OSError
            When it cannot be written.
        """
        text = dumps_baseline({"format": BASELINE_FORMAT, "version": BASELINE_VERSION,
                               "tests": self.tests})
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise BaselineError(
                f"baseline file {str(path)!r} not written: it would be {len(data):,} bytes, "
                f"more than the {MAX_FILE_BYTES:,} bytes ({MAX_FILE_BYTES / 2**20:g} MiB) a "
                "baseline may have to be read back; the old file is kept (split the gold set "
                "over several tests to record fewer queries per file entry)")
        try:
            Baseline.from_json(json.loads(text), str(path), kind="baseline to write")
        except BaselineError as error:
            raise BaselineError(f"baseline file {str(path)!r} not written: its reader would "
                                f"refuse it ({error}); the old file is kept") from None
        write_atomically(path, data, root=Path.cwd() if root is None else root)
