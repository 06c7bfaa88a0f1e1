"""podmath: Kubernetes' PodRequests/PodLimits, checked against values worked out by hand."""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import given
from hypothesis import strategies as st
from trainjob_resources.kube.podmath import (
    ContainerResources,
    PodResources,
    aggregate,
    canonical,
    is_limit_ranger_pod_level_resource,
    pod_limits,
    pod_requests,
    scale,
)
from trainjob_resources.kube.quantity import Quantity, parse_quantity


def q(values: Mapping[str, str]) -> dict[str, Quantity]:
    return {name: parse_quantity(raw) for name, raw in values.items()}


def c(
    name: str, requests: Mapping[str, str], limits: Mapping[str, str] | None = None, sidecar: bool = False
) -> ContainerResources:
    return ContainerResources(name, q(requests), q(limits or {}), sidecar)


def test_regular_containers_add_up() -> None:
    pod = PodResources(containers=[c("a", {"cpu": "1", "memory": "1Gi"}), c("b", {"cpu": "500m"})])
    assert canonical(pod_requests(pod)) == {"cpu": "1500m", "memory": "1Gi"}


def test_regular_init_containers_take_the_maximum_per_resource() -> None:
    pod = PodResources(
        init_containers=[c("i1", {"cpu": "4", "memory": "1Gi"}), c("i2", {"cpu": "1", "memory": "8Gi"})],
        containers=[c("main", {"cpu": "2", "memory": "2Gi"})],
    )
    # cpu: max(2, 4, 1) = 4; memory: max(2Gi, 1Gi, 8Gi) = 8Gi -- no "largest container" across resources
    assert canonical(pod_requests(pod)) == {"cpu": "4", "memory": "8Gi"}


def test_sidecars_add_to_what_starts_after_them_and_to_the_main_containers() -> None:
    # KEP-753: init containers in order s1 (sidecar), i1, s2 (sidecar), i2; then the main container.
    pod = PodResources(
        init_containers=[
            c("s1", {"cpu": "1"}, sidecar=True),
            c("i1", {"cpu": "5"}),
            c("s2", {"cpu": "2"}, sidecar=True),
            c("i2", {"cpu": "3"}),
        ],
        containers=[c("main", {"cpu": "2"})],
    )
    # phases: s1 starts: 1; i1 runs with s1: 5 + 1 = 6; s2 starts: 1 + 2 = 3; i2 with s1, s2: 3 + 3 = 6;
    # main with both sidecars: 2 + 1 + 2 = 5. The pod needs max(6, 3, 6, 5) = 6.
    assert canonical(pod_requests(pod)) == {"cpu": "6"}
    pod_small_init = PodResources(
        init_containers=[c("s1", {"cpu": "1"}, sidecar=True), c("i1", {"cpu": "1"})],
        containers=[c("main", {"cpu": "2"})],
    )
    # i1 with s1: 2; main with s1: 3
    assert canonical(pod_requests(pod_small_init)) == {"cpu": "3"}


def test_a_sidecar_after_a_regular_init_container_does_not_run_with_it() -> None:
    pod = PodResources(
        init_containers=[c("i1", {"memory": "4Gi"}), c("s1", {"memory": "8Gi"}, sidecar=True)],
        containers=[c("main", {"memory": "1Gi"})],
    )
    # i1 alone: 4Gi; s1 starts: 8Gi; main with s1: 9Gi
    assert canonical(pod_requests(pod)) == {"memory": "9Gi"}


def test_limits_follow_the_same_formula() -> None:
    pod = PodResources(
        init_containers=[c("s1", {}, {"memory": "2Gi"}, sidecar=True), c("i1", {}, {"memory": "16Gi"})],
        containers=[c("main", {}, {"memory": "4Gi"})],
    )
    assert canonical(pod_limits(pod)) == {"memory": "18Gi"}
    assert canonical(aggregate(pod, "limits")) == {"memory": "18Gi"}


def test_pod_level_resources_replace_the_supported_resources() -> None:
    pod = PodResources(
        containers=[c("a", {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})],
        requests=q({"cpu": "4", "hugepages-2Mi": "2Mi"}),
        limits=q({"cpu": "8", "memory": "16Gi"}),
    )
    assert canonical(pod_requests(pod)) == {
        "cpu": "4",
        "hugepages-2Mi": "2Mi",
        "memory": "1Gi",  # defaulted from the containers' request, not from the pod-level limit
        "nvidia.com/gpu": "1",
    }
    assert canonical(pod_limits(pod)) == {"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": "1"}
    # The LimitRanger's own copy of the formula knows only cpu and memory at pod level.
    limit_ranger = pod_requests(pod, overhead=False, pod_level=is_limit_ranger_pod_level_resource)
    assert "hugepages-2Mi" not in limit_ranger


def test_pod_level_limit_without_any_request_defaults_the_request() -> None:
    pod = PodResources(containers=[c("a", {})], limits=q({"memory": "2Gi"}))
    assert canonical(pod_requests(pod)) == {"memory": "2Gi"}


def test_a_pod_level_hugepages_limit_defaults_its_request_to_itself_not_to_the_aggregate() -> None:
    # pkg/apis/core/v1/defaults.go defaultPodRequests: the aggregate only for overcommittable resources.
    pod = PodResources(
        containers=[c("a", {"memory": "1Gi", "hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "2Mi"})],
        limits=q({"memory": "2Gi", "hugepages-2Mi": "4Mi"}),
    )
    assert canonical(pod_requests(pod)) == {"hugepages-2Mi": "4Mi", "memory": "1Gi"}


def test_overhead_adds_to_requests_and_to_set_non_zero_limits_only() -> None:
    pod = PodResources(
        containers=[c("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "0", "memory": "2Gi"})],
        overhead=q({"cpu": "250m", "memory": "120Mi", "pods": "1"}),
    )
    assert canonical(pod_requests(pod)) == {"cpu": "1250m", "memory": "1144Mi", "pods": "1"}
    assert canonical(pod_limits(pod)) == {"cpu": "0", "memory": "2168Mi"}
    assert canonical(pod_requests(pod, overhead=False)) == {"cpu": "1", "memory": "1Gi"}


def test_canonical_spelling_and_scaling() -> None:
    # Kubernetes keeps a value's format: a plain number of bytes stays decimal.
    pod = PodResources(containers=[c("a", {"cpu": "0.5", "memory": "1073741824"}), c("b", {"cpu": "1.5"})])
    assert canonical(pod_requests(pod)) == {"cpu": "2", "memory": "1073741824"}
    pod = PodResources(containers=[c("a", {"cpu": "0.5", "memory": "512Mi"}), c("b", {"memory": "512Mi"})])
    assert canonical(scale(pod_requests(pod), 4)) == {"cpu": "2", "memory": "4Gi"}


_amounts = st.integers(min_value=0, max_value=10_000)
_containers = st.lists(st.tuples(_amounts, st.booleans()), max_size=6)


@given(_containers, st.lists(_amounts, max_size=4))
def test_the_pod_needs_at_least_every_phase(inits: list[tuple[int, bool]], mains: list[int]) -> None:
    pod = PodResources(
        init_containers=[c(f"i{i}", {"cpu": f"{v}m"}, sidecar=s) for i, (v, s) in enumerate(inits)],
        containers=[c(f"m{i}", {"cpu": f"{v}m"}) for i, v in enumerate(mains)],
    )
    got = pod_requests(pod).get("cpu", parse_quantity("0"))
    running = 0
    phases = []
    for value, sidecar in inits:
        if sidecar:
            running += value
            phases.append(running)
        else:
            phases.append(running + value)
    phases.append(running + sum(mains))
    if not inits and not mains:
        assert "cpu" not in pod_requests(pod)
    else:
        assert got == parse_quantity(f"{max(phases)}m")
