"""The patches' managers: each of the form upstream's TrainJob webhook requires
(``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Validate``: ``IsDomainPrefixedPath`` on each
manager). That the CRD keys ``runtimePatches`` by manager is the ``trainjob-schema`` rule's."""

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
    """Upstream's ``IsDomainPrefixedPath`` on every manager (one entry per manager is the CRD's:
    ``trainjob-schema``)."""
    out: list[Violation] = []
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
    return out


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    return validate_managers(list(context.managers))


RULE = Rule(
    "managers", (PATCHES,), "trainjob", (MANAGERS,), "runtimePatches managers upstream's webhook refuses", _check
)
