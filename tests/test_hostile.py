"""Hostile input (issue 7, item 1): every case ends in exit 1 (or a correct result), one clear message,
no traceback, bounded time and memory, and every readable item back.

The table runs in-process; the cases marked ``limited`` run again as the installed command in a
process with hard limits (1 GiB address space, 20 s CPU) so that a regression fails rather than
hangs or swaps. docs/hardening.md lists the cases with their outcomes.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources.krm import resource_list as krm
from trainjob_resources.yamltext import yamlnodes as yn

from tests.goldens import run_function
from tests.hostile import (
    CONFIG_MAP,
    HEADER,
    RUNTIME,
    assert_items_back,
    assert_sane,
    bundle,
    input_items,
    run_limited,
    trainjob_value,
    trainjob_yaml,
)

TRAINJOB = trainjob_yaml(trainjob_value())


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[], bytes]
    code: int | None  # None: either is right (the quantity grammar decides; see test_quantity.py)
    message: str  # part of stderr
    items_back: bool = False  # the list is readable: every input item must come back
    limited: bool = False  # also run as a real process under hard limits
    in_process: bool = True  # False for the big ones: the limited process alone runs them


def billion_laughs() -> bytes:
    lines = [b"lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [b"lol%d: &l%d [%s]" % (i, i, b", ".join([b"*l%d" % (i - 1)] * 10)) for i in range(1, 10)]
    return HEADER + b"\n".join(lines) + b"\nitems: [*l9]\n"


def alias_bomb_in_item() -> bytes:
    anchors = "".join(f"      a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
    return bundle(
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: bomb}\n  data:\n    x:\n"
        + "      a0: &a0 [x, x, x, x, x]\n"
        + anchors
    )


def flow_nesting(depth: int, opener: bytes = b"[", closer: bytes = b"]") -> bytes:
    return HEADER + b"items: " + opener * depth + closer * depth + b"\n"


def block_sequence_nesting(depth: int) -> bytes:
    return bundle(
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: deep}\n  data:\n    x:\n    " + "- " * depth + "x\n"
    )


def block_mapping_nesting(depth: int) -> bytes:
    lines = "".join(" " * (4 + i) + f"k{i}:\n" for i in range(depth))
    return bundle("- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: deep}\n  data:\n" + lines)


def nesting_within_bound() -> bytes:
    return bundle(
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: deep}\n  data: {x: " + "[" * 150 + "]" * 150 + "}\n"
    )


def garbage() -> bytes:
    rng = random.Random(7)
    return bytes(rng.randrange(256) for _ in range(64 * 1024))


def big_bundle(target: int = 20 * 1024 * 1024) -> bytes:
    """About ``target`` bytes: the runtime and many TrainJobs and ConfigMaps, as users write them."""
    template = trainjob_yaml(trainjob_value("NAME", "MEMORY"))
    parts = [RUNTIME]
    i = size = 0
    while size < target:
        if i % 2:
            text = CONFIG_MAP.replace("name: settings", f"name: settings-{i}")
        else:
            text = template.replace("NAME", f"tj-{i}").replace("MEMORY", f"{16 + i % 64}Gi")
        parts.append(text)
        size += len(text)
        i += 1
    return bundle(*parts)


def too_many_nodes() -> bytes:
    return bundle("- {apiVersion: v1, kind: ConfigMap, metadata: {name: big}, data: [" + "0," * yn.MAX_NODES + "0]}\n")


def too_many_items() -> bytes:
    return HEADER + b"items:\n" + b"- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n" * (krm.MAX_ITEMS + 1)


def with_memory(raw: str) -> bytes:
    return bundle(RUNTIME, trainjob_yaml(trainjob_value(memory="MEMORY")).replace("MEMORY", raw))


def tj_with(mutate: Callable[[dict[str, Any]], None]) -> bytes:
    value = trainjob_value()
    mutate(value)
    return bundle(RUNTIME, trainjob_yaml(value))


def json_bundle(memory: str = "64Gi") -> bytes:
    items = [yaml.safe_load(RUNTIME)[0], trainjob_value(memory=memory)]
    return json.dumps({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}).encode()


def many_errors() -> bytes:
    patches = "".join(f"    - {{manager: bad-{i}}}\n" for i in range(krm.MAX_RESULTS + 50))
    return bundle(
        RUNTIME,
        "- apiVersion: trainer.kubeflow.org/v1alpha1\n  kind: TrainJob\n  metadata: {name: t}\n"
        f"  spec:\n    runtimeRef: {{name: torch}}\n    runtimePatches:\n{patches}",
    )


CASES = [
    Case("empty input", lambda: b"", 1, "input is empty"),
    Case("only a comment", lambda: b"# nothing here\n\n", 1, "input is empty"),
    Case("a lone ---", lambda: b"---\n", 1, "input is empty"),
    Case("a byte order mark only", lambda: b"\xef\xbb\xbf", 1, "input is empty"),
    Case("two documents", lambda: HEADER + b"---\n" + HEADER, 1, "but found another document"),
    Case("invalid UTF-8", lambda: HEADER + b"items: [\xc3\x28]\n", 1, "not valid UTF-8"),
    Case("UTF-16", lambda: HEADER.decode().encode("utf-16"), 1, "not valid UTF-8"),
    Case("binary garbage", garbage, 1, "not valid UTF-8", limited=True),
    Case("a NUL byte", lambda: HEADER + b"items: [a\x00b]\n", 1, "invalid YAML"),
    Case("a scalar document", lambda: b"hello\n", 1, "not a ResourceList"),
    Case("a list document", lambda: b"- a\n- b\n", 1, "not a ResourceList"),
    Case("a bare TrainJob", lambda: TRAINJOB[2:].replace("\n  ", "\n").encode(), 1, "not a ResourceList"),
    Case("wrong apiVersion", lambda: HEADER.replace(b"config.kubernetes.io/v1", b"v1"), 1, "not a ResourceList"),
    Case("items is a mapping", lambda: HEADER + b"items: {a: 1}\n", 1, "items must be a list"),
    Case("functionConfig is a list", lambda: HEADER + b"functionConfig: [a]\n", 1, "must be a mapping"),
    Case("truncated flow", lambda: HEADER + b"items: [{a: 1}\n", 1, "invalid YAML"),
    Case("billion laughs", billion_laughs, 1, "aliases expand to more than", limited=True),
    Case("alias bomb inside an item", alias_bomb_in_item, 1, "aliases expand to more than", limited=True),
    Case(
        "recursive alias",
        lambda: bundle("- &a {apiVersion: v1, kind: X, metadata: {name: x}, x: *a}\n"),
        1,
        "recursive alias",
        limited=True,
    ),
    Case("20,000-deep flow sequences", lambda: flow_nesting(20_000), 1, "nesting", limited=True),
    Case("20,000-deep flow mappings", lambda: flow_nesting(20_000, b"{a: ", b"}"), 1, "nesting", limited=True),
    Case("100,000-deep flow sequences", lambda: flow_nesting(100_000), 1, "nesting", limited=True),
    Case(
        "20,000-deep block sequences",
        lambda: block_sequence_nesting(20_000),
        1,
        "nesting deeper than 200",
        limited=True,
    ),
    Case(
        "100,000-deep block sequences",
        lambda: block_sequence_nesting(100_000),
        1,
        "nesting deeper than 200",
        limited=True,
    ),
    Case("2,000-deep block mappings", lambda: block_mapping_nesting(2_000), 1, "nesting deeper than 200", limited=True),
    Case("150-deep nesting (within the bound)", nesting_within_bound, 0, "", items_back=True),
    Case(
        "duplicate key at the top level",
        lambda: HEADER + b"kind: ResourceList\nitems: []\n",
        1,
        "duplicate mapping key 'kind'",
    ),
    Case("duplicate items key", lambda: HEADER + b"items: []\nitems: []\n", 1, "duplicate mapping key 'items'"),
    Case("merge key at the top level", lambda: HEADER + b"<<: {items: []}\n", 1, "only plain keys"),
    Case(
        "duplicate key in an item",
        lambda: bundle(RUNTIME, "- {apiVersion: v1, kind: A, kind: B}\n"),
        1,
        "duplicate mapping key 'kind'",
        items_back=True,
    ),
    Case(
        "duplicate key deep in a TrainJob",
        lambda: bundle(RUNTIME, TRAINJOB.replace("memory: 64Gi\n", "memory: 1Gi\n" + " " * 28 + "memory: 64Gi\n", 1)),
        1,
        "duplicate mapping key 'memory'",
        items_back=True,
    ),
    Case(
        "duplicate key in functionConfig",
        lambda: HEADER + b"functionConfig: {a: 1, a: 2}\n",
        1,
        "duplicate mapping key 'a'",
    ),
    Case(
        "items that are not mappings",
        lambda: bundle(RUNTIME, "- 5\n- [a]\n- null\n- text\n"),
        1,
        "is not a mapping",
        items_back=True,
    ),
    Case(
        "items without kind or apiVersion",
        lambda: bundle("- {kind: X}\n- {apiVersion: v1}\n- {}\n"),
        1,
        "has no apiVersion or kind",
        items_back=True,
    ),
    Case("TrainJob without metadata", lambda: tj_with(lambda v: v.pop("metadata")), 1, "needs a name", items_back=True),
    Case(
        "TrainJob metadata: null",
        lambda: tj_with(lambda v: v.update(metadata=None)),
        1,
        "metadata: input should be a valid dictionary",
        items_back=True,
    ),
    Case(
        "TrainJob spec: null",
        lambda: tj_with(lambda v: v.update(spec=None)),
        1,
        "spec: input should be a valid dictionary",
        items_back=True,
    ),
    Case(
        "TrainJob without spec",
        lambda: tj_with(lambda v: v.pop("spec")),
        1,
        "spec: required field is missing",
        items_back=True,
    ),
    Case(
        "runtime spec: null",
        lambda: bundle(RUNTIME.replace("  spec:\n    mlPolicy", "  spec: null\n  x:\n    mlPolicy"), TRAINJOB),
        1,
        "runtime cannot be read",
        items_back=True,
    ),
    Case(
        "runtime limits: a string (fuzzer)",
        lambda: bundle(RUNTIME.replace("limits: {memory: 8Gi}", "limits: x"), TRAINJOB),
        1,
        "limits must be a map",
        items_back=True,
    ),
    Case(
        "an empty !!int key (fuzzer)",
        lambda: bundle(RUNTIME, TRAINJOB.replace("  spec:\n", "  spec:\n    !!int : 1\n", 1)),
        1,
        "the tag !!int is refused",  # issue 30: a tag that changes how a text reads is refused
    ),
    Case("quantity 1e400", lambda: with_memory("1e400"), None, ""),
    Case(
        "quantity 1.0e+400 (a float overflow)",
        lambda: with_memory("1.0e+400"),
        1,
        # issue 30: PyYAML reads infinity, go-yaml (which cannot parse it as a float64) the string
        "the plain scalar 1.0e+400 at spec.runtimePatches[0].trainingRuntimeSpec.template.spec",
    ),
    Case("quantity .nan", lambda: with_memory(".nan"), 1, "must be a finite number", items_back=True),
    Case("quantity of 10,000 digits", lambda: with_memory("'" + "9" * 10_000 + "'"), None, ""),
    Case("plain integer of 10,000 digits", lambda: with_memory("9" * 10_000), None, ""),
    Case("quantity exponent of 12 digits", lambda: with_memory("'1e999999999999'"), None, ""),
    Case("quantity of 10,000 decimals", lambda: with_memory("'0." + "1" * 10_000 + "'"), None, ""),
    Case("quantity true", lambda: with_memory("true"), 1, "must be a string or number", items_back=True),
    Case(
        "!!binary quantity",
        lambda: with_memory("!!binary aGVsbG8="),
        1,
        "the tag !!binary is refused: go-yaml (kubectl, kustomize, Argo CD) decodes it",  # issue 30
    ),
    Case(
        "!!python/object/apply quantity",
        lambda: with_memory("!!python/object/apply:os.system ['exit 3']"),
        1,
        "the tag !!python/object/apply:os.system is refused",  # issue 30
    ),
    Case(
        "!!python/object/apply item",
        lambda: bundle("- !!python/object/apply:os.system ['exit 3']\n"),
        1,
        "the tag !!python/object/apply:os.system is refused",  # issue 30
    ),
    Case(
        "!!python/object/new mapping item",
        lambda: bundle("- !!python/object/new:subprocess.Popen {apiVersion: v1, kind: X, metadata: {name: x}}\n"),
        1,
        "the tag !!python/object/new:subprocess.Popen is refused",  # issue 30
    ),
    Case(
        "!!python/name functionConfig",
        lambda: HEADER + b"functionConfig: !!python/name:os.system {}\n",
        1,
        "the tag !!python/name:os.system is refused",  # issue 30
    ),
    Case(
        "merge key inside a TrainJob",
        lambda: bundle(RUNTIME, TRAINJOB.replace("  spec:\n", "  spec:\n    <<: {suspend: true}\n", 1)),
        1,
        "has a YAML merge key (<<) at spec.<<",  # issue 21: go-yaml and PyYAML resolve it differently
    ),
    # The text has no ``<<``: the tag says it (libyaml decodes a %-escape in a tag).
    *(
        Case(
            f"merge key written {how}",
            lambda key=key: bundle(
                RUNTIME, TRAINJOB.replace("  spec:\n", f"  spec:\n    {key} x: {{suspend: true}}\n", 1)
            ),
            1,
            "the tag !!merge is refused: PyYAML and go-yaml merge differently",  # issue 30: any tag but the core's
        )
        for how, key in [
            ("as !!merge", "!!merge"),
            ("with the full tag", "!<tag:yaml.org,2002:merge>"),
            ("with an escape in the full tag", "!<tag:yaml.org,2002:m%65rge>"),
            ("with an escape in the short tag", "!!m%65rge"),
        ]
    ),
    Case(
        "more than MAX_INPUT_BYTES",
        lambda: HEADER + b"items: []\n" + b"#" * yn.MAX_INPUT_BYTES,
        1,
        "larger than",
        limited=True,
        in_process=False,
    ),
    Case("more than MAX_NODES nodes", too_many_nodes, 1, "YAML nodes", limited=True, in_process=False),
    Case("more than MAX_ITEMS items", too_many_items, 1, "the limit is 100000", limited=True, in_process=False),
    Case(
        "more than MAX_RESULTS results",
        many_errors,
        1,
        "more results not shown",
        items_back=True,
        limited=True,
        in_process=False,
    ),
    Case("JSON input", json_bundle, 0, ""),
    Case(
        "JSON input with an error",
        lambda: json_bundle("-1Gi"),
        1,
        "must be greater than or equal to 0",
        items_back=True,
    ),
    Case("truncated JSON", lambda: json_bundle()[:-10], 1, "invalid YAML"),
]


IN_PROCESS = [c for c in CASES if c.in_process]
LIMITED = [c for c in CASES if c.limited]
# The limited runs that cost a second or more of CPU carry pyproject's slow marker (`make unit` skips them).
SLOW_LIMITED = {"more than MAX_NODES nodes", "more than MAX_RESULTS results"}
assert {c.id for c in LIMITED} >= SLOW_LIMITED
LIMITED_PARAMS = [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.id in SLOW_LIMITED else []) for c in LIMITED]


@pytest.mark.parametrize("case", IN_PROCESS, ids=[c.id for c in IN_PROCESS])
def test_hostile_input_in_process(case: Case) -> None:
    data = case.build()
    code, stdout, stderr = run_function(data)
    output = assert_sane(code, stdout, stderr)
    assert case.code is None or code == case.code, stderr[-2000:]
    assert case.message in stderr
    if code == 1:
        assert len(stderr.splitlines()) <= krm.MAX_RESULTS + 1
    if case.items_back:
        assert_items_back(data, output)
    if data.lstrip().startswith(b"{"):
        json.loads(stdout)


@pytest.mark.parametrize("case", LIMITED_PARAMS)
def test_hostile_input_in_a_limited_process(case: Case) -> None:
    data = case.build()
    run = run_limited(data)
    output = assert_sane(run.code, run.stdout, run.stderr)
    assert case.code is None or run.code == case.code, run.stderr[-2000:]
    assert case.message in run.stderr
    if case.items_back:
        assert_items_back(data, output)


@pytest.mark.slow
def test_a_20_mb_bundle_in_a_limited_process() -> None:
    """A correct result, every item back, within 1.5 GiB and 90 s of CPU (it takes about 20 s and 0.9 GB)."""
    data = big_bundle()
    run = run_limited(data, memory_mib=1536, cpu_seconds=90)
    output = assert_sane(run.code, run.stdout, run.stderr)
    assert run.code == 0
    before = input_items(data)
    after = output["items"]
    assert [i for i in after if i["kind"] == "ConfigMap"] == [i for i in before if i["kind"] == "ConfigMap"]
    names = [i["metadata"]["name"] for i in before if i["kind"] == "TrainJob"]
    assert [i["metadata"]["name"] for i in after if i["kind"] == "TrainJob"] == names
    assert all("resources" not in json.dumps(i["spec"]) for i in after if i["kind"] == "TrainJob")


def test_no_yaml_tag_constructs_an_object(tmp_path: Path) -> None:
    marker = tmp_path / "constructed"
    command = f"touch {marker}"
    tags = [
        f"!!python/object/apply:os.system [{command!r}]",
        f"!!python/object/apply:subprocess.check_call [[touch, {marker}]]",
        f"!!python/object/new:subprocess.Popen [[touch, {marker}]]",
        "!!python/name:os.system",
        "!!python/module:os",
    ]
    for tag in tags:
        for data in (
            with_memory(tag),
            bundle(f"- {tag}\n"),
            bundle(RUNTIME, TRAINJOB.replace("  spec:\n", f"  spec:\n    suspend: {tag}\n", 1)),
            HEADER + f"functionConfig: {{data: {tag}}}\nitems: []\n".encode(),
            HEADER + f"extra: {tag}\nitems: []\n".encode(),
        ):
            code, stdout, stderr = run_function(data)
            assert_sane(code, stdout, stderr)
            assert not marker.exists(), tag


# Wrong types at every level of the runtimePatches tree, generated from the valid TrainJob.

WRONG: dict[type, list[Any]] = {
    dict: ["text", 42, ["list"], True],
    list: ["text", 42, {"a": 1}, True],
    str: [["list"], {"a": 1}, 42, True, None],
}


def patch_paths(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from patch_paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from patch_paths(child, (*path, index))


def replaced(path: tuple[str | int, ...], wrong: Any) -> dict[str, Any]:
    value = copy.deepcopy(trainjob_value())
    holder: Any = value["spec"]
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = wrong
    return value


def field_path(path: tuple[str | int, ...]) -> str:
    out = "spec"
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else f".{step}"
    return out


WRONG_TYPE_CASES = [
    (field_path(path), wrong)
    for path, value in patch_paths(trainjob_value()["spec"]["runtimePatches"], ("runtimePatches",))
    for wrong in WRONG.get(type(value), [])
    if path
]


def _wrong_type_input(path_text: str, wrong: Any) -> bytes:
    path = next(
        p
        for p, _ in patch_paths(trainjob_value()["spec"]["runtimePatches"], ("runtimePatches",))
        if field_path(p) == path_text
    )
    return bundle(RUNTIME, CONFIG_MAP, trainjob_yaml(replaced(path, wrong)))


def _reported_at(reported: str, mutated: str) -> bool:
    if mutated.endswith(("limits.memory", "requests.memory")):
        mutated = mutated.rsplit(".", 2)[0]  # a quantity of the right type may break a rule of the whole map
    return reported.startswith(mutated) or mutated.startswith(reported)


@pytest.mark.parametrize(("path", "wrong"), WRONG_TYPE_CASES, ids=[f"{p}={w!r}" for p, w in WRONG_TYPE_CASES])
def test_wrong_type_in_the_runtime_patches_tree(path: str, wrong: Any) -> None:
    data = _wrong_type_input(path, wrong)
    code, stdout, stderr = run_function(data)
    output = assert_sane(code, stdout, stderr)
    if code == 0:
        quantity = path.endswith(("limits.memory", "requests.memory"))
        assert wrong is None or (quantity and isinstance(wrong, int)), (path, wrong)
        return
    assert_items_back(data, output)
    errors = [r for r in output["results"] if r["severity"] == "error"]
    assert any(_reported_at(r["field"]["path"], path) for r in errors if "field" in r), (path, errors)


def test_the_wrong_type_table_reaches_every_level() -> None:
    assert len({p for p, _ in WRONG_TYPE_CASES}) >= 20
    assert any(p.endswith("limits.memory") for p, _ in WRONG_TYPE_CASES)
    assert any(p.endswith("runtimePatches") for p, _ in WRONG_TYPE_CASES)


def test_a_trainjob_with_a_duplicate_key_comes_back_as_written() -> None:
    data = bundle(RUNTIME, TRAINJOB.replace("  spec:\n", "  spec:\n    suspend: false\n    suspend: true\n", 1))
    code, stdout, stderr = run_function(data)
    output = assert_sane(code, stdout, stderr)
    assert code == 1
    assert_items_back(data, output)


def test_unchanged_output_of_json_input_is_json() -> None:
    code, stdout, _ = run_function(json_bundle())
    assert code == 0
    assert json.loads(stdout)["kind"] == "ResourceList"


def test_items_sharing_an_anchor_are_edited_independently() -> None:
    shared = trainjob_yaml(trainjob_value("a")).replace("- apiVersion", "- &tj\n  apiVersion", 1)
    data = bundle(RUNTIME, shared, "- *tj\n")
    code, stdout, stderr = run_function(data)
    output = assert_sane(code, stdout, stderr)
    trainjobs = [i for i in output["items"] if i["kind"] == "TrainJob"]
    assert len(trainjobs) == 2
    assert trainjobs[0] == trainjobs[1]
    assert "runtimePatches" not in trainjobs[1]["spec"] or all(
        "resources" not in json.dumps(p) for p in trainjobs[1]["spec"]["runtimePatches"]
    )


# One reading of YAML (issue 30), in KRM mode: a tag, a directive or a plain scalar that go-yaml (kpt,
# kustomize, kubectl) reads otherwise is refused with its line, wherever it sits: in the TrainJob (read
# lazily or not), the runtime, another item, the functionConfig or the ResourceList itself.

BINARY_TAGS = {"short": "!!binary", "verbatim": "!<tag:yaml.org,2002:binary>"}
KRM_FIELDS: dict[str, Callable[[str], bytes]] = {
    "runtimeRef.name": lambda tag: bundle(RUNTIME, TRAINJOB.replace("name: torch", f"name: {tag} dG9yY2g=", 1)),
    "kind": lambda tag: bundle(RUNTIME, TRAINJOB.replace("kind: TrainJob", f"kind: {tag} VHJhaW5Kb2I=", 1)),
    "memory": lambda tag: with_memory(f"{tag} MWdp"),
    "runtime name": lambda tag: bundle(RUNTIME.replace("name: torch", f"name: {tag} dG9yY2g=", 1), TRAINJOB),
    "another item": lambda tag: bundle(RUNTIME, TRAINJOB, CONFIG_MAP.replace("name: ", f"name: {tag} ", 1)),
    "functionConfig": lambda tag: (
        HEADER
        + f"functionConfig: {{kind: ConfigMap, data: {tag} e30=}}\n".encode()
        + b"items:\n"
        + (RUNTIME + TRAINJOB).encode()
    ),
}


@pytest.mark.parametrize("spelling", sorted(BINARY_TAGS))
@pytest.mark.parametrize("field", sorted(KRM_FIELDS))
def test_a_binary_tag_is_refused_in_krm_mode(field: str, spelling: str) -> None:
    data = KRM_FIELDS[field](BINARY_TAGS[spelling])
    assert BINARY_TAGS[spelling].encode() in data
    code, stdout, stderr = run_function(data)
    assert_sane(code, stdout, stderr)
    assert code == 1, stderr
    assert "the tag !!binary is refused: go-yaml (kubectl, kustomize, Argo CD) decodes it" in stderr, stderr
    assert "(line " in stderr, stderr


@pytest.mark.parametrize("directive", ["%YAML 1.1\n---\n", "%TAG !e! tag:yaml.org,2002:\n---\n"])
def test_a_directive_is_refused_in_krm_mode(directive: str) -> None:
    code, stdout, stderr = run_function(directive.encode() + bundle(RUNTIME, TRAINJOB))
    assert_sane(code, stdout, stderr)
    assert code == 1 and f"the {directive.split()[0]} directive is refused" in stderr, stderr


# Plain scalars with two readings, as each would sit in a TrainJob's override (a quantity), its
# runtimeRef (a name) and its metadata (a label value).
DISPUTED = ["1:30", "190:20:30", "0o17", "0B101", "1e3", "1.0e3", "+.5", "08", "y", "N", "yes", "On", "OFF"]


@pytest.mark.parametrize("text", DISPUTED)
@pytest.mark.parametrize("where", ["memory", "runtimeRef.name", "label"])
def test_a_yaml_1_1_form_is_refused_in_krm_mode(text: str, where: str) -> None:
    if where == "memory":
        data = with_memory(text)
    elif where == "runtimeRef.name":
        data = bundle(RUNTIME, TRAINJOB.replace("name: torch", f"name: {text}", 1))
    else:
        data = bundle(RUNTIME, TRAINJOB.replace("  name: tj\n", f"  name: tj\n    labels: {{team: {text}}}\n", 1))
    code, stdout, stderr = run_function(data)
    assert_sane(code, stdout, stderr)
    assert code == 1 and f"the plain scalar {text} at " in stderr and "is refused" in stderr, stderr


@pytest.mark.parametrize("text", DISPUTED)
def test_a_yaml_1_1_form_quoted_is_read_as_the_string(text: str) -> None:
    """The refusal's advice holds: quoted, the same text is a string to every reader."""
    code, stdout, stderr = run_function(with_memory(f"'{text}'"))
    assert_sane(code, stdout, stderr)
    assert "is refused" not in stderr, stderr
