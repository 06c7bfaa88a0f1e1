"""The one shape every check in the pure core reports: a field, what is wrong, and the values."""

from __future__ import annotations

from typing import Final, Literal

from .records import Record

Severity = Literal["error", "warning", "info"]


class Violation(Record):
    """A finding about one field of one object; the KRM layer turns it into a Result. ``rule``: the
    name of the rule that made it (``rules/``), set by the registry's runner, reported as the
    result's ``tags: {rule: ...}``."""

    __slots__ = ("current_value", "message", "path", "proposed_value", "rule", "severity")

    def __init__(
        self,
        path: str,
        message: str,
        severity: Severity = "error",
        current_value: object = None,
        proposed_value: object = None,
        rule: str = "",
    ) -> None:
        self.path: Final = path
        self.message: Final = message
        self.severity: Final = severity
        self.current_value: Final = current_value
        self.proposed_value: Final = proposed_value
        self.rule: Final = rule

    def made_by(self, rule: str) -> Violation:
        """This finding, as ``rule``'s (one that already names its rule keeps it)."""
        if self.rule:
            return self
        return Violation(self.path, self.message, self.severity, self.current_value, self.proposed_value, rule)
