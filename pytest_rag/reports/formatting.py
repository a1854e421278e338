"""One way to print evaluator settings, in every output: JSON notation.

``size_limits=[20, 200]``, ``abstain_phrases=["i don't know"]``, ``k=5``: lists
in brackets and strings in double quotes, as the dataset format writes them,
whether the value came as a tuple, a list or from a baseline file.  Settings
left at ``None`` are not printed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["setting_text", "settings_text"]


def setting_text(value: Any) -> str:
    """``value`` in JSON notation (tuples as lists; text as written, not ASCII-escaped).

    >>> setting_text((20, 200)), setting_text(["i don't know"]), setting_text(5)
    ('[20, 200]', '["i don\\'t know"]', '5')
    """
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # not JSON (a numpy value, NaN): its plain text
        return str(value)


def settings_text(settings: Mapping[str, Any]) -> str:
    """``k=5, size_limits=[20, 200]``: the settings that are set, in their order."""
    return ", ".join(f"{key}={setting_text(value)}" for key, value in settings.items()
                     if value is not None)
