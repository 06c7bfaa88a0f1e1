"""The patches' managers: each of the form upstream's TrainJob webhook requires, and one entry per
manager (``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Validate``: ``IsDomainPrefixedPath``
on each manager; the CRD keys ``runtimePatches`` by manager, ``pkg/apis/trainer/v1alpha1/trainjob_types.go``)."""

from __future__ import annotations

import re
from typing import Any

from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .reads import MANAGERS
from .stages import PATCHES

# k8s.io/apimachinery/pkg/util/validation: Go's ``^...$`` matches the whole string only (Python's
# ``$`` also matches before a final newline), hence ``fullmatch``.
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_PATH_SEGMENT = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")


def validate_managers(managers: list[str]) -> list[Violation]:
    """Upstream's ``IsDomainPrefixedPath`` on every manager, and one entry per manager."""
    out: list[Violation] = []
    seen: dict[str, int] = {}
    for i, manager in enumerate(managers):
        path = f"spec.runtimePatches[{i}].manager"
        domain, _, rest = manager.partition("/")
        if not rest or len(domain) > 253 or not _DNS_SUBDOMAIN.fullmatch(domain) or not _PATH_SEGMENT.fullmatch(rest):
            out.append(
                Violation(
                    path,
                    "must be a domain-prefixed path such as 'example.com/my-controller' "
                    "(a lowercase DNS subdomain, '/', then a path)",
                    current_value=manager,
                )
            )
        if manager in seen:
            out.append(
                Violation(
                    path, f"duplicate manager: runtimePatches[{seen[manager]}] has it already", current_value=manager
                )
            )
        seen.setdefault(manager, i)
    return out


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    return validate_managers(list(context.managers))


RULE = Rule("managers", (PATCHES,), "trainjob", (MANAGERS,), "invalid or repeated runtimePatches managers", _check)
