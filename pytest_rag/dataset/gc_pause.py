"""Pausing CPython's cyclic garbage collector while an evaluation builds its records.

Resolving the inputs of a large evaluation makes a few tracked objects per
query (its :class:`~pytest_rag.dataset.model.Query`, its
:class:`~pytest_rag.dataset.model.RunEntry`, their id tuples) that all survive until
the report is built.  With the collector on, every ~70,000 of them trigger a
full collection, and a full collection walks every tracked object of the
process, the caller's inputs included (100,000 lists of 100 ids in the
ranking benchmark): most of the time of such a call went there, while the
records make no reference cycle for the collector to find.

:func:`collector_paused` switches the collector off for the duration of a
block and restores the state it found: on when it was on, off when the caller
had switched it off.  Nested and concurrent pauses (threads) share one
counter, so the collector comes back on only when the last one ends.

The records still alive when the last pause ends (a report keeps the dataset
it read) would make the very next allocation start a young collection that
walks all of them, every id of every list (0.26 s of a 1.7 s call in the
ranking benchmark), and a second one later, only to move them to the oldest
generation, where long-lived data belongs.  So the pause moves them there at
once: ``gc.freeze()`` then ``gc.unfreeze()`` puts every tracked object in the
oldest generation and resets the young count, two list splices and no
traversal.  This is skipped when the process has frozen objects of its own
(``gc.get_freeze_count()`` is not 0: unfreezing would release them).
Thresholds are untouched, reference counting still frees everything that is
dropped, and the next full collection sees every object as before.  The costs:
garbage cycles made during the block, and the few young objects of the caller
at that moment, wait for a full collection instead of a young one.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]

_lock = threading.Lock()
_depth = 0
_restore = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with :func:`gc.disable`; the previous state is restored after it."""
    global _depth, _restore
    with _lock:
        if _depth == 0:
            _restore = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if gc.get_freeze_count() == 0:
                    gc.freeze()  # every tracked object to the oldest generation,
                    gc.unfreeze()  # without a traversal (see the module's notes)
                if _restore:
                    gc.enable()
