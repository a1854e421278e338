"""The example project's committed baseline is current: the README's first command
passes with every entry compared, none reported as "gold changed", and prints the
scorecard README.md pastes (its sweep verdict is pasted twice more).

The example measures latency for real; here it runs on its ticking clock
(``RAGAPP_CLOCK=ticks``, ``example_project/ragapp/clock.py``), so the outcome
does not depend on how busy the machine is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_passes_against_its_baseline_with_its_gold_unchanged() -> None:
    env = {key: value for key, value in os.environ.items() if key != "RAGAPP_CHUNKER"}
    env.update(RAGAPP_CLOCK="ticks", COLUMNS="80")  # as the README's output, piped
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "example_project", "--rag-baseline", "-q",
         "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly"],
        cwd=ROOT, capture_output=True, text=True, env=env, check=False, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "gold changed" not in output, output[-3000:]
    assert "stage reports" in output and "not compared" not in output, output[-3000:]
    printed = done.stdout.splitlines()
    pasted = _blocks(ROOT / "README.md")
    quick_start = next(block for block in pasted if "RAG scorecard" in block[0])
    assert quick_start[:-1] == printed[printed.index(quick_start[0]):][:len(quick_start) - 1]
    # The verdict, pasted again in "Tune a chunker" and in the example's own README.
    verdicts = [(path, _verdict(block)) for path in (ROOT / "README.md",
                                                     ROOT / "example_project" / "README.md")
                for block in _blocks(path) if _verdict(block)]
    assert len(verdicts) == 3, [path.name for path, _ in verdicts]
    for path, verdict in verdicts:
        start = printed.index(verdict[0])
        assert printed[start:start + len(verdict)] == verdict, path


VERDICT_LINES = ("  rule:", "  excluded ", "  recommended:", "  shipped:", "    ")


def _verdict(block: list[str]) -> list[str]:
    """The chunker sweep's verdict lines in a pasted block (none: ``[]``)."""
    first = next((i for i, line in enumerate(block)
                  if line.startswith("  rule: the cheapest (chunks)")), None)
    if first is None:
        return []
    lines = []
    for line in block[first:]:
        if not line.startswith(VERDICT_LINES):
            break
        lines.append(line)
    return lines


def _blocks(path: Path) -> list[list[str]]:
    """The lines of each plain fenced block (```` ``` ```` with no language) of a file."""
    blocks: list[list[str]] = []
    inside: list[str] | None = None
    plain = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            if inside is None:
                inside, plain = [], line == "```"
            else:
                if plain:
                    blocks.append(inside)
                inside = None
        elif inside is not None:
            inside.append(line)
    return blocks
