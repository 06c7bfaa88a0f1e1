"""What the YAML levers of issue 5 could buy, measured on the benchmark workload (best of a few runs).

Floors and alternatives for the two YAML-bound phases, next to what the function does now:
parse (libyaml events only, compose, compose with a memoized resolver) and emit (the function's
output tree through libyaml, with and without a memoized resolver), plus how the output's bytes
split between items and results. Nothing here is used by the function.

    .venv/bin/python bench/levers.py --n 500 5000
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import generate
import yaml
from trainjob_resources import process
from trainjob_resources.krm import resource_list as krm
from trainjob_resources.yamltext import yamlnodes as yn
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver


class _MemoizedResolve:
    """libyaml's parser and emitter call the Python resolver once or twice per scalar; values repeat."""

    _memo: dict[tuple[str, Any], str]

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        if kind is not ScalarNode:
            tag: str = Resolver.resolve(self, kind, value, implicit)  # type: ignore[arg-type, no-untyped-call]
            return tag
        key = (value, implicit)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = Resolver.resolve(self, kind, value, implicit)  # type: ignore[arg-type, no-untyped-call]
        return found


class MemoLoader(_MemoizedResolve, yaml.CSafeLoader):
    _memo: dict[tuple[str, Any], str] = {}  # noqa: RUF012


class MemoDumper(_MemoizedResolve, yaml.CSafeDumper):
    _memo: dict[tuple[str, Any], str] = {}  # noqa: RUF012


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
        gc.enable()
    return min(times), out


def count_events(text: str) -> int:
    return sum(1 for _ in yaml.parse(text, Loader=yaml.CSafeLoader))


def serialize_with(root: Node, dumper: type[Any]) -> str:
    text: str = yaml.serialize(root, Dumper=dumper, allow_unicode=True, width=1 << 30, indent=2, explicit_start=False)
    return text


def levers(n: int, repeat: int) -> None:
    text = generate.resource_list(n)
    data = text.encode()
    print(f"\n=== N={n}: {len(data)} bytes; best of {repeat} ===")
    seconds, events = best(lambda: count_events(text), repeat)
    rows = [(f"parse: libyaml events only ({events} events, as Python event objects)", seconds)]
    result = process.process(krm.read(data))
    items = SequenceNode(yn.SEQ_TAG, [i.node for i in result.items], flow_style=False)
    root = MappingNode(yn.MAP_TAG, [(yn.str_node("items"), items)], flow_style=False)
    same = serialize_with(root, yaml.CSafeDumper) == serialize_with(root, MemoDumper)
    timed: list[tuple[str, Callable[[], Any]]] = [
        ("parse: yaml.compose, CSafeLoader", lambda: yaml.compose(text, Loader=yaml.CSafeLoader)),
        ("parse: yaml.compose, memoized resolver", lambda: yaml.compose(text, Loader=MemoLoader)),
        ("parse: yamlnodes.compose (the function's: bounds + compose)", lambda: yn.compose(text)),
        ("parse: krm.read (the function's whole parse phase)", lambda: krm.read(data)),
        ("emit: the output's items through libyaml, CSafeDumper", lambda: serialize_with(root, yaml.CSafeDumper)),
        (f"emit: same, memoized resolver (identical output: {same})", lambda: serialize_with(root, MemoDumper)),
        ("emit: krm.write (the function's whole emit phase: items and results)", lambda: krm.write(result)),
    ]
    rows += [(label, best(fn, repeat)[0]) for label, fn in timed]
    for label, value in rows:
        print(f"  {label:<76}{value:>8.3f} s")
    written = krm.write(result)
    cut = written.find(b"\nresults:\n")
    results = len(written) - cut if cut >= 0 else 0
    share = results / len(written)
    print(f"  output: {len(written)} bytes, of which results {results} ({share:.0%}, {len(result.results)} results)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=[500, 5000], help="workload sizes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, the fastest kept")
    args = parser.parse_args(argv)
    for n in args.n:
        levers(n, args.repeat if n <= 500 else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
