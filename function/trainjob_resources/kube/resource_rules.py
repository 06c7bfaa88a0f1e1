"""Kubernetes' rules for a container's ``resources``, as the API server applies them to a Pod.

Ported from pkg/apis/core/validation/validation.go (``validateResourceRequirements`` with
``validateContainerResourceName``, ``ValidateResourceQuantityValue``, ``validateResourceQuantityHugePageValue``
and ``validateResourceClaimNames``), pkg/apis/core/helper/helpers.go, apimachinery's ``IsQualifiedName`` and
``IsDNS1123Label``, and pkg/apis/core/v1/defaults.go's ``SetDefaults_Pod`` (requests default to limits).

Unlike the API server, each finding names the offending key (``requests.memory``, not ``requests``), and a
claim's ``name`` is checked as the DNS label a ``pod.spec.resourceClaims`` entry must be, since the pod's
claims are not in view here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..values.fieldpath import child, index
from ..values.violations import Violation
from .quantity import Quantity, QuantityError, invalid, parse_quantity

_HUGEPAGES = "hugepages-"
_STANDARD_CONTAINER = frozenset({"cpu", "memory", "ephemeral-storage"})
_QOS = frozenset({"cpu", "memory"})
_STANDARD = _STANDARD_CONTAINER | frozenset(
    {
        "requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu", "limits.memory",
        "limits.ephemeral-storage", "pods", "quota", "services", "replicationcontrollers", "secrets",
        "configmaps", "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
        "services.loadbalancers",
    }
)  # fmt: skip
_INTEGER = frozenset(
    {
        "pods", "quota", "services", "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims",
        "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_QNAME = re.compile(_QNAME_FMT)
_LABEL = re.compile(_LABEL_FMT)
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)


def validate_resource_name(name: object, path: str) -> list[Violation]:
    """``validateContainerResourceName``: a name a container may request."""
    if not isinstance(name, str):
        return [Violation(path, "must be a string", current_value=name)]
    fix = name.lower() if name.lower() in _STANDARD_CONTAINER else None
    out = [Violation(path, m, current_value=name) for m in qualified_name_errors(name)]
    unqualified = "/" not in name
    if not out and unqualified and not _is_standard(name):
        out.append(Violation(path, "must be a standard resource type or fully qualified", current_value=name))
    if unqualified and not _is_standard_container(name):
        message = "must be a standard resource for containers" + (f": did you mean {fix!r}?" if fix else "")
        out.append(Violation(path, message, current_value=name, proposed_value=fix))
    elif not unqualified and not _is_native(name) and not is_extended_resource_name(name):
        out.append(Violation(path, "doesn't follow extended resource name standard", current_value=name))
    return out


def default_requests(requirements: Mapping[str, Any]) -> dict[str, Any]:
    """A copy whose requests hold every limit that has no request of its own, as ``SetDefaults_Pod`` does."""
    out = dict(requirements)
    limits = requirements.get("limits")
    requests = requirements.get("requests")
    if isinstance(limits, Mapping) and limits and isinstance(requests, Mapping | None):
        merged = dict(requests or {})
        for name, value in limits.items():
            merged.setdefault(name, value)
        out["requests"] = merged
    return out


def validate_resource_requirements(requirements: Mapping[str, Any], path: str) -> list[Violation]:
    """Every violation of ``validateResourceRequirements`` for a container, plus unparseable quantities.

    Pass the output of ``default_requests`` to see what the API server sees; the verdict is the same
    without it, minus findings repeated on defaulted requests.
    """
    out: list[Violation] = []
    limits_path, requests_path = child(path, "limits"), child(path, "requests")
    limits = _resource_list(requirements.get("limits"), limits_path, out)
    requests = _resource_list(requirements.get("requests"), requests_path, out)
    parsed_limits: dict[object, Quantity | None] = {}
    for name, raw in limits.items():
        parsed_limits[name] = _check_entry(name, raw, child(limits_path, str(name)), out)
    for name, raw in requests.items():
        field_path = child(requests_path, str(name))
        request = _check_entry(name, raw, field_path, out)
        if not isinstance(name, str):
            continue
        overcommit = _is_overcommit_allowed(name)
        if name in limits:
            limit = parsed_limits[name]
            if request is None or limit is None:
                continue
            # validation.go's field.Invalid(reqPath, requestQuantity.String(), "must be ... limit of ..."):
            # Kubernetes prints the request as the invalid value; the message shows both sides here too.
            detail = f"{name} limit of {limit.canonical()}"
            if request != limit and not overcommit:
                message = f"request of {request.canonical()} must be equal to {detail}"
            elif request > limit:
                message = f"request of {request.canonical()} must be less than or equal to {detail}"
            else:
                continue
            out.append(Violation(field_path, message, current_value=raw, proposed_value=limits[name]))
        elif not overcommit:
            message = "Limit must be set for non overcommitable resources"
            out.append(Violation(child(limits_path, name), message, proposed_value=raw))
    names = {n for n in (*limits, *requests) if isinstance(n, str)}
    if any(n.startswith(_HUGEPAGES) for n in names) and not names & _QOS:
        out.append(Violation(path, "HugePages require cpu or memory"))
    out.extend(_validate_claims(requirements.get("claims"), child(path, "claims")))
    return out


def _resource_list(raw: object, path: str, out: list[Violation]) -> Mapping[object, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        out.append(Violation(path, "must be a mapping of resource names to quantities", current_value=raw))
        return {}
    return raw


def _check_entry(name: object, raw: object, path: str, out: list[Violation]) -> Quantity | None:
    out.extend(validate_resource_name(name, path))
    try:
        quantity = parse_quantity(raw)
    except QuantityError as error:
        message, fix = invalid(raw, error)
        out.append(Violation(path, message, current_value=raw, proposed_value=fix))
        return None
    if quantity.is_negative():
        # validation.go ValidateNonnegativeQuantity: field.Invalid(fldPath, value.String(), isNegativeErrorMsg).
        out.append(Violation(path, f"{quantity.canonical()} must be greater than or equal to 0", current_value=raw))
    if isinstance(name, str) and _is_integer_resource(name) and not _is_whole(quantity):
        out.append(Violation(path, "must be an integer", current_value=raw))
    if isinstance(name, str) and name.startswith(_HUGEPAGES) and not _hugepage_divisible(name, quantity):
        message = f"{quantity.canonical()} is not positive integer multiple of {name}"
        out.append(Violation(path, message, current_value=raw))
    return quantity


def _validate_claims(claims: object, path: str) -> list[Violation]:
    if claims is None:
        return []
    if not isinstance(claims, list):
        return [Violation(path, "must be a list of resource claims", current_value=claims)]
    out: list[Violation] = []
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        claim_path = index(path, i)
        if not isinstance(claim, Mapping):
            out.append(Violation(claim_path, "must be a mapping with a name", current_value=claim))
            continue
        name, request = claim.get("name"), claim.get("request")
        if name is None or name == "":
            out.append(Violation(child(claim_path, "name"), "Required value"))
            continue
        if not isinstance(name, str) or not isinstance(request, str | None):
            bad = "name" if not isinstance(name, str) else "request"
            out.append(Violation(child(claim_path, bad), "must be a string", current_value=claim.get(bad)))
            continue
        out.extend(_label_violations(name, child(claim_path, "name")))
        if name in seen:
            out.append(Violation(claim_path, f"Duplicate value: {json.dumps(name)}", current_value=name))
            continue
        key = name
        if request:
            out.extend(_label_violations(request, child(claim_path, "request")))
            key = f"{name}/{request}"
        if key in seen:
            out.append(Violation(claim_path, f"Duplicate value: {json.dumps(key)}", current_value=key))
        elif not request and any(k.startswith(name + "/") for k in seen):
            out.append(Violation(claim_path, f"Duplicate value: {json.dumps(name)}", current_value=name))
        seen.add(key)
    return out


def _is_whole(quantity: Quantity) -> bool:
    milli = quantity.scaled_value(-3)
    return milli is not None and milli % 1000 == 0


def _hugepage_divisible(name: str, quantity: Quantity) -> bool:
    """``IsHugePageResourceValueDivisible``."""
    try:
        page = parse_quantity(name.removeprefix(_HUGEPAGES))
    except QuantityError:
        return False
    if page.coefficient <= 0 or not _is_whole(page):
        return False
    page_bytes, value = page.scaled_value(0), quantity.scaled_value(0)
    return page_bytes is not None and value is not None and value % page_bytes == 0


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName`` (k8s.io/kubernetes pkg/apis/core/helper/helpers.go)."""
    if _is_native(name) or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def _is_overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not name.startswith(_HUGEPAGES)


def _is_standard(name: str) -> bool:
    return name in _STANDARD or name.startswith((_HUGEPAGES, "requests." + _HUGEPAGES))


def _is_standard_container(name: str) -> bool:
    return name in _STANDARD_CONTAINER or name.startswith(_HUGEPAGES)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER or is_extended_resource_name(name)


def _byte_len(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def qualified_name_errors(value: str) -> list[str]:
    """apimachinery's ``IsQualifiedName``."""
    parts = value.split("/")
    errors: list[str] = []
    if len(parts) > 2:
        example = _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
        return [f"a qualified name {example} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + m for m in _subdomain_errors(prefix))
    if not name:
        errors.append("name part must be non-empty")
    elif _byte_len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QNAME.fullmatch(name):
        errors.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errors


def _subdomain_errors(value: str) -> list[str]:
    errors = ["must be no more than 253 characters"] if _byte_len(value) > 253 else []
    if not _SUBDOMAIN.fullmatch(value):
        errors.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errors


def _label_violations(value: str, path: str) -> list[Violation]:
    """``ValidateDNS1123Label``."""
    errors = ["must be no more than 63 characters"] if _byte_len(value) > 63 else []
    if not _LABEL.fullmatch(value):
        dots = _SUBDOMAIN.fullmatch(value) is not None
        errors.append("must not contain dots" if dots else _regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return [Violation(path, e, current_value=value) for e in errors]


def dns_label_violations(value: str, path: str) -> list[Violation]:
    """``ValidateDNS1123Label``, as pod validation checks a ``pod.spec.resourceClaims`` entry's name."""
    return _label_violations(value, path)
