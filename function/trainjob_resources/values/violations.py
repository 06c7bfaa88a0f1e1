"""The one shape every check in the pure core reports: a field, what is wrong, and the values."""

from __future__ import annotations

from typing import Final, Literal

from .records import Record

Severity = Literal["error", "warning", "info"]


class Violation(Record):
    """A finding about one field of one object; the KRM layer turns it into a Result."""

    __slots__ = ("current_value", "message", "path", "proposed_value", "severity")

    def __init__(
        self,
        path: str,
        message: str,
        severity: Severity = "error",
        current_value: object = None,
        proposed_value: object = None,
    ) -> None:
        self.path: Final = path
        self.message: Final = message
        self.severity: Final = severity
        self.current_value: Final = current_value
        self.proposed_value: Final = proposed_value
