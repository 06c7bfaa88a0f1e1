"""The one shape every check in the pure core reports: a field, what is wrong, and the values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Violation:
    """A finding about one field of one object; the KRM layer turns it into a Result."""

    path: str
    message: str
    severity: Severity = "error"
    current_value: object = None
    proposed_value: object = None
