"""The example project's committed baseline is current: the README's first command
passes with every entry compared, none reported as "gold changed".

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
    env["RAGAPP_CLOCK"] = "ticks"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "example_project", "--rag-baseline", "-q",
         "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly"],
        cwd=ROOT, capture_output=True, text=True, env=env, check=False, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "gold changed" not in output, output[-3000:]
    assert "stage reports" in output and "not compared" not in output, output[-3000:]
