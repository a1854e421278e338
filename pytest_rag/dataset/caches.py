"""Work done once on large data: caches kept with what they describe, and the collector pause.

**Caches.**  What the higher layers compute from a document or a dataset
(token positions, Markdown blocks, word ids, placed evidence) is kept on the
object it was computed from, never in a global: it is freed with the object,
and a modified copy (``dataclasses.replace``) starts with no cache, so it
never sees a stale value.  :class:`ObjectCache` gives a frozen
dataclass :meth:`~ObjectCache.cached`; :class:`DatasetCache` adds the caches that a
dataset shares with the datasets made from it with the same documents
(:meth:`~DatasetCache.corpus_cached`, :meth:`~DatasetCache.corpus_cached_for`,
:meth:`~DatasetCache.gold_cached`), so that a sweep of chunkings over one
corpus does the corpus work once, and the one it shares with the datasets that
have the same gold as written (:meth:`~DatasetCache.written_gold_cached`: the
queries' fingerprints, computed once for a sweep's variants).

**The collector pause.**  :func:`collector_paused` pauses CPython's cyclic garbage
collector while an evaluation builds its objects.

Resolving the inputs of a large evaluation makes a few tracked objects per
query (its :class:`~pytest_rag.dataset.model.Query`, its
:class:`~pytest_rag.dataset.model.RunEntry`, their id tuples) that all survive until
the report is built.  With the collector on, every ~70,000 of them trigger a
full collection, and a full collection walks every tracked object of the
process, the caller's inputs included (100,000 lists of 100 ids in the
ranking benchmark): most of the time of such a call went there, while those
objects make no reference cycle for the collector to find.

:func:`collector_paused` switches the collector off for the duration of a
block and restores the state it found: on when it was on, off when the caller
had switched it off.  Nested and concurrent pauses (threads) share one
counter, so the collector comes back on only when the last one ends.

The objects still alive when the last pause ends (a report keeps the dataset
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

__all__ = ["DatasetCache", "ObjectCache", "cache_entry", "collector_paused"]

_Value = TypeVar("_Value")
_Cached = TypeVar("_Cached", bound="ObjectCache")
_Shared = TypeVar("_Shared", bound="DatasetCache")
#: The key of the corpus cache (:meth:`DatasetCache.corpus_cached`) in a dataset's ``__dict__``.
_CORPUS_CACHE: Final = "derived-corpus"
#: The key of the cache of :meth:`DatasetCache.written_gold_cached` in a dataset's ``__dict__``.
_WRITTEN_GOLD_CACHE: Final = "derived-written-gold"


def cache_entry(cache: dict[str, Any], key: str, build: Callable[[], _Value]) -> _Value:
    """``cache[key]``, built the first time (an object's ``__dict__``, as
    :func:`functools.cached_property` does on a frozen dataclass)."""
    if key not in cache:
        cache[key] = build()
    return cast("_Value", cache[key])


class ObjectCache:
    """Gives a frozen dataclass :meth:`cached`: values derived from it, kept in its ``__dict__``."""

    # typing.Self needs Python 3.11; the self-bound type variables say the same.
    def cached(self: _Cached, name: str,  # noqa: PYI019
               build: Callable[[_Cached], _Value]) -> _Value:
        """``build(self)``, computed once per object and kept with it.

        What the higher layers derive from a document's text alone (its
        Markdown blocks, its word ids) or from a whole dataset (token
        positions) hangs here, so that evaluating many chunkings of one corpus
        does that work once, and the cache is freed with the object.
        """
        return cache_entry(self.__dict__, "derived:" + name, lambda: build(self))


class DatasetCache(ObjectCache):
    """The caches of a :class:`~pytest_rag.dataset.model.Dataset`, some shared with the
    datasets made from it with the same documents."""

    if TYPE_CHECKING:
        documents: Sequence[Any]
        queries: Sequence[Any]

    def corpus_cached(self: _Shared, name: str,  # noqa: PYI019 (as for cached)
                      build: Callable[[_Shared], _Value]) -> _Value:
        """``build(self)`` for what depends on the documents alone, kept with the corpus.

        Like :meth:`cached`, but the cache is shared with every dataset that
        :func:`~pytest_rag.dataset.arguments.resolve_inputs` makes from this
        one with the same documents (``rag.chunking(chunks=...)`` on a
        configured dataset): a sweep of chunkings does the corpus work once.
        It is freed with the last of those datasets.
        """
        return cache_entry(self.__dict__.setdefault(_CORPUS_CACHE, {}), name,
                           lambda: build(self))

    def corpus_cached_for(self: _Shared, name: str, key: object,  # noqa: PYI019
                          build: Callable[[_Shared], _Value]) -> _Value:
        """``build(self)`` for what depends on the documents and on ``key`` alone.

        Kept with the corpus (:meth:`corpus_cached`) for the last ``key`` it
        was built for: a later call whose key is that object, or equal to it,
        gets the same value; another key replaces it.  The evaluations of a
        sweep of chunkings over one configured dataset so place its gold
        evidence once, and two stages given the same chunks place them once.
        """
        cache = self.__dict__.setdefault(_CORPUS_CACHE, {})
        entry = cache.get("for:" + name)
        if entry is None or not (entry[0] is key or entry[0] == key):
            entry = cache["for:" + name] = (key, build(self))
        return cast("_Value", entry[1])

    def gold_cached(self: _Shared, name: str,  # noqa: PYI019 (as for cached)
                    build: Callable[[_Shared], _Value]) -> _Value:
        """``build(self)`` for what depends on the documents and the queries alone
        (:meth:`corpus_cached_for` the queries)."""
        return self.corpus_cached_for(name, self.queries, build)

    def written_gold_cached(self: _Shared, name: str,  # noqa: PYI019 (as for cached)
                            build: Callable[[_Shared], _Value]) -> _Value:
        """``build(self)`` for what depends on the queries' gold as written alone (their
        fingerprints; grades derived from evidence are not gold), shared with every
        dataset made from this one with that gold (:meth:`share_written_gold`), as the
        variants of a sweep are."""
        cache = self.__dict__.setdefault(_WRITTEN_GOLD_CACHE, {})
        return cache_entry(cache, name, lambda: build(self))

    def share_written_gold(self, other: DatasetCache) -> None:
        """Let this dataset use ``other``'s :meth:`written_gold_cached` cache.  Only for a
        dataset whose queries have, one for one, the gold as written of ``other``'s (the
        same queries, or copies with grades derived from evidence)."""
        if len(other.queries) != len(self.queries):
            raise ValueError("only a dataset with the same queries shares the gold cache")
        self.__dict__[_WRITTEN_GOLD_CACHE] = other.__dict__.setdefault(_WRITTEN_GOLD_CACHE, {})

    def share_corpus_cache(self, other: DatasetCache) -> None:
        """Let this dataset use ``other``'s :meth:`corpus_cached` cache (same documents)."""
        if other.documents is not self.documents:
            raise ValueError("only a dataset with the same documents shares the corpus cache")
        self.__dict__[_CORPUS_CACHE] = other.__dict__.setdefault(_CORPUS_CACHE, {})


_lock = threading.Lock()  # the pause: one counter for every thread
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
