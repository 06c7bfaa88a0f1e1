"""Kubernetes' container ``resources`` rules: one row per rule, valid and invalid."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from trainjob_resources.kube.quantity import GRAMMAR
from trainjob_resources.kube.resource_rules import (
    default_requests,
    validate_resource_name,
    validate_resource_requirements,
)

R = "spec.containers[0].resources"
X = "\N{MULTIPLICATION SIGN}"
QNAME = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
NOT_STANDARD = "must be a standard resource type or fully qualified"
NOT_CONTAINER = "must be a standard resource for containers"
NOT_EXTENDED = "doesn't follow extended resource name standard"
GPU = "nvidia.com/gpu"

# (id, requirements, [(path, message, current_value, proposed_value)])
CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, object, object]]]] = [
    ("empty", {}, []),
    (
        "cpu and memory within limits",
        {"limits": {"cpu": "2", "memory": "8Gi"}, "requests": {"cpu": "1500m", "memory": "8Gi"}},
        [],
    ),
    ("null lists", {"limits": None, "requests": None, "claims": None}, []),
    ("ephemeral-storage", {"requests": {"ephemeral-storage": "10Gi"}}, []),
    ("YAML numbers", {"limits": {"memory": 1073741824, "cpu": 0.5}, "requests": {"cpu": 0.25}}, []),
    (
        "limits not a mapping",
        {"limits": "8Gi"},
        [(f"{R}.limits", "must be a mapping of resource names to quantities", "8Gi", None)],
    ),
    (
        "requests not a mapping",
        {"requests": ["cpu"]},
        [(f"{R}.requests", "must be a mapping of resource names to quantities", ["cpu"], None)],
    ),
    (
        "unknown unqualified name",
        {"limits": {"gpu": "1"}},
        [(f"{R}.limits.gpu", NOT_STANDARD, "gpu", None), (f"{R}.limits.gpu", NOT_CONTAINER, "gpu", None)],
    ),
    (
        "wrong case proposes the standard name",
        {"requests": {"Memory": "1Gi"}},
        [
            (f"{R}.requests.Memory", NOT_STANDARD, "Memory", None),
            (f"{R}.requests.Memory", f"{NOT_CONTAINER}: did you mean 'memory'?", "Memory", "memory"),
        ],
    ),
    (
        "standard but not for containers",
        {"limits": {"requests.cpu": "1"}},
        [(f"{R}.limits[requests.cpu]", NOT_CONTAINER, "requests.cpu", None)],
    ),
    (
        "integer resource name that containers may not use",
        {"limits": {"pods": "1.5"}},
        [(f"{R}.limits.pods", NOT_CONTAINER, "pods", None), (f"{R}.limits.pods", "must be an integer", "1.5", None)],
    ),
    ("kubernetes.io prefix is native", {"limits": {"kubernetes.io/foo": "1.5"}}, []),
    (
        "bad name part",
        {"limits": {"example.com/foo_bar!": "1"}},
        [
            (f"{R}.limits[example.com/foo_bar!]", f"name part {QNAME}", "example.com/foo_bar!", None),
            (f"{R}.limits[example.com/foo_bar!]", NOT_EXTENDED, "example.com/foo_bar!", None),
        ],
    ),
    (
        "bad prefix part",
        {"limits": {"Example.com/gpu": "1"}},
        [
            (f"{R}.limits[Example.com/gpu]", f"prefix part {SUBDOMAIN}", "Example.com/gpu", None),
            (f"{R}.limits[Example.com/gpu]", NOT_EXTENDED, "Example.com/gpu", None),
        ],
    ),
    (
        "two slashes",
        {"limits": {"a/b/c": "1"}},
        [
            (
                f"{R}.limits[a/b/c]",
                f"a qualified name {QNAME} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                "a/b/c",
                None,
            ),
            (f"{R}.limits[a/b/c]", NOT_EXTENDED, "a/b/c", None),
        ],
    ),
    (
        "name part too long",
        {"limits": {"example.com/" + "a" * 64: "1"}},
        [
            (f"{R}.limits[example.com/{'a' * 64}]", "name part must be no more than 63 characters", None, None),
            (f"{R}.limits[example.com/{'a' * 64}]", NOT_EXTENDED, None, None),
        ],
    ),
    ("resource name not a string", {"limits": {1: "1"}}, [(f"{R}.limits[1]", "must be a string", 1, None)]),
    (
        "unparseable quantity, case of a binary suffix",
        {"limits": {"memory": "1gi"}},
        [(f"{R}.limits.memory", f"'1gi' is not a quantity: did you mean 1Gi (= 1{X}2³⁰)?", "1gi", "1Gi")],
    ),
    (
        "unparseable quantity, bytes unit",
        {"limits": {"memory": "8GiB"}},
        [(f"{R}.limits.memory", f"'8GiB' is not a quantity: did you mean 8Gi (= 8{X}2³⁰)?", "8GiB", "8Gi")],
    ),
    (
        "unparseable quantity, whitespace",
        {"requests": {"cpu": " 1"}},
        [(f"{R}.requests.cpu", "' 1' is not a quantity: did you mean 1?", " 1", "1")],
    ),
    (
        "unknown suffix",
        {"limits": {"memory": "1ki"}},
        [(f"{R}.limits.memory", f"'1ki' is not a quantity: did you mean 1Ki (= 1{X}2¹⁰)?", "1ki", "1Ki")],
    ),
    (
        "bytes written as a decimal unit: both meanings offered",
        {"limits": {"memory": "64GB"}},
        [
            (
                f"{R}.limits.memory",
                f"'64GB' is not a quantity: did you mean 64G (= 64{X}10⁹) or 64Gi (= 64{X}2³⁰)?",
                "64GB",
                "64G",
            )
        ],
    ),
    (
        "cpu in cores",
        {"requests": {"cpu": "2 cores"}},
        [
            (
                f"{R}.requests.cpu",
                f"'2 cores' is not a quantity: did you mean 2 or 2000m (= 2000{X}10⁻³)?",
                "2 cores",
                "2",
            )
        ],
    ),
    (
        "not a string or number",
        {"limits": {"memory": True}},
        [(f"{R}.limits.memory", "must be a string or number", True, None)],
    ),
    (
        "negative",
        {"limits": {"memory": "-1Gi"}},
        [(f"{R}.limits.memory", "-1Gi must be greater than or equal to 0", "-1Gi", None)],
    ),
    (
        "request above limit",
        {"limits": {"memory": "8Gi"}, "requests": {"memory": "16Gi"}},
        [(f"{R}.requests.memory", "request of 16Gi must be less than or equal to memory limit of 8Gi", "16Gi", "8Gi")],
    ),
    (
        "request above limit, compared by value",
        {"limits": {"cpu": "1000m"}, "requests": {"cpu": "1.5"}},
        [(f"{R}.requests.cpu", "request of 1500m must be less than or equal to cpu limit of 1", "1.5", "1000m")],
    ),
    ("equal by value in other spellings", {"limits": {"memory": "1Gi"}, "requests": {"memory": 1073741824}}, []),
    ("extended resource limit only", {"limits": {GPU: "1"}}, []),
    ("extended resource equal", {"limits": {GPU: 2}, "requests": {GPU: "2"}}, []),
    (
        "extended resource request without limit",
        {"requests": {GPU: "1"}},
        [(f"{R}.limits[{GPU}]", "Limit must be set for non overcommitable resources", None, "1")],
    ),
    (
        "extended resource request below limit",
        {"limits": {GPU: "2"}, "requests": {GPU: "1"}},
        [(f"{R}.requests[{GPU}]", f"request of 1 must be equal to {GPU} limit of 2", "1", "2")],
    ),
    (
        "extended resource fraction",
        {"limits": {GPU: "1.5"}},
        [(f"{R}.limits[{GPU}]", "must be an integer", "1.5", None)],
    ),
    (
        "extended resource milli",
        {"limits": {GPU: "500m"}},
        [(f"{R}.limits[{GPU}]", "must be an integer", "500m", None)],
    ),
    (
        "extended resource overflows int64",
        {"limits": {GPU: "1e30"}},
        [(f"{R}.limits[{GPU}]", "must be an integer", "1e30", None)],
    ),
    ("hugepages with memory", {"limits": {"hugepages-2Mi": "4Mi", "memory": "1Gi"}}, []),
    (
        "hugepages without cpu or memory",
        {"limits": {"hugepages-2Mi": "4Mi"}},
        [(R, "HugePages require cpu or memory", None, None)],
    ),
    (
        "hugepages not a multiple of the page",
        {"limits": {"hugepages-2Mi": "3Mi", "cpu": "1"}},
        [(f"{R}.limits.hugepages-2Mi", "3Mi is not positive integer multiple of hugepages-2Mi", "3Mi", None)],
    ),
    (
        "hugepages request differs from limit",
        {"limits": {"hugepages-1Gi": "2Gi", "cpu": "1"}, "requests": {"hugepages-1Gi": "1Gi"}},
        [(f"{R}.requests.hugepages-1Gi", "request of 1Gi must be equal to hugepages-1Gi limit of 2Gi", "1Gi", "2Gi")],
    ),
    (
        "hugepages with an unparseable page size",
        {"limits": {"hugepages-foo": "2Mi", "cpu": "1"}},
        [(f"{R}.limits.hugepages-foo", "2Mi is not positive integer multiple of hugepages-foo", "2Mi", None)],
    ),
    (
        "claims",
        {"claims": [{"name": "gpu"}, {"name": "shared", "request": "a"}, {"name": "shared", "request": "b"}]},
        [],
    ),
    (
        "claims not a list",
        {"claims": {"name": "gpu"}},
        [(f"{R}.claims", "must be a list of resource claims", {"name": "gpu"}, None)],
    ),
    ("claim not a mapping", {"claims": ["gpu"]}, [(f"{R}.claims[0]", "must be a mapping with a name", "gpu", None)]),
    ("claim without name", {"claims": [{"request": "a"}]}, [(f"{R}.claims[0].name", "Required value", None, None)]),
    ("claim name not a label", {"claims": [{"name": "GPU_1"}]}, [(f"{R}.claims[0].name", LABEL, "GPU_1", None)]),
    (
        "claim request with dots",
        {"claims": [{"name": "gpu", "request": "a.b"}]},
        [(f"{R}.claims[0].request", "must not contain dots", "a.b", None)],
    ),
    (
        "duplicate claim",
        {"claims": [{"name": "gpu"}, {"name": "gpu"}]},
        [(f"{R}.claims[1]", 'Duplicate value: "gpu"', "gpu", None)],
    ),
    (
        "duplicate claim request",
        {"claims": [{"name": "gpu", "request": "a"}, {"name": "gpu", "request": "a"}]},
        [(f"{R}.claims[1]", 'Duplicate value: "gpu/a"', "gpu/a", None)],
    ),
    (
        "whole claim after one of its requests",
        {"claims": [{"name": "gpu", "request": "a"}, {"name": "gpu"}]},
        [(f"{R}.claims[1]", 'Duplicate value: "gpu"', "gpu", None)],
    ),
    (
        "every violation is reported",
        {
            "limits": {"memory": "8Gi", "cpu": "x", GPU: "1.5"},
            "requests": {"memory": "9Gi", "example.com/fpga": "1"},
            "claims": [{}],
        },
        [
            (f"{R}.limits.cpu", f"'x' is not a quantity: {GRAMMAR}", "x", None),
            (f"{R}.limits[{GPU}]", "must be an integer", "1.5", None),
            (f"{R}.requests.memory", "request of 9Gi must be less than or equal to memory limit of 8Gi", "9Gi", "8Gi"),
            (f"{R}.limits[example.com/fpga]", "Limit must be set for non overcommitable resources", None, "1"),
            (f"{R}.claims[0].name", "Required value", None, None),
        ],
    ),
]


@pytest.mark.parametrize(("requirements", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validate_resource_requirements(
    requirements: dict[str, Any], expected: list[tuple[str, str, object, object]]
) -> None:
    got = validate_resource_requirements(requirements, R)
    assert [(v.path, v.message) for v in got] == [(p, m) for p, m, _, _ in expected]
    for violation, (_, _, current, proposed) in zip(got, expected, strict=True):
        assert violation.severity == "error"
        if current is not None:
            assert violation.current_value == current
        assert violation.proposed_value == proposed


@pytest.mark.parametrize(
    ("name", "messages"),
    [
        ("cpu", []),
        ("memory", []),
        ("ephemeral-storage", []),
        ("hugepages-2Mi", []),
        ("nvidia.com/gpu", []),
        ("example.com/foo.bar-baz_1", []),
        ("kubernetes.io/anything", []),
        ("storage", [NOT_CONTAINER]),
        ("requests.hugepages-2Mi", [NOT_CONTAINER]),
        ("CPU", [NOT_STANDARD, f"{NOT_CONTAINER}: did you mean 'cpu'?"]),
        ("", ["name part must be non-empty", f"name part {QNAME}", NOT_CONTAINER]),
        ("/gpu", ["prefix part must be non-empty", NOT_EXTENDED]),
        ("example.com/", ["name part must be non-empty", f"name part {QNAME}", NOT_EXTENDED]),
        ("requests.example.com/gpu", [NOT_EXTENDED]),
        (None, ["must be a string"]),
    ],
)
def test_validate_resource_name(name: object, messages: list[str]) -> None:
    assert [v.message for v in validate_resource_name(name, "p")] == messages


@pytest.mark.parametrize(
    ("requirements", "expected"),
    [
        ({"limits": {"cpu": "1"}}, {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}),
        (
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}},
        ),
        ({"requests": {"cpu": "1"}}, {"requests": {"cpu": "1"}}),
        ({"limits": {}}, {"limits": {}}),
        ({"limits": "bad", "requests": {"cpu": "1"}}, {"limits": "bad", "requests": {"cpu": "1"}}),
        ({"limits": {"cpu": "1"}, "requests": "bad"}, {"limits": {"cpu": "1"}, "requests": "bad"}),
        (
            {"limits": {GPU: 1}, "claims": [{"name": "gpu"}]},
            {"limits": {GPU: 1}, "requests": {GPU: 1}, "claims": [{"name": "gpu"}]},
        ),
    ],
)
def test_default_requests(requirements: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(requirements)
    assert default_requests(requirements) == expected
    assert requirements == before
