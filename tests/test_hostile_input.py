"""Hostile and broken input under limits: 10 s of CPU time, 2 GiB of address space.

Every documented error case (``tests/error_cases.py``) and the hostile files
of the reliability work (alias amplification, deep nesting, lone surrogates,
huge integers, devices and FIFOs, quotes that made the text search quadratic)
runs in a fresh process of its own, through the command line and through
pytest, each under ``resource.setrlimit(RLIMIT_AS, 2 GiB)`` and 10 s of CPU
time (``RLIMIT_CPU``: what the process itself spends, whatever else the machine
runs, so no outcome depends on how busy it is).  Each must end within them with
the documented exit status, a message naming the file and the place, and no
traceback.  The documented cases also run in-process in ``tests/unit`` and
``tests/plugin``; here, a process each, they are marked slow.  A wall-clock
timeout of 120 s only catches a process that waits without computing (a FIFO
read that never returns).
"""

from __future__ import annotations

import html.parser
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from error_cases import (
    BASELINE_CASES,
    DATASET_CASES,
    GOOD_BASELINE,
    DatasetCase,
    write_baseline,
)

resource = pytest.importorskip("resource", reason="address-space limits need POSIX resource")

CPU_SECONDS = 10
#: Only for a process that waits without computing: CPU time limits the rest.
WAIT_SECONDS = 120
ADDRESS_SPACE = 2 * 1024**3


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def limited_run(args: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    """``args`` in ``folder`` under the limits; more than 10 s of CPU kills the process
    (SIGXCPU), which fails the test on its exit status."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(args, cwd=folder, capture_output=True, text=True, env=env,
                          preexec_fn=_limited, timeout=WAIT_SECONDS)


def quadratic_quotes() -> str:
    """30 quotes of 3,000 words whose whitespace differs from a repetitive 40,000-word
    document: the regular-expression search took minutes on such a file."""
    document = " ".join(["the"] * 40_000) + " end"
    quote = "\\n".join(["the"] * 2_999 + ["end"])
    queries = "".join(f'  - id: q{i}\n    expected_evidence: [{{doc_id: d, quote: "{quote}"}}]\n'
                      for i in range(30))
    return f'documents:\n  - id: d\n    text: "{document}"\nqueries:\n{queries}'


#: Valid files that must still load within the limits.
VALID = [pytest.param(quadratic_quotes(), id="quadratic-quotes")]
#: Files that are not files: refused at once, without reading or waiting.
DEVICES = [pytest.param("/dev/zero", "is a character device, not a regular file",
                        id="dev-zero"),
           pytest.param("fifo", "is a FIFO (named pipe), not a regular file", id="fifo")]


def _device(folder: Path, kind: str) -> Path:
    path = folder / "gold.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(kind)
    return path


def _pytest_project(folder: Path, dataset: str) -> None:
    (folder / "pytest.ini").write_text(f"[pytest]\nrag_dataset = {dataset}\n", encoding="utf-8")
    (folder / "test_rag.py").write_text("def test_it(rag):\n    rag.evaluate()\n",
                                        encoding="utf-8")


PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
          "-p", "no:hypothesispytest", "-q"]


@pytest.mark.slow  # a process per case; tests/unit and tests/plugin run them in-process
@pytest.mark.parametrize("case", DATASET_CASES, ids=lambda case: case.id)
def test_a_bad_dataset_through_the_cli(tmp_path: Path, case: DatasetCase) -> None:
    path = case.write(tmp_path)
    done = limited_run([sys.executable, "-m", "pytest_rag", "validate", str(path)], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"pytest-rag: error: {case.expected(path)}\n"


@pytest.mark.slow  # a process per case; tests/unit and tests/plugin run them in-process
@pytest.mark.parametrize("case", DATASET_CASES, ids=lambda case: case.id)
def test_a_bad_dataset_through_pytest(tmp_path: Path, case: DatasetCase) -> None:
    path = case.write(tmp_path)
    _pytest_project(tmp_path, str(path.relative_to(tmp_path)))
    done = limited_run(PYTEST, tmp_path)
    if case.text is None:  # a configured dataset that does not exist: one usage error
        assert (done.returncode, done.stderr) == (
            4, f"ERROR: pytest-rag: {case.expected(path)} (ini rag_dataset in pytest.ini)\n\n")
        return
    assert done.returncode == 1, done.stdout
    assert f"pytest-rag: {case.expected(path)}" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.slow  # a process per case; tests/unit and tests/plugin run them in-process
@pytest.mark.parametrize("case", BASELINE_CASES, ids=lambda case: case.id)
def test_a_bad_baseline_through_diff_and_pytest(tmp_path: Path, case: object) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "rag-baseline.json"
    good.write_text(GOOD_BASELINE, encoding="utf-8")
    write_baseline(bad, case.text)  # type: ignore[attr-defined]
    done = limited_run([sys.executable, "-m", "pytest_rag", "diff", str(good), str(bad)],
                       tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("pytest-rag: error: ") and str(bad) in done.stderr
    assert "Traceback" not in done.stderr
    (tmp_path / "gold.yaml").write_text("queries: [{id: q1, relevant: {a: 1}}]\n"
                                        "run: {q1: {retrieved_ids: [a]}}\n", encoding="utf-8")
    _pytest_project(tmp_path, "gold.yaml")
    done = limited_run([*PYTEST, "--rag-baseline"], tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert str(bad) in done.stderr and "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("text", VALID)
def test_expensive_valid_files_load_within_the_limits(tmp_path: Path, text: str) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text(text, encoding="utf-8")
    done = limited_run([sys.executable, "-m", "pytest_rag", "validate", str(path)], tmp_path)
    assert done.returncode == 0, done.stderr
    _pytest_project(tmp_path, path.name)
    done = limited_run(PYTEST, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need POSIX")
@pytest.mark.parametrize(("kind", "message"), DEVICES)
def test_devices_and_fifos_are_refused_at_once(tmp_path: Path, kind: str, message: str) -> None:
    path = _device(tmp_path, kind)
    done = limited_run([sys.executable, "-m", "pytest_rag", "validate", str(path)], tmp_path)
    assert (done.returncode, done.stderr) == (2, f"pytest-rag: error: {path}: {message}\n")
    _pytest_project(tmp_path, path.name)
    done = limited_run(PYTEST, tmp_path)
    assert done.returncode == 1 and f"pytest-rag: {path}: {message}" in done.stdout


# -- outputs never follow a link out of the run's root (README "## Reliability") ----------

GOLD = "queries: [{id: q1, relevant: {a: 1}}]\nrun: {q1: {retrieved_ids: [a]}}\n"
NOTES = "my notes\n"
#: The option writing each output, and the name the link is planted under.
OUTPUTS = [pytest.param(["--rag-html", "report.html"], "report.html", id="html"),
           pytest.param(["--rag-report", "report.json"], "report.json", id="json-report"),
           pytest.param(["--rag-report-md", "report.md"], "report.md", id="markdown-report"),
           pytest.param(["--rag-update-baseline"], "rag-baseline.json", id="baseline"),
           pytest.param(["--rag-html", "out/report.html"], "out", id="linked-folder")]


def _planted(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A project folder with ``name`` linked to the user's notes (or their folder, for
    ``out``) outside it; the project and the notes."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    notes = home / ("report.html" if name == "out" else "notes.txt")
    notes.write_text(NOTES, encoding="utf-8")
    (project / name).symlink_to(home if name == "out" else notes)
    return project, home


@pytest.mark.parametrize(("options", "name"), OUTPUTS)
def test_an_output_linked_out_of_the_project_is_refused(tmp_path: Path, options: list[str],
                                                        name: str) -> None:
    project, home = _planted(tmp_path, name)
    before = sorted(home.iterdir())
    (project / "gold.yaml").write_text(GOLD, encoding="utf-8")
    _pytest_project(project, "gold.yaml")
    done = limited_run([*PYTEST, *options], project)
    assert done.returncode == 4, done.stdout + done.stderr
    target = project / options[-1] if options[-1] != "--rag-update-baseline" else project / name
    assert f"pytest-rag: {target}: cannot write: links lead it to {home}" in done.stderr
    assert "outside" in done.stderr and "Traceback" not in done.stdout + done.stderr
    assert sorted(home.iterdir()) == before
    assert all(path.read_text(encoding="utf-8") == NOTES for path in before)


def test_an_export_folder_linked_out_of_the_project_is_refused(tmp_path: Path) -> None:
    """A test's ``--rag-export`` folder that links out of the project, with pytest started
    in a subfolder (the current folder is then not the root the rule checks against)."""
    from pytest_rag.plugin.report_files import export_folder

    project, home = tmp_path / "project", tmp_path / "home"
    (project / "exports").mkdir(parents=True)
    (project / "sub").mkdir()
    home.mkdir()
    (project / "gold.yaml").write_text(GOLD, encoding="utf-8")
    _pytest_project(project, "gold.yaml")
    export_folder(project / "exports", "test_rag.py::test_it").symlink_to(home)
    done = limited_run([*PYTEST, "--rag-export=../exports", str(project)], project / "sub")
    said = done.stdout + done.stderr
    assert "--rag-export: could not write" in said and "outside" in said, said
    assert "--rag-export: no dataset file written to " in said, said  # not "wrote"
    assert "Traceback" not in said
    assert list(home.iterdir()) == []


def test_an_output_link_inside_the_project_is_written_through(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "reports").mkdir(parents=True)
    (project / "report.html").symlink_to(project / "reports" / "latest.html")
    (project / "gold.yaml").write_text(GOLD, encoding="utf-8")
    _pytest_project(project, "gold.yaml")
    done = limited_run([*PYTEST, "--rag-html", "report.html"], project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "report.html").is_symlink()
    assert (project / "reports" / "latest.html").read_text(encoding="utf-8").startswith(
        "<!DOCTYPE html>")


CONVERT_OUTPUTS = [
    pytest.param("notes.yaml", "links lead it to {home}/notes.txt, outside {project}",
                 id="linked-file"),
    pytest.param("out/x.yaml", "links lead it to {home}/x.yaml, outside {project}",
                 id="linked-folder"),
    pytest.param("folder.yaml", "Is a directory", id="a-folder"),
    pytest.param("/proc/x.yaml", "No such file or directory", id="proc"),
]


@pytest.mark.parametrize(("output", "problem"), CONVERT_OUTPUTS)
def test_convert_refuses_an_output_it_cannot_or_must_not_write(tmp_path: Path, output: str,
                                                               problem: str) -> None:
    project, home = _planted(tmp_path, "out")
    (home / "notes.txt").write_text(NOTES, encoding="utf-8")
    (project / "notes.yaml").symlink_to(home / "notes.txt")
    (project / "folder.yaml").mkdir()
    (project / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    before = {path: path.read_text(encoding="utf-8") for path in home.iterdir()}
    done = limited_run([sys.executable, "-m", "pytest_rag", "convert", "trec", "--qrels",
                        "qrels.txt", "-o", output], project)
    assert done.returncode == 2, done.stderr
    message = problem.format(home=home.resolve(), project=project.resolve())
    assert done.stderr.startswith(f"pytest-rag: error: {output}: cannot write: {message}")
    assert {path: path.read_text(encoding="utf-8") for path in home.iterdir()} == before


# -- a BEIR folder's files never lead out of it ("path:" documents' rule) ------------------

BEIR = {"corpus.jsonl": '{"_id": "d1", "text": "inside"}\n',
        "queries.jsonl": '{"_id": "q1", "text": "what?"}\n',
        "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n"}
SECRET = "SECRET line that is not JSON {\n"
#: The file (or folder) of the BEIR folder that is a link to the user's files.
BEIR_LINKS = [pytest.param("corpus.jsonl", id="corpus"),
              pytest.param("queries.jsonl", id="queries"),
              pytest.param("qrels/test.tsv", id="qrels-file"),
              pytest.param("qrels", id="qrels-folder")]


def _beir_with_link(tmp_path: Path, linked: str) -> tuple[Path, Path]:
    """A project with a BEIR folder ``beir`` whose ``linked`` leads to ``home``; both."""
    project, home = tmp_path / "project", tmp_path / "home"
    folder = project / "beir"
    for name, text in BEIR.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
        (home / name).write_text(SECRET, encoding="utf-8")
    if linked == "qrels":
        for child in (folder / "qrels").iterdir():
            child.unlink()
        (folder / "qrels").rmdir()
    else:
        (folder / linked).unlink()
    (folder / linked).symlink_to(home / linked)
    return project, home


@pytest.mark.parametrize("linked", BEIR_LINKS)
def test_a_beir_file_linked_out_of_its_folder_is_refused(tmp_path: Path, linked: str) -> None:
    project, home = _beir_with_link(tmp_path, linked)
    shown = "qrels/test.tsv" if linked == "qrels" else linked
    expected = (f"beir/{shown}: links lead it outside the dataset's folder "
                f"'{(project / 'beir').resolve()}', to '{(home / shown).resolve()}'")
    for command in (["validate", "beir"], ["convert", "beir", "beir", "-o", "out.yaml"]):
        done = limited_run([sys.executable, "-m", "pytest_rag", *command], project)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"pytest-rag: error: {expected}"), done.stderr
        assert "SECRET" not in done.stdout + done.stderr
        assert not (project / "out.yaml").exists()
    _pytest_project(project, "beir")
    done = limited_run(PYTEST, project)
    assert done.returncode == 1 and f"pytest-rag: {project}/{expected}" in done.stdout, done.stdout
    assert "SECRET" not in done.stdout + done.stderr and "Traceback" not in done.stdout
    done = limited_run([sys.executable, "-m", "pytest_rag", "validate", "beir",
                        "--allow-outside-paths"], project)
    assert "links lead" not in done.stderr  # allowed: read (the file's own errors, if any)


# -- no raw control character on the terminal (README "## Reliability") ------------------

HOSTILE_ID = "q\x1b[2J\x07\u202e\x9b1"
#: What a terminal must never receive: C0 (but the line break), DEL, C1, bidi controls.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _no_raw_controls(done: subprocess.CompletedProcess[str]) -> None:
    assert not RAW.findall(done.stdout + done.stderr), done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def _hostile_baseline(value: float, query_value: float) -> str:
    entry = {"gold": {"queries": {HOSTILE_ID: "0" * 16}},
             "metrics": {"recall_at_k": {"value": value, "direction": "higher",
                                         "tolerance": 0.01, "relative": False}},
             "per_query": {"recall_at_k": {HOSTILE_ID: query_value}}}
    return json.dumps({"format": "pytest-rag-baseline", "version": 1,
                       "tests": {f"t.py::test[{HOSTILE_ID}]": {"retrieval": entry}}},
                      ensure_ascii=False)


def test_hostile_ids_reach_no_terminal_raw_from_diff(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text(_hostile_baseline(1.0, 1.0), encoding="utf-8")
    (tmp_path / "new.json").write_text(_hostile_baseline(0.0, 0.0), encoding="utf-8")
    done = limited_run([sys.executable, "-m", "pytest_rag", "diff", "old.json", "new.json"],
                       tmp_path)
    assert done.returncode == 1, done.stderr  # a regression
    assert "t.py::test[q\\x1b[2J\\x07\\u202e\\x9b1] [retrieval]" in done.stdout
    _no_raw_controls(done)


HOSTILE_GOLD = json.dumps({"queries": [{"id": HOSTILE_ID, "relevant": {"a": 1}}],
                           "run": {HOSTILE_ID: {"retrieved_ids": ["a"]}}}, ensure_ascii=False)


def test_hostile_ids_reach_no_terminal_raw_from_pytest(tmp_path: Path) -> None:
    (tmp_path / "gold.json").write_text(HOSTILE_GOLD, encoding="utf-8")
    _pytest_project(tmp_path, "gold.json")
    done = limited_run([*PYTEST, "--rag-update-baseline"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    baseline = json.loads((tmp_path / "rag-baseline.json").read_text(encoding="utf-8"))
    # A test that no longer exists (an end-of-run note) and edited gold (the gold-change line).
    baseline["tests"][f"gone.py::test[{HOSTILE_ID}]"] = baseline["tests"]["test_rag.py::test_it"]
    for entry in baseline["tests"].values():  # the query's gold fingerprint, edited
        table = entry["retrieval"]["per_query"]
        table["rows"][HOSTILE_ID][table["columns"].index("#gold")] = "0" * 16
    (tmp_path / "rag-baseline.json").write_text(json.dumps(baseline), encoding="utf-8")
    done = limited_run([*PYTEST, "--rag-baseline"], tmp_path)
    assert "1 query edited (q\\x1b[2J\\x07\\u202e\\x9b1)" in done.stdout
    assert "gone.py::test[q\\x1b[2J\\x07\\u202e\\x9b1]" in done.stdout
    _no_raw_controls(done)


def test_hostile_ids_reach_no_terminal_raw_from_the_loader(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text(f"{HOSTILE_ID},x\n1,2\n", encoding="utf-8")
    (tmp_path / "beir" / "qrels").mkdir(parents=True)
    (tmp_path / "beir" / "qrels" / f"{HOSTILE_ID}.tsv").write_text("", encoding="utf-8")
    for name in ("rows.csv", "beir"):
        done = limited_run([sys.executable, "-m", "pytest_rag", "validate", name], tmp_path)
        assert done.returncode == 2 and "'q\\x1b[2J\\x07\\u202e\\x9b1'" in done.stderr
        _no_raw_controls(done)
        _pytest_project(tmp_path, name)
        done = limited_run(PYTEST, tmp_path)
        assert done.returncode == 1 and "'q\\x1b[2J\\x07\\u202e\\x9b1'" in done.stdout
        _no_raw_controls(done)


class _Isolation(html.parser.HTMLParser):
    """The text of an HTML page that holds a bidirectional control outside ``<bdi>`` and
    ``<code>`` (both isolated from the text direction around them)."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.exposed: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag not in ("br", "meta", "link", "img", "input", "hr"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        if "\u202e" in data and not {"bdi", "code", "style", "script"} & set(self.open):
            self.exposed.append(f"{'/'.join(self.open)}: {data[:80]!r}")


def test_hostile_ids_are_isolated_in_the_html_report(tmp_path: Path) -> None:
    chunk = "c\u202eevil"
    gold = {"documents": [{"id": "d", "text": "abc"}],
            "chunks": [{"id": chunk, "doc_id": "d", "start": 0, "end": 1},
                       {"id": "b", "doc_id": "d", "start": 1, "end": 2}],
            "queries": [{"id": HOSTILE_ID, "question": "why?", "relevant": {chunk: 1, "b": 1}}],
            "run": {HOSTILE_ID: {"retrieved_ids": [chunk], "context_ids": [chunk],
                                 "answer": "x", "cited_ids": [chunk]}}}
    (tmp_path / "gold.json").write_text(json.dumps(gold, ensure_ascii=False), encoding="utf-8")
    _pytest_project(tmp_path, "gold.json")
    done = limited_run([*PYTEST, "--rag-html", "report.html"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.count(chunk) >= 3  # the ranked list, the context list, the gold grades
    check = _Isolation()
    check.feed(page)
    assert check.exposed == []


# -- no traceback where a clear error is promised -------------------------------------------

RAGAS_HEADER = "user_input,retrieved_contexts\n"
#: ragas CSV cells: a long context is read; a cell that is no list of strings is refused.
RAGAS_CELLS = [
    pytest.param('q,"[""' + "x" * 140_000 + '""]"\n', None, id="cell-over-131072"),
    pytest.param('q,"{[1]: 2}"\n', "got '{[1]: 2}'", id="unhashable-literal"),
    pytest.param('q,"' + "[" * 100_000 + "]" * 100_000 + '"\n',
                 "got '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[…(199,940 characters left out)…"
                 "]]]]]]]]]]]]]]]]]]]]'", id="deep-list"),
    pytest.param('q,"' + "[" * 500 + "]" * 500 + '"\n', "got a list at [0]", id="nested-list"),
]


@pytest.mark.parametrize(("row", "problem"), RAGAS_CELLS)
def test_ragas_cells_give_a_result_or_a_clear_error(tmp_path: Path, row: str,
                                                     problem: str | None) -> None:
    (tmp_path / "rows.csv").write_text(RAGAS_HEADER + row, encoding="utf-8")
    done = limited_run([sys.executable, "-m", "pytest_rag", "validate", "rows.csv"], tmp_path)
    _pytest_project(tmp_path, "rows.csv")
    run = limited_run(PYTEST, tmp_path)
    _no_raw_controls(done)
    _no_raw_controls(run)
    if problem is None:
        assert done.returncode == 0 and run.returncode == 0, done.stderr + run.stdout
        return
    message = f"rows.csv: row 1 (line 2): retrieved_contexts: expected a list of strings, {problem}"
    assert (done.returncode, done.stderr) == (2, f"pytest-rag: error: {message}\n")
    assert run.returncode == 1 and f"pytest-rag: {tmp_path}/{message}" in run.stdout


def test_diff_reads_a_null_gold_as_no_gold(tmp_path: Path) -> None:
    entry = {"metrics": {"recall_at_k": 0.5}, "gold": {"queries": {"q1": "0" * 16}}}
    for name, gold in (("old.json", entry["gold"]), ("new.json", None)):
        (tmp_path / name).write_text(json.dumps({"format": "pytest-rag-baseline", "version": 1,
                                                 "tests": {"t.py::test": {"retrieval": {
                                                     **entry, "gold": gold}}}}),
                                     encoding="utf-8")
    for old, new in (("old.json", "new.json"), ("new.json", "old.json")):
        done = limited_run([sys.executable, "-m", "pytest_rag", "diff", old, new], tmp_path)
        assert (done.returncode, done.stdout) == (0, "no differences; 0 regressed, 0 improved\n")
        _no_raw_controls(done)


def _recorded_project(tmp_path: Path) -> dict[str, object]:
    """A project with a recorded baseline, then its run changed; the baseline's JSON."""
    (tmp_path / "gold.yaml").write_text(GOLD, encoding="utf-8")
    _pytest_project(tmp_path, "gold.yaml")
    assert limited_run([*PYTEST, "--rag-update-baseline"], tmp_path).returncode == 0
    (tmp_path / "gold.yaml").write_text(GOLD.replace("[a]", "[b, a]"), encoding="utf-8")
    return dict(json.loads((tmp_path / "rag-baseline.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("where", ["settings", "gold"])
def test_nan_in_another_entry_is_refused_not_a_crash(tmp_path: Path, where: str) -> None:
    baseline = _recorded_project(tmp_path)
    tests = baseline["tests"]
    assert isinstance(tests, dict)
    other = json.loads(json.dumps(tests["test_rag.py::test_it"]))
    other["retrieval"][where] = {"k": math.nan}
    tests["other.py::test"] = other
    text = json.dumps(baseline)
    (tmp_path / "rag-baseline.json").write_text(text, encoding="utf-8")
    done = limited_run([*PYTEST, "--rag-update-baseline"], tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert (f"baseline file '{tmp_path}/rag-baseline.json': tests['other.py::test']"
            f"['retrieval'].{where}.k: nan is not a JSON number") in done.stderr
    assert (tmp_path / "rag-baseline.json").read_text(encoding="utf-8") == text
    _no_raw_controls(done)


def test_a_baseline_the_reader_would_refuse_is_not_written(tmp_path: Path) -> None:
    before = json.dumps(_recorded_project(tmp_path))
    (tmp_path / "pytest.ini").write_text("[pytest]\nrag_dataset = gold.yaml\n"
                                         "rag_tolerance = 1e301\n", encoding="utf-8")
    done = limited_run([*PYTEST, "--rag-update-baseline"], tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "not written: its reader would refuse it" in done.stdout and "got 1e+301" in done.stdout
    assert json.loads((tmp_path / "rag-baseline.json").read_text()) == json.loads(before)
    done = limited_run([*PYTEST, "--rag-baseline"], tmp_path)  # the file still reads
    assert done.returncode == 0, done.stdout + done.stderr  # (within a 1e301 tolerance)
    _no_raw_controls(done)


# -- reading other tools' files as they are written ------------------------------------------

#: Valid JSON Lines with raw line separators inside strings (legal JSON): read, not split.
SEPARATORS = [pytest.param("\u2028", id="U+2028"), pytest.param("\u2029", id="U+2029"),
              pytest.param("\u0085", id="U+0085")]


@pytest.mark.parametrize("separator", SEPARATORS)
def test_json_lines_with_raw_separators_in_strings_are_read(tmp_path: Path,
                                                            separator: str) -> None:
    rows = [{"user_input": f"why{separator}now?", "retrieved_contexts": [f"a{separator}b"],
             "reference_contexts": [f"a{separator}b"], "response": "x", "reference": "x"}]
    (tmp_path / "rows.jsonl").write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    (tmp_path / "beir" / "qrels").mkdir(parents=True)
    for name, record in (("corpus.jsonl", {"_id": "d1", "text": f"x{separator}y"}),
                         ("queries.jsonl", {"_id": "q1", "text": f"why{separator}?"})):
        (tmp_path / "beir" / name).write_text(json.dumps(record, ensure_ascii=False) + "\n",
                                              encoding="utf-8")
    (tmp_path / "beir" / "qrels" / "test.tsv").write_text("q1\td1\t1\n", encoding="utf-8")
    for name in ("rows.jsonl", "beir"):
        done = limited_run([sys.executable, "-m", "pytest_rag", "validate", name], tmp_path)
        assert done.returncode == 0 and "1 queries" in done.stdout, done.stderr
        _pytest_project(tmp_path, name)
        run = limited_run(PYTEST, tmp_path)
        assert run.returncode == 0, run.stdout + run.stderr


#: TREC numbers trec_eval would not read as written (it reads ASCII digits only).
TREC_NUMBERS = [
    pytest.param("q.qrels", "1 0 d \uff11\n", "relevance '\uff11'", id="full-width-grade"),
    pytest.param("q.qrels", "1 0 d \u0663\n", "relevance '\u0663'", id="arabic-indic-grade"),
    pytest.param("q.qrels", "1 0 d 1_0\n", "relevance '1_0'", id="underscore-grade"),
    pytest.param("run.txt", "1 Q0 d 1 1_0 x\n", "score '1_0'", id="underscore-score"),
    pytest.param("run.txt", "1 Q0 d 1 \uff11 x\n", "score '\uff11'", id="full-width-score"),
]


@pytest.mark.slow  # a process per case; tests/unit/test_sources.py reads them in-process
@pytest.mark.parametrize(("name", "line", "what"), TREC_NUMBERS)
def test_trec_numbers_are_read_as_trec_eval_reads_them(tmp_path: Path, name: str, line: str,
                                                       what: str) -> None:
    qrels = "# judged\n1 0 d 1\n" if name == "run.txt" else f"# judged\n{line}"
    (tmp_path / "q.qrels").write_text(qrels, encoding="utf-8")
    (tmp_path / "run.txt").write_text(f"# a run\n{line}" if name == "run.txt" else "",
                                      encoding="utf-8")
    args = ["validate", "q.qrels"] + (["--run", "run.txt"] if name == "run.txt" else [])
    done = limited_run([sys.executable, "-m", "pytest_rag", *args], tmp_path)
    number = "whole number" if what.startswith("relevance") else "finite number"
    message = f"{name}: line 2: {what} is not a {number} in ASCII digits"
    assert (done.returncode, done.stderr) == (2, f"pytest-rag: error: {message}\n")
    run = "\nrag_run = run.txt" if name == "run.txt" else ""
    (tmp_path / "pytest.ini").write_text(f"[pytest]\nrag_dataset = q.qrels{run}\n",
                                         encoding="utf-8")
    (tmp_path / "test_rag.py").write_text("def test_it(rag):\n    rag.evaluate()\n",
                                          encoding="utf-8")
    done = limited_run(PYTEST, tmp_path)
    assert done.returncode == 1 and f"pytest-rag: {tmp_path}/{message}" in done.stdout, (
        done.stdout)


# -- every message stays readable -------------------------------------------------------

LONG_ID = "q" * 4_000_000


def test_a_multi_megabyte_id_is_cut_in_loader_errors(tmp_path: Path) -> None:
    gold = {"queries": [{"id": LONG_ID, "relevant": {"a": 1}}] * 2}
    (tmp_path / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    done = limited_run([sys.executable, "-m", "pytest_rag", "validate", "gold.json"], tmp_path)
    assert done.returncode == 2 and len(done.stderr) < 2_000, done.stderr[:300]
    assert "characters left out)" in done.stderr and "queries[1].id (query 'qqq" in done.stderr
    assert "line 1): duplicate query id" in done.stderr
    _pytest_project(tmp_path, "gold.json")
    done = limited_run([*PYTEST, "--junitxml=junit.xml"], tmp_path)
    assert done.returncode == 1 and len(done.stdout) < 5_000, done.stdout[:300]
    assert (tmp_path / "junit.xml").stat().st_size < 10_000


def test_a_multi_megabyte_id_is_cut_in_failure_text(tmp_path: Path) -> None:
    good = {"queries": [{"id": LONG_ID, "relevant": {"a": 1}}],
            "run": {LONG_ID: {"retrieved_ids": ["a"]}}}
    (tmp_path / "gold.json").write_text(json.dumps(good), encoding="utf-8")
    _pytest_project(tmp_path, "gold.json")
    assert limited_run([*PYTEST, "--rag-update-baseline"], tmp_path).returncode == 0
    good["run"] = {LONG_ID: {"retrieved_ids": ["b"]}}
    (tmp_path / "gold.json").write_text(json.dumps(good), encoding="utf-8")
    done = limited_run([*PYTEST, "--rag-baseline", "--junitxml=junit.xml"], tmp_path)
    assert done.returncode == 1, done.stdout[-2_000:]
    assert "queries worse in" in done.stdout and "characters left out)" in done.stdout
    assert len(done.stdout) < 20_000
    assert (tmp_path / "junit.xml").stat().st_size < 30_000


# -- one chunk of millions of sentences ----------------------------------------------------

#: One document as one chunk.  "a. " 2,000,000 times: 2e12 (sentence pair, shared word)
#: counts, all of identical sentences, measured exactly (1.0).  500,000 different
#: sentences sharing "the": 1.25e11 counts, over the limit, not measured.
HUGE_CHUNKS = [pytest.param("a. " * 2_000_000, "1.000", id="identical-sentences"),
               pytest.param(" ".join(f"the w{i}." for i in range(500_000)),
                            "not measured  chunk 'whole' has 124,999,750,000 (sentence pair, "
                            "shared word) counts, over the limit of 200,000,000 per chunk",
                            id="sentences-sharing-a-word")]


@pytest.mark.slow  # seconds each; tests/unit/test_cohesion.py measures such chunks in-process
@pytest.mark.parametrize(("text", "shown"), HUGE_CHUNKS)
def test_lexical_cohesion_of_one_huge_chunk_ends_within_the_limits(tmp_path: Path, text: str,
                                                                   shown: str) -> None:
    """The pairs of sentences grow with the square of a chunk's sentences: these took
    days.  Through the command line and through pytest: a value or the reason."""
    gold = {"documents": [{"id": "d", "text": text}],
            "chunks": [{"id": "whole", "doc_id": "d", "start": 0, "end": len(text)}]}
    (tmp_path / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    done = limited_run([sys.executable, "-m", "pytest_rag", "evaluate", "gold.json",
                        "--stage", "chunking"], tmp_path)
    assert done.returncode == 0, done.stderr[-2_000:]
    assert re.search(r"^lexical_cohesion +" + re.escape(shown), done.stdout, re.MULTILINE)
    _pytest_project(tmp_path, "gold.json")
    measured = shown == "1.000"
    (tmp_path / "test_rag.py").write_text(
        "def test_it(rag):\n"
        "    report = rag.evaluate()['chunking']\n"
        f"    assert report['lexical_cohesion'] == {1.0 if measured else None}\n"
        f"    assert {not measured} == ('over the limit' in "
        "report.missing.get('lexical_cohesion', ''))\n", encoding="utf-8")
    done = limited_run(PYTEST, tmp_path)
    assert done.returncode == 0, done.stdout[-2_000:] + done.stderr[-2_000:]
    assert "Traceback" not in done.stdout + done.stderr
