"""The plugin's command-line and ini options, parsed once into :class:`RagOptions`."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from ..compare.argtypes import non_negative, significance_level
from ..errors import unknown_names
from ..settings import (
    SETTINGS,
    Setting,
    SettingError,
    parse_setting_text,
    setting,
)

if TYPE_CHECKING:
    from ..compare.thresholds import Threshold, Tolerances
    from ..registry import MetricSpec

__all__ = ["RagOptions", "add_options", "ini_names", "refuse_unknown_flags"]

DEFAULT_BASELINE = "rag-baseline.json"
_FROM_INI = "\0ini"
SCORECARD_MODES = ("off", "summary", "full")


#: The ini options that are not settings: name, help, type, default.
_INI_OPTIONS: tuple[tuple[str, str, Literal["string", "linelist"], object], ...] = (
    ("rag_dataset", ("gold dataset file for the rag_dataset fixture (relative to the ini "
                     "file)"), "string", ""),
    ("rag_run", ("run file replacing the run of the rag_dataset dataset (relative to the ini "
                 "file)"), "string", ""),
    ("rag_baseline", f"baseline file (default {DEFAULT_BASELINE} at the rootdir)", "string", ""),
    ("rag_thresholds", "thresholds, one per line: stage.metric OP number", "linelist", []),
    ("rag_tolerance", "absolute tolerance for ratio metrics", "string", "0.01"),
    ("rag_relative_tolerance", "relative tolerance for cost and tokens", "string", "0.10"),
    ("rag_latency_tolerance", ("tolerance for latency, which is measured: 'PERCENT% + MS' "
                               "(fail beyond the baseline plus PERCENT plus MS)"),
     "string", "100% + 5"),
    ("rag_tolerances", ("per-metric tolerances, one per line: stage.metric AMOUNT, "
                        "stage.metric PERCENT% or stage.metric PERCENT% + AMOUNT"),
     "linelist", []),
    ("rag_significance", ("significance level for baseline regressions (see "
                          "--rag-significance); empty: every regression beyond the tolerance "
                          "fails"), "string", ""),
    ("rag_scorecard", "scorecard: off, summary or full", "string", "summary"),
)


def ini_names() -> tuple[str, ...]:
    """Every ini option of pytest-rag: the ones above and one per setting."""
    return (*(option[0] for option in _INI_OPTIONS),
            *(row.ini_name for row in SETTINGS if row.ini))


def refuse_unknown_flags(parser: pytest.Parser, args: Sequence[str]) -> None:
    """A ``--rag-*`` word that no plugin or conftest registered is a usage error naming the
    closest option of pytest-rag (pytest alone says "unrecognized arguments", without a
    hint)."""
    _, unknown = parser.parse_known_and_unknown_args(args)
    ours = [arg.split("=", 1)[0] for arg in unknown if arg.startswith("--rag")]
    if ours:
        known = [name for option in parser.getgroup("rag").options for name in option.names()]
        raise pytest.UsageError(f"pytest-rag: unknown option{'s' if len(ours) > 1 else ''} "
                                f"{unknown_names(ours, known)}")


def _refuse_unknown_ini(config: pytest.Config) -> None:
    """A ``rag_*`` ini key that no plugin registered is a usage error naming the closest
    option: a misspelled ``rag_treshold`` would otherwise turn its gate off silently."""
    # pytest's own list of the unregistered keys (it warns about them; pytest >= 6).
    unknown_keys = getattr(config, "_get_unknown_ini_keys", None)
    if unknown_keys is None:
        return
    ours = sorted(key for key in unknown_keys() if key.startswith("rag_"))
    if not ours:
        return
    # A key given with -o/--override-ini is the command line's, not the ini file's.
    overridden = {str(text).partition("=")[0].strip()
                  for text in getattr(config.option, "override_ini", None) or ()}
    problems = []
    for keys, where in (([k for k in ours if k in overridden], "-o/--override-ini: "),
                        ([k for k in ours if k not in overridden],
                         f"{config.inipath.name}: " if config.inipath is not None else "")):
        if keys:
            problems.append(f"{where}unknown ini option{'s' if len(keys) > 1 else ''} "
                            f"{unknown_names(keys, ini_names())}")
    raise pytest.UsageError("pytest-rag: " + "; ".join(problems))


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("rag", "RAG regression metrics (pytest-rag)")
    group.addoption("--rag-dataset", dest="rag_dataset_path", metavar="PATH", default=None,
                    help="gold dataset file for the rag_dataset fixture (overrides ini "
                         "rag_dataset)")
    group.addoption("--rag-run", dest="rag_run_path", metavar="PATH", default=None,
                    help="run file replacing the dataset's run (overrides ini rag_run)")
    group.addoption("--rag-baseline", dest="rag_baseline", nargs="?", const=_FROM_INI,
                    default=None, metavar="PATH",
                    help="compare every recorded metric with the baseline file (default: ini "
                         f"rag_baseline, else {DEFAULT_BASELINE} at the rootdir); a regression "
                         "beyond the tolerance fails the test that recorded it")
    group.addoption("--rag-update-baseline", dest="rag_update_baseline", action="store_true",
                    help="write the recorded metrics of the tests that ran to the baseline file "
                         "(entries of other tests are kept)")
    group.addoption("--rag-update-failed", dest="rag_update_failed", action="store_true",
                    help="with --rag-update-baseline, also record tests that failed, errored "
                         "or xfailed (by default their old entries are kept)")
    group.addoption("--rag-accept", dest="rag_accept", action="store_true",
                    help="with --rag-update-baseline, move every reference to this run's "
                         "numbers, changes within the tolerance included (by default those "
                         "keep the accepted reference, so small losses add up and fail)")
    group.addoption("--rag-prune-baseline", dest="rag_prune_baseline", action="store_true",
                    help="on a full run, remove baseline entries of tests that no longer exist")
    group.addoption("--rag-strict", dest="rag_strict", action="store_true",
                    help="with --rag-baseline, fail a test whose stage has no baseline entry "
                         "and a regression in an xfail test; fail the run when gated tests "
                         "were skipped, or when a run of the whole suite finds baseline "
                         "entries of tests that no longer exist")
    group.addoption("--rag-tolerance", dest="rag_tolerance_cli", type=non_negative,
                    default=None, metavar="AMOUNT",
                    help="absolute tolerance for ratio metrics (overrides ini rag_tolerance, "
                         "default 0.01)")
    group.addoption("--rag-significance", dest="rag_significance", type=significance_level,
                    default=None, metavar="ALPHA",
                    help="with --rag-baseline, a regression beyond the tolerance fails only when a "
                         "paired randomization test over the per-query values finds it "
                         "significant at ALPHA (e.g. 0.05); otherwise it is 'within noise'. "
                         "A metric that cannot be tested (no per-query values, fewer than 2 "
                         "queries) is judged by its tolerance alone")
    group.addoption("--rag-threshold", dest="rag_thresholds_cli", action="append", default=[],
                    metavar="EXPR",
                    help="a threshold for every recorded report of a stage, e.g. "
                         "'retrieval.recall_at_k>=0.8' (repeatable)")
    group.addoption("--rag-scorecard", dest="rag_scorecard", choices=SCORECARD_MODES,
                    default=None, help="scorecard in the terminal summary: off, summary "
                                       "(checked metrics; the default) or full (every metric)")
    group.addoption("--rag-report", dest="rag_report", metavar="PATH", default=None,
                    help="write the scorecard as JSON")
    group.addoption("--rag-report-md", dest="rag_report_md", metavar="PATH", default=None,
                    help="write the scorecard as Markdown (e.g. $GITHUB_STEP_SUMMARY)")
    group.addoption("--rag-html", dest="rag_html", metavar="PATH", default=None,
                    help="write a self-contained HTML report: metric bars, distributions of "
                         "regressed metrics, chunk sizes, sweeps and a per-query drill-down")
    group.addoption("--rag-export", dest="rag_export", metavar="DIR", default=None,
                    help="write what each recorded stage read as a dataset file, "
                         "DIR/<test>/<stage>.json, that `pytest-rag evaluate` reproduces")

    for name, help_, type_, default in _INI_OPTIONS:
        parser.addini(name, help_, type=type_, default=default)
    for row in SETTINGS:  # the settings' ini options, from the one table
        if not row.ini:
            continue
        if row.kind == "flag":
            parser.addini(row.ini_name, row.help_text, type="bool", default=False)
        elif row.kind == "strings":
            parser.addini(row.ini_name, row.help_text + (
                " (one per line)" if row.ini_list == "linelist" else " (separated by blanks)"),
                type=row.ini_list, default=[])
        else:
            parser.addini(row.ini_name, row.help_text, default="")


def _ini_setting(config: pytest.Config, row: Setting) -> Any:
    """The value of a setting's ini option, checked by the one rule; ``None`` when
    not set (a flag that is off is not set: the dataset's ``params`` still decide)."""
    if row.kind == "flag":
        return _ini_bool(config, row.ini_name) or None
    raw = config.getini(row.ini_name)
    try:
        return parse_setting_text(row.name, raw if isinstance(raw, list) else str(raw),
                                  f"ini {row.ini_name}")
    except SettingError as error:
        raise pytest.UsageError(str(error)) from None


def _ini_float(config: pytest.Config, name: str) -> float:
    text = str(config.getini(name)).strip()
    try:
        return non_negative(text)
    except argparse.ArgumentTypeError as error:
        raise pytest.UsageError(f"ini {name}: {error}") from None


def _ini_bool(config: pytest.Config, name: str) -> bool:
    try:
        return bool(config.getini(name))
    except (ValueError, pytest.UsageError) as error:  # "invalid truth value 'maybe'"
        # (a ValueError from pytest 9.0, a UsageError naming no option from later ones)
        raise pytest.UsageError(f"ini {name}: expected true or false, {error}") from None


def _ini_source(config: pytest.Config, name: str) -> str:
    """``ini rag_dataset in pyproject.toml``: an ini option and the file that set it."""
    return f"ini {name}" + (f" in {config.inipath.name}" if config.inipath is not None else "")


def _ini_dir(config: pytest.Config) -> Path:
    return config.inipath.parent if config.inipath is not None else config.rootpath


@dataclass(frozen=True)
class RagOptions:
    """Every option of the plugin, validated."""

    dataset_path: Path | None
    baseline_path: Path
    compare: bool
    update: bool
    prune: bool
    strict: bool
    tolerances: Tolerances
    cli_thresholds: tuple[Threshold, ...]
    ini_thresholds: tuple[Threshold, ...]
    scorecard: str
    report_json: Path | None
    report_md: Path | None
    allow_outside_paths: bool
    stage_settings: Mapping[str, Any] = field(default_factory=dict)
    significance: float | None = None
    #: ``--rag-html``: where to write the HTML report (``None``: not written).
    report_html: Path | None = None
    #: ``--rag-run`` / ini ``rag_run``: a run file for the configured dataset.
    run_path: Path | None = None
    #: ``--rag-update-failed``: an update also records tests that did not pass.
    update_failed: bool = False
    #: ``--rag-accept``: an update moves every reference, within-tolerance changes too.
    accept: bool = False
    #: ini ``rag_relevance_level``: the grade from which TREC qrels count as relevant.
    relevance_level: int = 1
    #: ``--rag-export``: the folder of the dataset exports (``None``: none written).
    export_dir: Path | None = None
    #: Where ``dataset_path`` and ``run_path`` were set, for messages:
    #: ``--rag-dataset`` or ``ini rag_dataset in pytest.ini``.
    dataset_source: str = "--rag-dataset"
    run_source: str = "--rag-run"

    @classmethod
    def from_config(cls, config: pytest.Config, specs: Mapping[str, MetricSpec]) -> RagOptions:
        """Read and check the options; a bad value is a usage error (exit status 4)."""
        from ..compare.thresholds import (
            Tolerances,
            parse_latency_tolerance,
            parse_threshold,
        )

        _refuse_unknown_ini(config)
        option = config.option
        ini_dir = _ini_dir(config)
        invocation = config.invocation_params.dir
        dataset: Path | None = None
        dataset_source = "--rag-dataset"
        if option.rag_dataset_path:
            dataset = invocation / option.rag_dataset_path
        elif str(config.getini("rag_dataset")).strip():
            dataset = ini_dir / str(config.getini("rag_dataset")).strip()
            dataset_source = _ini_source(config, "rag_dataset")
        run: Path | None = None
        run_source = "--rag-run"
        if option.rag_run_path:
            run = invocation / option.rag_run_path
        elif str(config.getini("rag_run")).strip():
            run = ini_dir / str(config.getini("rag_run")).strip()
            run_source = _ini_source(config, "rag_run")
        if option.rag_baseline not in (None, _FROM_INI):
            baseline = invocation / option.rag_baseline
            if baseline.suffix == ".py" or baseline.is_dir():
                # "pytest --rag-baseline tests/": argparse gave the test path to the option.
                raise pytest.UsageError(
                    f"--rag-baseline: {option.rag_baseline!r} is a test path, not a baseline "
                    "file; write --rag-baseline=PATH for a file, or put the test paths before "
                    "--rag-baseline")
        elif str(config.getini("rag_baseline")).strip():
            baseline = ini_dir / str(config.getini("rag_baseline")).strip()
        else:
            baseline = config.rootpath / DEFAULT_BASELINE
        absolute = (option.rag_tolerance_cli if option.rag_tolerance_cli is not None
                    else _ini_float(config, "rag_tolerance"))
        relative = _ini_float(config, "rag_relative_tolerance")
        where = "ini rag_latency_tolerance"
        try:
            latency = parse_latency_tolerance(str(config.getini("rag_latency_tolerance")))
            where = "ini rag_tolerances"
            tolerances = Tolerances.parse(absolute, relative, config.getini("rag_tolerances"),
                                          specs, latency)
            where = "--rag-threshold"
            cli = tuple(parse_threshold(text, "cli", specs) for text in option.rag_thresholds_cli)
            where = "ini rag_thresholds"
            ini = tuple(parse_threshold(text, "ini", specs)
                        for text in config.getini("rag_thresholds") if text.strip())
        except ValueError as error:
            raise pytest.UsageError(f"pytest-rag: {where}: {error}") from None
        scorecard = option.rag_scorecard or str(config.getini("rag_scorecard")).strip() or "summary"
        if scorecard not in SCORECARD_MODES:
            raise pytest.UsageError(f"ini rag_scorecard: expected one of "
                                    f"{', '.join(SCORECARD_MODES)}, got {scorecard!r}")
        ini_settings = {row.name: _ini_setting(config, row) for row in SETTINGS if row.ini}
        stage_settings = {name: value for name, value in ini_settings.items()
                          if value is not None and setting(name).scope != "loader"}

        significance = option.rag_significance
        ini_significance = str(config.getini("rag_significance")).strip()
        if significance is None and ini_significance:
            try:
                significance = significance_level(ini_significance)
            except argparse.ArgumentTypeError as error:
                raise pytest.UsageError(f"ini rag_significance: {error}") from None

        if option.rag_update_failed and not option.rag_update_baseline:
            raise pytest.UsageError("--rag-update-failed records failed tests in an update: "
                                    "use it with --rag-update-baseline")
        if option.rag_accept and not option.rag_update_baseline:
            raise pytest.UsageError("--rag-accept accepts this run's numbers in an update: "
                                    "use it with --rag-update-baseline")

        def path_of(value: str | None) -> Path | None:
            return None if not value else invocation / value

        return cls(
            dataset_path=dataset, run_path=run, baseline_path=baseline,
            dataset_source=dataset_source, run_source=run_source,
            compare=option.rag_baseline is not None, update=option.rag_update_baseline,
            prune=option.rag_prune_baseline, strict=option.rag_strict, tolerances=tolerances,
            cli_thresholds=cli, ini_thresholds=ini, scorecard=scorecard,
            report_json=path_of(option.rag_report), report_md=path_of(option.rag_report_md),
            allow_outside_paths=bool(ini_settings["allow_outside_paths"]),
            relevance_level=ini_settings["relevance_level"] or setting("relevance_level").default,
            stage_settings=stage_settings,
            significance=significance, report_html=path_of(option.rag_html),
            export_dir=path_of(getattr(option, "rag_export", None)),
            update_failed=option.rag_update_failed, accept=option.rag_accept,
        )
