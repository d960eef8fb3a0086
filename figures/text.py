"""Qt-style placeholders for translated templates ("%1 of %2"), shared by the figures and the window."""
from __future__ import annotations

import re


def fill(template: str, *values) -> str:
    """Qt-style placeholders: fill("%1 of %2", 3, 4) → "3 of 4", in one pass (values are not re-scanned)."""
    return re.sub(r"%(\d+)", lambda m: str(values[int(m.group(1)) - 1]) if 0 < int(m.group(1)) <= len(values) else m.group(), template)
