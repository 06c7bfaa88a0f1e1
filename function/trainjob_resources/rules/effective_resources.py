"""A container's resources once every patch is merged: what Kubernetes refuses of the result
(pkg/apis/core/validation/validation.go ``validateResourceRequirements``, as ``kube.resource_rules``
ports it), each finding reported at the field that set the value."""

from __future__ import annotations

import re

from ..kube.resource_rules import default_requests, validate_resource_requirements
from ..resolve.context import TrainJobContext
from ..trainer.effective import Effective
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Rule
from .reads import EFFECTIVE as EFFECTIVE_RESOURCES
from .stages import EFFECTIVE

_RELATIVE = re.compile(r"^(limits|requests)(?:\.([A-Za-z_][A-Za-z0-9_-]*)|\[([^\]]+)\])?(.*)$")


def _check(_: TrainJobContext, effective: Effective) -> list[Violation]:
    requirements = effective.requirements
    found = validate_resource_requirements(default_requests(requirements), "")
    # A request defaulted from a bad limit repeats the limit's error: report it once, at the limit.
    said = {(v.path, v.message) for v in found}
    written = requirements.get("requests") or {}
    out: list[Violation] = []
    for violation in found:
        match = _RELATIVE.match(violation.path)
        if match and match.group(1) == "requests" and not match.group(4):
            name = match.group(2) or match.group(3)
            limit_path = fieldpath.child("limits", name) if name else ""
            if name not in written and (limit_path, violation.message) in said:
                continue
        out.append(_attribute(violation, effective))
    return out


def _attribute(violation: Violation, effective: Effective) -> Violation:
    fallback = next((s for s in reversed(effective.patched_by) if s.path), None)
    match = _RELATIVE.match(violation.path)
    if match is None:
        base = fallback.path if fallback else None
        return _at(violation, fieldpath.child(base, violation.path) if base else violation.path, None)
    section, plain, bracketed, _rest = match.groups()
    name = plain or bracketed
    if name is None:
        return _at(
            violation, f"{fallback.path}.{violation.path}" if fallback and fallback.path else violation.path, None
        )
    own = effective.source_of(section, name)
    if own.path is not None:
        return _at(violation, f"{own.path}.{violation.path}", None)
    counterpart_section = "limits" if section == "requests" else "requests"
    defaulted = section == "requests" and (section, name) not in effective.sources
    counterpart = effective.source_of(counterpart_section, name)
    if counterpart.path is not None:
        # Reported at the other side of the pair: the values are the ones at that field.
        rel = fieldpath.child(counterpart_section, name)
        origin = "defaulted from the limit" if defaulted else f"from {own.label}"
        # A proposed fix comes with a message that shows the value already (a comparison, a misspelling).
        shows_value = violation.current_value is None or violation.proposed_value is not None
        value = "" if shows_value else f" {violation.current_value}"
        here = (effective.requirements.get(counterpart_section) or {}).get(name)
        proposed = violation.current_value if section == "requests" else None
        message = violation.message
        if proposed is not None:
            message += f": set this limit to {proposed}, or set requests.{name} in the patch too"
        moved = Violation(violation.path, message, violation.severity, here, proposed)
        return _at(moved, f"{counterpart.path}.{rel}", f"effective {violation.path}{value} ({origin})")
    base = fallback.path if fallback and fallback.path else None
    return _at(violation, f"{base}.{violation.path}" if base else violation.path, f"effective {violation.path}")


def _at(violation: Violation, path: str, context: str | None) -> Violation:
    message = f"{context}: {violation.message}" if context else violation.message
    return Violation(path, message, violation.severity, violation.current_value, violation.proposed_value)


RULE = Rule(
    "effective-resources",
    (EFFECTIVE,),
    "effective",
    (EFFECTIVE_RESOURCES,),
    "merged resources Kubernetes refuses (a limit below its request, ...)",
    _check,
)
