"""The command line: ``pytest-rag evaluate|metrics|validate|diff``.

Exit status: 0 on success, 1 when ``diff`` finds a regression, 2 for bad input
or usage (the message on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from .compare.argtypes import latency_tolerance, non_negative, significance_level
from .errors import DatasetError, did_you_mean
from .escaping import terminal_lines
from .registry import STAGES
from .settings import SETTINGS, SettingError, parse_setting_text, setting

__all__ = ["main", "run"]

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2
#: The shell's status of a process ended by SIGINT (Ctrl-C) and by SIGPIPE (a closed pipe).
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141


class _Escaped:
    """A text stream whose writes pass :func:`~pytest_rag.escaping.terminal_lines`: control
    and bidirectional characters of ids become visible escapes; line breaks stay."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(terminal_lines(text))

    def flush(self) -> None:
        self.stream.flush()


def _stage(text: str) -> str:
    """``--stage``: one of the seven stages, with the closest one suggested."""
    if text not in STAGES:
        raise argparse.ArgumentTypeError(f"unknown stage {text!r}{did_you_mean(text, STAGES)}; "
                                         f"the stages: {', '.join(STAGES)}")
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pytest-rag",
        description="Deterministic RAG metrics from gold data and pipeline output.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    evaluate = commands.add_parser(
        "evaluate", help="evaluate every stage a dataset file has data for",
        description="Evaluate a gold dataset with its run (FORMAT pytest-rag/v1, YAML or JSON).")
    evaluate.add_argument("file", metavar="FILE",
                          help="dataset: a .yaml, .yml or .json file, a BEIR folder, a ragas "
                               ".jsonl or .csv file, or TREC qrels")
    evaluate.add_argument("--run", metavar="RUN", default=None,
                          help="run file replacing the dataset's run: a 'run' section on its "
                               "own (.yaml/.json) or a TREC run file")
    evaluate.add_argument("--stage", action="append", type=_stage, metavar="STAGE",
                          help=f"evaluate only this stage (repeatable): {', '.join(STAGES)}")
    evaluate.add_argument("--format", choices=("table", "json"), default="table",
                          help="table: one table per stage (default); json: one object "
                               "{stage: {key: value}} with null for not measured")
    _add_settings(evaluate, "evaluate")

    metrics = commands.add_parser("metrics",
                                  help="list the metrics: key, direction, meaning, needs")
    metrics.add_argument("--stage", type=_stage, metavar="STAGE",
                         help=f"only this stage: {', '.join(STAGES)}")
    metrics.add_argument("--format", choices=("table", "markdown", "json"), default="table",
                         help="table (default), markdown (the README's table) or json")

    diff = commands.add_parser(
        "diff", help="compare two baseline or report files (exit 1 on a regression)",
        description="Compare two pytest-rag baseline files or --rag-report files, metric by "
                    "metric, with a paired randomization test and a bootstrap interval.")
    diff.add_argument("old", metavar="OLD", help="the reference baseline or report")
    diff.add_argument("new", metavar="NEW", help="the baseline or report to judge")
    diff.add_argument("--significance", type=significance_level, default=None, metavar="ALPHA",
                      help="a regression fails only when also significant at ALPHA "
                           "(e.g. 0.05); otherwise it is reported as within noise (a metric "
                           "that cannot be tested is judged by its tolerance alone)")
    diff.add_argument("--tolerance", type=non_negative, default=None, metavar="AMOUNT",
                      help="absolute tolerance for ratio metrics, instead of the ones stored "
                           "in OLD (default: the stored ones, else 0.01)")
    diff.add_argument("--relative-tolerance", type=non_negative, default=None,
                      metavar="FRACTION",
                      help="relative tolerance for cost and tokens, instead of the ones "
                           "stored in OLD (default: the stored ones, else 0.10)")
    diff.add_argument("--latency-tolerance", type=latency_tolerance, default=None,
                      metavar="'PERCENT% + MS'",
                      help="tolerance for latency, instead of the ones stored in OLD "
                           "(default: the stored ones, else '100%% + 5': twice the old value "
                           "plus 5 ms)")
    diff.add_argument("--all", action="store_true", help="also list unchanged metrics")

    convert = commands.add_parser(
        "convert", help="write TREC, BEIR or ragas data as a pytest-rag dataset file",
        description="Convert files of other tools to FORMAT pytest-rag/v1, written as YAML "
                    "or JSON by the extension of -o.")
    kinds = convert.add_subparsers(dest="kind", required=True, metavar="KIND")
    trec = kinds.add_parser("trec", help="TREC qrels, and optionally a run")
    trec.add_argument("--qrels", required=True, metavar="QRELS",
                      help="qrels: topic iteration docno relevance")
    trec.add_argument("--run", default=None, metavar="RUN",
                      help="run: topic Q0 docno rank score tag (ordered as trec_eval does)")
    _add_settings(trec, "convert trec")
    beir = kinds.add_parser("beir", help="a BEIR folder: corpus.jsonl, queries.jsonl, qrels/")
    beir.add_argument("folder", metavar="DIR")
    beir.add_argument("--split", default="test", help="qrels/SPLIT.tsv (default: test)")
    ragas = kinds.add_parser("ragas", help="ragas rows as .jsonl or .csv")
    ragas.add_argument("file", metavar="FILE")
    for kind in (trec, beir, ragas):
        kind.add_argument("-o", "--output", required=True, metavar="OUT",
                          help="the dataset file to write (.yaml, .yml or .json)")

    validate = commands.add_parser("validate", help="check a dataset file against the format")
    validate.add_argument("file", metavar="FILE")
    validate.add_argument("--run", metavar="RUN", default=None,
                          help="a run file to check with it (see evaluate --run)")
    _add_settings(validate, "validate")
    return parser


class _SettingAction(argparse.Action):
    """Stores a setting's value, checked by the one rule of :mod:`pytest_rag.settings`
    (a repeatable list setting collects its values)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        words = [values] if isinstance(values, str) else [str(value) for value in values or ()]
        if setting(self.dest).kind == "strings":
            words = [*(getattr(namespace, self.dest, None) or ()), *words]
        elif not "".join(words).strip():  # a flag given a blank value: unset, never default
            raise argparse.ArgumentError(self, f"expected a value, got {' '.join(words)!r}")
        try:
            value = parse_setting_text(self.dest, words)
        except SettingError as error:
            # argparse names the flag; an item of a pair is named by its metavar.
            item = error.place.removeprefix(self.dest)
            if item[:1] == "[" and isinstance(self.metavar, tuple):
                item = self.metavar[int(item[1:-1])]
            raise argparse.ArgumentError(
                self, f"{item}: {error.problem}" if item else error.problem) from None
        setattr(namespace, self.dest, value)


def _add_settings(parser: argparse.ArgumentParser, command: str) -> None:
    """The flags of the settings that ``command`` takes, from the settings table."""
    for row in SETTINGS:
        if command not in row.commands:
            continue
        # An evaluator setting left out is None: the file's params decide, then the default.
        default = row.default if row.scope == "loader" else None
        if row.kind == "flag":
            parser.add_argument(row.cli_flag, dest=row.name, action="store_true",
                                default=default, help=row.help_text)
        else:
            parser.add_argument(row.cli_flag, dest=row.name, action=_SettingAction,
                                nargs=2 if row.kind == "pair" else None, default=default,
                                metavar=row.metavar, help=row.help_text + (
                                    " (repeatable)" if row.kind == "strings" else ""))


def _evaluate(args: argparse.Namespace, out: _Escaped) -> int:
    from .dataset.loading import load_dataset
    from .formatting import settings_text
    from .reports.tables import measured, report_table, reports_json
    from .stages.evaluate import evaluate_dataset, evaluator_settings

    dataset = load_dataset(args.file, run=args.run, allow_outside_paths=args.allow_outside_paths,
                           relevance_level=args.relevance_level)
    chosen = {name: getattr(args, name) for name in evaluator_settings()
              if getattr(args, name, None) is not None}
    reports = evaluate_dataset(dataset, args.stage, **chosen)
    args.keep.extend((dataset, reports))
    if args.format == "json":
        json.dump(reports_json(reports), out, indent=2, allow_nan=False)
        out.write("\n")
        return EXIT_OK
    shown = measured(reports.values())
    for report in shown:
        settings = settings_text(report.settings)
        out.write(f"{report.stage}" + (f" ({settings})" if settings else "") + "\n")
        out.write(report_table(report) + "\n\n")
    skipped = [stage for stage, report in reports.items() if report not in shown]
    if skipped:
        out.write("not measured (no data): " + ", ".join(skipped) + "\n")
    return EXIT_OK


def _metrics(args: argparse.Namespace, out: _Escaped) -> int:
    from .reports.tables import registry_rows, registry_table

    if args.format == "json":
        rows = [{"stage": spec.stage, "key": spec.key, "title": spec.title,
                 "direction": spec.direction.value, "meaning": spec.meaning,
                 "formula": spec.formula, "needs": list(spec.needs), "unit": spec.unit}
                for spec in registry_rows(args.stage)]
        json.dump(rows, out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(registry_table(args.stage, markdown=args.format == "markdown") + "\n")
    return EXIT_OK


def _diff(args: argparse.Namespace, out: _Escaped) -> int:
    from pathlib import Path

    from .compare.diff import diff_files, load_scores
    from .compare.thresholds import Tolerances
    from .reports.tables import render_diff

    old = load_scores(Path(args.old))
    new = load_scores(Path(args.new))
    defaults = Tolerances()
    asked = (args.tolerance, args.relative_tolerance, args.latency_tolerance)
    rows = diff_files(old, new, alpha=args.significance, tolerances=Tolerances(
        defaults.absolute if args.tolerance is None else args.tolerance,
        defaults.relative if args.relative_tolerance is None else args.relative_tolerance,
        latency=defaults.latency if args.latency_tolerance is None else args.latency_tolerance),
        # Asked for on the command line: these replace what OLD stored.
        stored_tolerances=all(value is None for value in asked))
    out.write(render_diff(rows, show_all=args.all) + "\n")
    return EXIT_REGRESSION if any(row.failed for row in rows) else EXIT_OK


def _convert(args: argparse.Namespace, out: _Escaped) -> int:
    from pathlib import Path

    from .dataset.sources import beir_dataset, ragas_dataset, trec_dataset, write_dataset

    if args.kind == "trec":
        data = trec_dataset(Path(args.qrels), None if args.run is None else Path(args.run),
                            relevance_level=args.relevance_level)
    elif args.kind == "beir":
        folder = Path(args.folder)
        if not folder.is_dir():
            raise DatasetError(args.folder, "", "not a folder (a BEIR dataset is a folder)")
        data = beir_dataset(folder, split=args.split)
    else:
        data = ragas_dataset(Path(args.file))
    output = Path(args.output)
    write_dataset(data, output)
    out.write(f"{output}: written, " + _counts(*(len(data.get(section, ())) for section in (
        "documents", "chunks", "queries", "run"))) + "\n")
    return EXIT_OK


def _counts(documents: int, chunks: int, queries: int, run: int) -> str:
    return f"{documents} documents, {chunks} chunks, {queries} queries, {run} run entries"


def _validate(args: argparse.Namespace, out: _Escaped) -> int:
    from .dataset.loading import load_dataset
    from .stages.evaluate import evaluate_dataset

    dataset = load_dataset(args.file, run=args.run, allow_outside_paths=args.allow_outside_paths,
                           relevance_level=args.relevance_level)
    # One validation path: what evaluate would refuse, validate refuses.
    args.keep.extend((dataset, evaluate_dataset(dataset)))
    out.write(f"{args.file}: valid pytest-rag/v1: " + _counts(
        len(dataset.documents), len(dataset.chunks), len(dataset.queries), len(dataset.run))
        + "\n")
    return EXIT_OK


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None,
         err: TextIO | None = None, keep: list[object] | None = None) -> int:
    """Run the command line; returns the exit status.

    ``keep`` receives the large objects a command built (the dataset it read
    and its reports), for a caller that ends the process without freeing them
    (:func:`run`).
    """
    raw_out = out if out is not None else sys.stdout
    # Every line printed goes through the one escaping rule (ids in tables and messages).
    stdout, stderr = _Escaped(raw_out), _Escaped(err if err is not None else sys.stderr)
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    args.keep = [] if keep is None else keep
    handlers = {"evaluate": _evaluate, "metrics": _metrics, "validate": _validate,
                "diff": _diff, "convert": _convert}
    from .compare.baseline import BaselineError

    try:
        status = handlers[args.command](args, stdout)
        stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except BrokenPipeError:
        _silence(raw_out)
        return EXIT_CLOSED_PIPE
    except KeyboardInterrupt:
        stderr.write("pytest-rag: interrupted\n")
        return EXIT_INTERRUPTED
    except MemoryError:
        stderr.write("pytest-rag: error: out of memory: the input is too large for the memory "
                     "available\n")
        return EXIT_BAD_INPUT
    except BaselineError as error:
        stderr.write(f"pytest-rag: error: {error}\n")
        return EXIT_BAD_INPUT
    except DatasetError as error:
        stderr.write(f"pytest-rag: error: {error}\n")
        return EXIT_BAD_INPUT
    except ValueError as error:
        stderr.write(f"pytest-rag: error: {error}\n")
        return EXIT_BAD_INPUT


def run() -> NoReturn:
    """The process entry of ``pytest-rag`` and ``python -m pytest_rag``.

    :func:`main`, then the process ends at once with its status, its output
    flushed: what the command built is not freed object by object (50 ms for
    a dataset of 20,000 queries x 100 ids, a tenth of such a run) and the
    interpreter is not torn down.  No command leaves a file open or registers
    an exit handler, so nothing else is skipped.
    """
    kept: list[object] = []
    status = main(keep=kept)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing left to write
            pass
    os._exit(status)


def _silence(stream: TextIO) -> None:
    """Point a closed standard output at the null device, so that the interpreter's last
    flush finds nothing to complain about (as the Python docs advise for SIGPIPE)."""
    if stream is not sys.stdout:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):  # no file descriptor behind it: nothing left to flush
        pass


if __name__ == "__main__":  # pragma: no cover
    run()
