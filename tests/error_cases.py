"""The documented error paths, as data shared by both front ends (not a test module).

``tests/unit/test_error_paths.py`` runs every case through the command line
(``pytest-rag evaluate|validate|diff``: exit status 2 and the message on
stderr) and ``tests/plugin/test_plugin_error_paths.py`` through pytest (a
dataset error fails the test that asks for the data, exit status 1; a bad
baseline is a usage error, exit status 4).  Both assert the same message for
the same cause, exactly.

Where each error is documented (README): "## Command line" (exit statuses),
"### Rules" of the dataset format, "### Baselines" and "## Reliability".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rag.dataset.bounded_read import (
    MAX_DOCUMENT_BYTES,
    MAX_FILE_BYTES,
    MAX_JSON_BYTES,
    MAX_YAML_BYTES,
)

#: A ``path:`` document or a dataset one byte over the size limit: a sparse file
#: (``truncate``), so that no 512 MiB are written; the loader refuses it from its size.
OVERSIZE = MAX_FILE_BYTES + 1
#: A ``path:`` document one byte over its own, lower limit (16 MiB).
DOCUMENT_OVERSIZE = MAX_DOCUMENT_BYTES + 1
SAFE_LOADER = "(files are read with a safe loader: no tag constructs an object)"
OUTSIDE_HINT = ("(allow it with allow_outside_paths=True, --allow-outside-paths on the command "
                "line, or the ini option rag_allow_outside_paths)")


@dataclass(frozen=True)
class DatasetCase:
    """A dataset file that must be refused with ``"{path}: {message}"``.

    ``name`` is the dataset's path inside the project folder; ``files`` are
    other files to write there (text, or an ``int``: a sparse file of that
    size); ``{dir}`` in ``message`` stands for the dataset's resolved folder.
    ``allowed_by``: the error disappears with
    ``--allow-outside-paths`` / ini ``rag_allow_outside_paths = true``.
    """

    id: str
    text: str | bytes | int | None  # None: the file does not exist; int: a sparse file
    message: str
    name: str = "gold.yaml"
    files: dict[str, str | int] = field(default_factory=dict)
    allowed_by_outside_paths: bool = False

    def write(self, folder: Path) -> Path:
        """Write the case's files into ``folder``; the dataset's path."""
        for name, content in {**self.files, self.name: self.text}.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if content is None:
                continue
            if isinstance(content, int):
                with open(path, "wb") as handle:
                    handle.truncate(content)
            elif isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return folder / self.name

    def expected(self, path: Path) -> str:
        """The message (without a front end's prefix) for the dataset at ``path``."""
        return f"{path}: {self.message.replace('{dir}', os.path.realpath(path.parent))}"


DOC = "documents: [{id: d, text: abc}]\n"

DATASET_CASES = (
    # -- malformed files ("## Reliability": a malformed file; "### Rules": safe loading)
    DatasetCase("missing-file", None, "file not found"),
    DatasetCase("unknown-extension", "x: 1\n", "unknown file type '.toml': expected a .yaml, "
                ".yml or .json dataset, a BEIR folder, a ragas .jsonl or .csv file, or TREC "
                "qrels (.qrels, .txt, qrels.*)", name="gold.toml"),
    DatasetCase("malformed-json", "{", "line 1, column 2: invalid JSON: Expecting property name "
                "enclosed in double quotes", name="gold.json"),
    DatasetCase("malformed-yaml", "queries: [\n",
                "line 2, column 1: invalid YAML: did not find expected node content"),
    DatasetCase("not-utf8", b'{"queries": "\xff"}',
                "is not UTF-8 text (invalid start byte at byte 13)", name="gold.json"),
    DatasetCase("not-a-mapping", "- a\n", "expected a mapping, got a list ['a']"),
    # A "billion laughs" of 600 bytes passed validate, then evaluate ran forever.
    DatasetCase("yaml-alias-amplification", open(
        __import__("pathlib").Path(__file__).parent / "data" / "billion_laughs.yaml",
        encoding="utf-8").read(),
        "line 17, column 10: invalid YAML: aliases expand this document by 926,177,086 nodes, "
        "over the limit of 1,000,000; the value anchored here (435,848,050 nodes) is used 2 "
        "times"),
    # Metadata nested 500 levels passed validate, then evaluate died with RecursionError.
    DatasetCase("metadata-nested-too-deeply",
                "documents: [{id: d1, text: alpha beta gamma}]\n"
                "chunks: [{id: c1, doc_id: d1, start: 0, end: 5, metadata: {a: "
                + "[" * 500 + "]" * 500 + "}}]\n",
                "chunks[0].metadata.a (chunk 'c1', line 2): nested deeper than 100 levels"),
    DatasetCase("expected-metadata-nested-too-deeply",
                '{"expected_metadata": {"c1": {"tags": ' + "[" * 150 + "]" * 150 + "}}}",
                "expected_metadata.c1.tags: nested deeper than 100 levels", name="gold.json"),
    # A lone surrogate passed validate, then broke every output written as UTF-8.
    DatasetCase("lone-surrogate-json", '{"queries": [{"id": "q\\ud800", "relevant": ["a"]}]}',
                "line 1, column 23: invalid JSON: a lone surrogate escape, which is not text "
                "and cannot be written as UTF-8", name="gold.json"),
    DatasetCase("lone-surrogate-yaml", 'queries:\n  - id: "q\\ud800"\n    relevant: [a]\n',
                "line 2, column 13: invalid YAML: found invalid Unicode character escape code"),
    *([DatasetCase("integer-beyond-the-digit-limit",
                   '{"params": {"k": ' + "1" * 5000 + "}}",
                   "line 1, column 18: invalid JSON: an integer of 5000 digits, more than "
                   "Python converts", name="gold.json")]
      if hasattr(__import__("sys"), "get_int_max_str_digits") else []),
    DatasetCase("python-object-tag", "queries: !!python/object:os.system {}\n",
                f"line 1, column 10: invalid YAML: the tag '!!python/object:os.system' is not "
                f"allowed {SAFE_LOADER}"),
    DatasetCase("python-apply-tag", "x: !!python/object/apply:os.system [echo hi]\n",
                f"line 1, column 4: invalid YAML: the tag '!!python/object/apply:os.system' is "
                f"not allowed {SAFE_LOADER}"),
    DatasetCase("json-over-the-size-limit", MAX_JSON_BYTES + 1,
                f"is {MAX_JSON_BYTES + 1} bytes, over the limit of {MAX_JSON_BYTES} bytes "
                "(160 MiB) for JSON (each MiB takes about 10 MiB of memory to load)",
                name="gold.json"),
    DatasetCase("yaml-over-the-size-limit", MAX_YAML_BYTES + 1,
                f"is {MAX_YAML_BYTES + 1} bytes, over the limit of {MAX_YAML_BYTES} bytes "
                "(20 MiB) for YAML (each MiB takes about 82 MiB of memory to load)"),
    # -- strict keys ("### Rules")
    DatasetCase("unknown-key", "querys: []\n", "querys: unknown key (did you mean 'queries'?)"),
    DatasetCase("unknown-key-in-a-run-entry",
                "queries: [{id: q1}]\nrun: {q1: {retreived_ids: [a]}}\n",
                "run.q1.retreived_ids (line 2): unknown key (did you mean 'retrieved_ids'?)"),
    DatasetCase("duplicate-key-yaml", "queries: []\nqueries: []\n",
                "line 2, column 1: invalid YAML: duplicate key 'queries'"),
    DatasetCase("duplicate-key-json", '{"queries": [], "queries": []}',
                "line 1, column 17: invalid JSON: duplicate key 'queries'", name="gold.json"),
    DatasetCase("other-format-version", "format: pytest-rag/v2\n",
                "format: expected 'pytest-rag/v1', got a string 'pytest-rag/v2'"),
    # -- wrong types
    DatasetCase("wrong-type", "queries: {id: q1}\n",
                "queries (line 1): expected a list, got a mapping {'id': 'q1'}"),
    DatasetCase("wrong-type-of-k", "params: {k: two}\n",
                "params.k (line 1): expected a whole number, got a string 'two'"),
    DatasetCase("unquoted-date-id", "queries: [{id: 2024-05-01}]\n",
                "queries[0].id (line 1): expected a string, got a date 2024-05-01"),
    # -- ids
    DatasetCase("empty-id", "queries: [{id: ''}]\n",
                "queries[0].id (line 1): an id must not be empty"),
    DatasetCase("repeated-id", "queries: [{id: q1}, {id: q1}]\n",
                "queries[1].id (query 'q1', line 1): duplicate query id 'q1'"),
    DatasetCase("run-key-not-a-query", "queries: [{id: q1}]\nrun: {q2: {answer: x}}\n",
                "run.q2 (line 2): query 'q2' is not in 'queries'"),
    # -- offsets and located text
    DatasetCase("offset-past-the-end", DOC + "chunks: [{id: c, start: 0, end: 9}]\n",
                "chunks[0].end (chunk 'c', line 2): 9 is past the end of document 'd' "
                "(3 characters)"),
    DatasetCase("start-without-end", DOC + "chunks: [{id: c, start: 0}]\n",
                "chunks[0] (chunk 'c', line 2): give both 'start' and 'end', or neither"),
    DatasetCase("text-not-in-the-document", DOC + "chunks: [{id: c, text: zzz}]\n",
                "chunks[0].text (chunk 'c', line 2): 'zzz' not found in document 'd' at or after "
                "character 0"),
    # -- numbers
    DatasetCase("nan-latency-yaml", "queries: [{id: q1}]\nrun: {q1: {latency_ms: .nan}}\n",
                "run.q1.latency_ms (line 2): must be a finite number, got nan"),
    DatasetCase("nan-cost-json", '{"queries": [{"id": "q1"}], "run": {"q1": {"cost_usd": NaN}}}',
                "run.q1.cost_usd (line 1): must be a finite number, got nan", name="gold.json"),
    DatasetCase("infinite-vector", DOC + "chunks: [{id: c, start: 0, end: 3}]\n"
                "vectors: {chunks: {c: [1, .inf]}}\n",
                "vectors.chunks.c[1]: must be a finite number, got inf"),
    DatasetCase("negative-latency", "queries: [{id: q1}]\nrun: {q1: {latency_ms: -1}}\n",
                "run.q1.latency_ms (line 2): must be >= 0, got -1"),
    DatasetCase("grade-too-large", "queries: [{id: q1, relevant: {a: 1000}}]\n",
                "queries[0].relevant.a (query 'q1', line 1): a grade must be <= 100 (its nDCG "
                "gain is 2**grade - 1), "
                "got 1000"),
    DatasetCase("vector-dimensions", DOC + "chunks: [{id: c, start: 0, end: 1}, "
                "{id: e, start: 1, end: 3}]\nvectors: {chunks: {c: [1, 0], e: [1, 0, 0]}}\n",
                "vectors.chunks.e: has 3 dimensions, vectors.chunks.c has 2"),
    # -- ids that are not chunks: an error for the token metrics only
    DatasetCase("unknown-chunk-in-top-k-for-token-metrics",
                DOC + "chunks: [{id: c, start: 0, end: 3}]\n"
                "queries: [{id: q1, expected_evidence: [{start: 0, end: 1}]}]\n"
                "run: {q1: {retrieved_ids: [x]}}\n",
                "run.q1.retrieved_ids[0]: unknown chunk 'x': token metrics need its span"),
    # It passed validate and failed evaluate: validate now accepts exactly what evaluate does.
    DatasetCase("unknown-chunk-in-context-for-token-metrics",
                DOC + "chunks: [{id: c, start: 0, end: 3}]\n"
                "queries: [{id: q1, relevant: [c]}]\n"
                "run: {q1: {context_ids: [c, nope]}}\n",
                "run.q1.context_ids[1]: unknown chunk 'nope': token metrics need its span"),
    # -- path: documents ("### Rules": they stay in the dataset's folder)
    DatasetCase("path-outside-the-folder", "documents: [{id: d, path: ../outside.txt}]\n",
                "documents[0].path (document 'd', line 1): '../outside.txt' is outside the "
                "dataset's folder '{dir}' "
                f"{OUTSIDE_HINT}",
                name="data/gold.yaml", files={"outside.txt": "abc"}, allowed_by_outside_paths=True),
    DatasetCase("path-document-missing", "documents: [{id: d, path: doc.md}]\n",
                "documents[0].path (document 'd', line 1): document file 'doc.md' not found "
                "(looked at '{dir}/doc.md')"),
    DatasetCase("path-document-over-the-size-limit", "documents: [{id: d, path: big.txt}]\n",
                f"documents[0].path (document 'd', line 1): document file 'big.txt' is "
                f"{DOCUMENT_OVERSIZE} bytes, over the limit of {MAX_DOCUMENT_BYTES} bytes (16 MiB)",
                files={"big.txt": DOCUMENT_OVERSIZE}),
    DatasetCase("path-document-of-200-mb", "documents: [{id: d, path: big.txt}]\n",
                "documents[0].path (document 'd', line 1): document file 'big.txt' is "
                f"200000000 bytes, over the limit of {MAX_DOCUMENT_BYTES} bytes (16 MiB)",
                files={"big.txt": 200_000_000}),
)

# -- baselines ("### Baselines": corrupt, other format, newer version, missing) ----------
GOOD_BASELINE = ('{"format": "pytest-rag-baseline", "version": 1, "tests": {"t.py::test": '
                 '{"retrieval": {"metrics": {"recall_at_k": 0.5}}}}}')
RESTORE_HINT = ("; restore it from version control (e.g. git checkout -- rag-baseline.json) or "
                "fix the problem named here. Recording it anew with --rag-update-baseline would "
                "accept today's numbers of every test as the baseline, regressions included")


def _int_digit_limit_message() -> str:
    """Python's own message for an integer of 5001 digits (empty without a digit limit)."""
    try:
        int("1" + "0" * 5000)
    except ValueError as error:
        return str(error)
    return ""


@dataclass(frozen=True)
class BaselineCase:
    """A bad baseline file: the message from ``pytest-rag diff GOOD BAD`` (after the
    file's kind and path) and from ``pytest --rag-baseline`` (the baseline file)."""

    id: str
    text: str | bytes | None  # None: the file does not exist
    cli: str  # "{where}" stands for "<kind> '<path>'"
    pytest: str
    cli_kind: str = "baseline file"


BASELINE_CASES = (
    BaselineCase("missing", None, "{where} not found",
                 "{where} not found; if it was committed, restore it from version control "
                 "(e.g. git checkout -- rag-baseline.json); to start a baseline, record one "
                 "with --rag-update-baseline",
                 cli_kind="baseline or report file"),
    BaselineCase("corrupt", '{"format": "pytest-rag-baseline", "version": 1, "tests": {',
                 "{where} is not valid JSON (line 1, column 59: Expecting property name enclosed "
                 "in double quotes)",
                 "{where} is not valid JSON (line 1, column 59: Expecting property name enclosed "
                 "in double quotes)" + RESTORE_HINT, cli_kind="baseline or report file"),
    BaselineCase("not-utf8", b'{"format": "\xff"}',
                 "{where} is not UTF-8 text (invalid start byte at byte 12)",
                 "{where} is not UTF-8 text (invalid start byte at byte 12)" + RESTORE_HINT,
                 cli_kind="baseline or report file"),
    *([BaselineCase("integer-beyond-the-digit-limit",
                    GOOD_BASELINE.replace("0.5", "1" + "0" * 5000),
                    "{where} is not valid JSON (line 1, column "
                    f"{GOOD_BASELINE.index('0.5') + 1}: an integer of 5001 digits, more than "
                    "Python converts)",
                    "{where} is not valid JSON (line 1, column "
                    f"{GOOD_BASELINE.index('0.5') + 1}: an integer of 5001 digits, more than "
                    "Python converts)" + RESTORE_HINT,
                    cli_kind="baseline or report file")]
      if _int_digit_limit_message() else []),  # Python < 3.10.7 reads any integer
    BaselineCase("lone-surrogate", GOOD_BASELINE.replace("t.py::test", "t.py::test\\udc00"),
                 "{where} is not valid JSON (line 1, column 70: a lone surrogate escape, which "
                 "is not text and cannot be written as UTF-8)",
                 "{where} is not valid JSON (line 1, column 70: a lone surrogate escape, which "
                 "is not text and cannot be written as UTF-8)" + RESTORE_HINT,
                 cli_kind="baseline or report file"),
    BaselineCase("other-format", '{"format": "something-else", "version": 1, "tests": {}}',
                 "{where}: format: expected 'pytest-rag-baseline' or 'pytest-rag-report', "
                 "got 'something-else'",
                 "{where}: format: expected 'pytest-rag-baseline', got 'something-else'"
                 + RESTORE_HINT,
                 cli_kind="baseline or report file"),
    BaselineCase("newer-version", '{"format": "pytest-rag-baseline", "version": 3, "tests": {}}',
                 "{where}: version: version 3 is newer than this pytest-rag reads (2); "
                 "upgrade pytest-rag",
                 "{where}: version: version 3 is newer than this pytest-rag reads (2); "
                 "upgrade pytest-rag"),
    BaselineCase("per-query-value-not-a-number",
                 GOOD_BASELINE.replace('}}}}', '}, "per_query": {"recall_at_k": {"q1": "x"}}}}}'),
                 "{where}: tests['t.py::test']['retrieval'].per_query.recall_at_k['q1']: "
                 "expected a finite number or null, of magnitude at most 1e+300, "
                 "got 'x'",
                 "{where}: tests['t.py::test']['retrieval'].per_query.recall_at_k['q1']: "
                 "expected a finite number or null, of magnitude at most 1e+300, got 'x'"
                 + RESTORE_HINT),
    BaselineCase("non-finite-metric", GOOD_BASELINE.replace("0.5", "NaN"),
                 "{where}: tests['t.py::test']['retrieval'].metrics.recall_at_k: expected a "
                 "finite number or null, of magnitude at most 1e+300, got nan",
                 "{where}: tests['t.py::test']['retrieval'].metrics.recall_at_k: expected a "
                 "finite number or null, of magnitude at most 1e+300, got nan" + RESTORE_HINT),
    # A hand-edited value whose difference to any current value overflows to infinity.
    BaselineCase("metric-beyond-the-comparable-range", GOOD_BASELINE.replace("0.5", "-1.7e308"),
                 "{where}: tests['t.py::test']['retrieval'].metrics.recall_at_k: expected a "
                 "finite number or null, of magnitude at most 1e+300, got -1.7e+308",
                 "{where}: tests['t.py::test']['retrieval'].metrics.recall_at_k: expected a "
                 "finite number or null, of magnitude at most 1e+300, got -1.7e+308"
                 + RESTORE_HINT),
)


def write_baseline(path: Path, text: str | bytes | None) -> None:
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text, encoding="utf-8")


def exact(line: str) -> str:
    """An fnmatch pattern that matches ``line`` only (``*``, ``?`` and ``[`` escaped)."""
    return "".join(f"[{char}]" if char in "*?[" else char for char in line)
