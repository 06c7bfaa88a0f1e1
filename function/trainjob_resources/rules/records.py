"""A TrainJob rendered before carries records of what the render changed (``derive/provenance.py``),
which the next render undoes first; records it cannot undo (edited by hand, or from another
version) make the TrainJob unreadable: said at ``metadata.annotations``, where they are."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .stages import PARSE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    error = context.records_error
    return [] if error is None else [Violation("metadata.annotations", error)]


RULE = Rule("records", (PARSE,), "trainjob", (), "records of an earlier render that cannot be undone", _check)
