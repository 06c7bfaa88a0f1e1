"""Where the function's time goes: per phase, per step, and cProfile's top functions, in-process.

The pipeline is the CLI's (``krm.read`` -> ``process.process`` -> ``krm.write``), run on the
benchmark workload. Timing wraps the package's own functions (looked up at call time, so wrapping
the module attribute catches every caller); nothing of the function is changed or re-implemented.

    .venv/bin/python bench/profile.py                 # N=500 and N=5000
    .venv/bin/python bench/profile.py --n 500 --top 40
"""

# ruff: noqa: E402
from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# This file shadows the stdlib's ``profile``, which cProfile imports: keep bench/ off the path until then.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]

import argparse
import cProfile
import functools
import gc
import inspect
import io
import pstats
import re
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

sys.path.insert(0, str(BENCH))
import generate

ROOT = BENCH.parent
PYTHON = ROOT / ".venv" / "bin" / "python"

from trainjob_resources import process
from trainjob_resources.derive import plan
from trainjob_resources.krm import policy_inputs, results
from trainjob_resources.krm import resource_list as krm
from trainjob_resources.pipeline import derive, emit, memo, parse
from trainjob_resources.resolve import bundle
from trainjob_resources.rules import runtime_ref
from trainjob_resources.yamltext import textedit
from trainjob_resources.yamltext import yamlnodes as yn

# (owner, attribute, label, phase entered by the call or None to stay in the caller's phase)
COARSE: list[tuple[Any, str, str, str | None]] = [
    (krm, "read", "krm.read", "parse"),
    (krm.Item, "verify", "Item.verify (a TrainJob read when its turn comes)", "parse"),
    (process, "index", "bundle.index", "index"),
    (process, "process_trainjob", "process.process_trainjob", "validate"),
    (process, "derive", "pipeline.derive", "materialize"),
    (emit, "_with_derived", "emit._with_derived", "materialize"),
    (krm.Item, "result", "Item.result", "results"),
    (krm.Item, "settle", "Item.settle (a TrainJob written when done)", "emit"),
    (krm, "write", "krm.write", "emit"),
]
FINE: list[tuple[Any, str, str, str | None]] = [
    (yn, "decode", "yamlnodes.decode", None),
    (yn, "compose", "yamlnodes.compose (libyaml compose)", None),
    (yn, "_flow_depth_bound", "yamlnodes._flow_depth_bound", None),
    (yn, "_block_depth_bound", "yamlnodes._block_depth_bound (regex)", None),
    (yn, "_node_bound", "yamlnodes._node_bound", None),
    (yn, "_exact_bounds", "yamlnodes._exact_bounds (libyaml parse)", None),
    (yn, "_check_expansion", "yamlnodes._check_expansion", None),
    (policy_inputs, "item_problem", "policy_inputs.item_problem", None),
    (textedit, "remember", "textedit.remember", None),
    (textedit, "render", "textedit.render (edits written into the text)", None),
    (results, "results_text", "results.results_text", None),
    (yn, "check_duplicate_keys", "yamlnodes.check_duplicate_keys", None),
    (bundle, "parse_runtime", "models.parse_runtime (pydantic)", None),
    (bundle, "jobs_of", "runtime_view.jobs_of", None),
    (yn, "deep_copy", "yamlnodes.deep_copy", None),
    (parse, "has_provenance", "provenance.has_provenance", None),
    (parse, "restore", "provenance.restore", None),
    (yn, "to_python", "yamlnodes.to_python", None),
    (parse, "parse_trainjob", "trainjob_view.parse_trainjob (pydantic only when unusual)", None),
    (runtime_ref, "resolve", "runtime_ref.resolve", None),
    (parse, "container_sites", "sites.container_sites", None),
    (process, "patches", "pipeline.patches", None),
    (process, "policy", "pipeline.policy", None),
    (process, "evaluate", "policy.evaluate", None),
    (plan, "overrides_of", "materialize.overrides_of", None),
    (memo, "derived_name", "materialize.derived_name", None),
    (derive, "strip_resources", "materialize.strip_resources", None),
    (memo, "derive_runtime", "materialize.derive_runtime", None),
    (derive, "point_at", "materialize.point_at", None),
    (process, "_describe", "process._describe", None),
    (yn, "from_python", "yamlnodes.from_python (represent)", None),
    (krm.Result, "to_python", "Result.to_python", None),
    (yn, "serialize", "yamlnodes.serialize (libyaml emit)", None),
]
PHASES = ("parse", "index", "validate", "materialize", "results", "emit")


@dataclass
class Timers:
    """Inclusive and exclusive (children subtracted) seconds per (phase, label)."""

    inclusive: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    exclusive: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    calls: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    _children: list[float] = field(default_factory=list)
    _phases: list[str] = field(default_factory=lambda: ["other"])

    def wrap(self, fn: Callable[..., Any], label: str, phase: str | None) -> Callable[..., Any]:
        materialize_generator = inspect.isgeneratorfunction(fn)

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            key = (phase or self._phases[-1], label)
            if phase is not None:
                self._phases.append(phase)
            self._children.append(0.0)
            start = time.perf_counter()
            try:
                out = fn(*args, **kwargs)
                return list(out) if materialize_generator else out
            finally:
                elapsed = time.perf_counter() - start
                children = self._children.pop()
                if phase is not None:
                    self._phases.pop()
                self.inclusive[key] += elapsed
                self.exclusive[key] += elapsed - children
                self.calls[key] += 1
                if self._children:
                    self._children[-1] += elapsed

        return timed

    def phase_totals(self) -> dict[str, float]:
        totals: dict[str, float] = defaultdict(float)
        for (phase, _), seconds in self.exclusive.items():
            totals[phase] += seconds
        return totals


@contextmanager
def wrapped(timers: Timers, targets: Sequence[tuple[Any, str, str, str | None]]) -> Iterator[None]:
    present = [t for t in targets if hasattr(t[0], t[1])]
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _, _ in present]
    try:
        for owner, attr, label, phase in present:
            setattr(owner, attr, timers.wrap(getattr(owner, attr), label, phase))
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)


def pipeline(data: bytes) -> bytes:
    """What ``cli.as_main(process)`` does between reading stdin and writing stdout."""
    return krm.write(process.process(krm.read(data)))


def timed_run(data: bytes, collect: bool) -> float:
    if collect:
        gc.enable()
    else:
        gc.disable()
    gc.collect()
    start = time.perf_counter()
    pipeline(data)
    elapsed = time.perf_counter() - start
    gc.enable()
    return elapsed


def print_phases(title: str, timers: Timers, total: float) -> None:
    print(f"\n{title}")
    totals = timers.phase_totals()
    print(f"  {'phase':<13}{'seconds':>9}{'share':>8}")
    for phase in (*PHASES, "other"):
        seconds = totals.get(phase, 0.0)
        print(f"  {phase:<13}{seconds:>9.3f}{seconds / total:>8.1%}")
    print(f"  {'total':<13}{total:>9.3f}")


def print_steps(timers: Timers, total: float) -> None:
    print("\n  step (exclusive: children listed here subtracted)          calls  seconds   share")
    for phase in (*PHASES, "other"):
        keys = sorted((k for k in timers.exclusive if k[0] == phase), key=lambda k: -timers.exclusive[k])
        for key in keys:
            seconds = timers.exclusive[key]
            label = f"{phase}: {key[1]}"
            print(f"  {label:<58}{timers.calls[key]:>7}{seconds:>9.3f}{seconds / total:>8.1%}")


def print_cprofile(data: bytes, top: int) -> None:
    profiler = cProfile.Profile()
    gc.disable()
    profiler.enable()
    pipeline(data)
    profiler.disable()
    gc.enable()
    for sort in ("cumulative", "tottime"):
        stream = io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.strip_dirs().sort_stats(sort).print_stats(top)
        text = stream.getvalue()
        body = text[text.find("   ncalls") :]
        print(f"\n  cProfile, top {top} by {sort} (profiler overhead inflates call-heavy code):")
        print("\n".join("  " + line for line in body.rstrip().splitlines()))
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).strip_dirs().print_callers(r"resolver.py:\d+\(resolve\)")
    text = stream.getvalue()
    print("\n  Who calls PyYAML's Python-level resolver (libyaml's C parser and emitter call back into it per scalar):")
    print("\n".join("  " + line for line in text[text.find("Function") :].rstrip().splitlines()))


def _import_times(code: str) -> dict[str, int]:
    """Self time in microseconds of every module ``code`` imports, from ``python -X importtime``."""
    proc = subprocess.run([str(PYTHON), "-X", "importtime", "-c", code], capture_output=True, text=True, check=True)
    pattern = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)")
    return {m.group(2): int(m.group(1)) for m in map(pattern.match, proc.stderr.splitlines()) if m}


def import_profile(top: int) -> None:
    """What the CLI imports for a function run beyond the interpreter floor, from ``-X importtime``."""
    floor = _import_times("from pydantic import BaseModel; import yaml")
    function = _import_times("import trainjob_resources.cli.main, trainjob_resources.process")
    extra = {name: us for name, us in function.items() if name not in floor}
    by_package: dict[str, int] = defaultdict(int)
    for name, micros in extra.items():
        by_package[name.split(".")[0]] += micros
    print(
        f"\nImports (-X importtime, self times): floor {sum(floor.values()) / 1000:.0f} ms, function "
        f"{sum(function.values()) / 1000:.0f} ms; {len(extra)} modules beyond the floor cost "
        f"{sum(extra.values()) / 1000:.0f} ms:"
    )
    for name, micros in sorted(by_package.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {name + '.*':<40}{micros / 1000:>8.1f} ms")
    print("  the slowest of them:")
    for name, micros in sorted(extra.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {name:<40}{micros / 1000:>8.1f} ms")


STARTUP_PROBE = """
import time
start = time.perf_counter()
import dataclasses
from pydantic import BaseModel
import yaml
floor = time.perf_counter()
from pydantic._internal import _model_construction
from pydantic import fields, types
machinery = time.perf_counter()
import pydantic.plugin._loader
plugins = time.perf_counter()
spent = {"dataclass": [0, 0.0], "model": [0, 0.0]}
def timing(kind, original):
    def timed(*args, **kwargs):
        begin = time.perf_counter()
        made = original(*args, **kwargs)
        if made.__module__.startswith("trainjob_resources"):
            spent[kind][0] += 1
            spent[kind][1] += time.perf_counter() - begin
        return made
    return timed
dataclasses._process_class = timing("dataclass", dataclasses._process_class)
_model_construction.ModelMetaclass.__new__ = timing("model", _model_construction.ModelMetaclass.__new__)
package = time.perf_counter()
import trainjob_resources.cli.main, trainjob_resources.process
done = time.perf_counter()
ms = lambda s: round(s * 1000, 1)
print(ms(floor - start), ms(machinery - floor), ms(plugins - machinery), ms(done - package),
      spent["dataclass"][0], ms(spent["dataclass"][1]), spent["model"][0], ms(spent["model"][1]))
"""


def startup_profile(runs: int = 7) -> None:
    """Start-up beyond the floor, split: pydantic's schema machinery, its plugin loader, the package's
    dataclasses and models, the rest of its module bodies. Medians of ``runs`` fresh interpreters."""
    rows = []
    for _ in range(runs):
        out = subprocess.run([str(PYTHON), "-c", STARTUP_PROBE], capture_output=True, text=True, check=True)
        rows.append([float(x) for x in out.stdout.split()])
    med = [statistics.median(column) for column in zip(*rows, strict=True)]
    floor, machinery, plugins, package, n_dc, dc, n_models, models = med
    print(f"\nStart-up in-process, medians of {runs} interpreters (interpreter start itself not included):")
    print(f"  floor imports (pydantic BaseModel, yaml)           {floor:>7.1f} ms")
    print(f"  pydantic schema machinery (first model class)      {machinery:>7.1f} ms")
    print(f"  pydantic plugin loader (imports importlib.metadata){plugins:>7.1f} ms  (the CLI skips it)")
    print(f"  trainjob_resources.cli.main + .process                  {package:>7.1f} ms, of which")
    print(f"    {int(n_dc)} dataclasses                                 {dc:>7.1f} ms")
    print(f"    {int(n_models)} pydantic model classes                      {models:>7.1f} ms")
    print(f"    module bodies, other imports                     {package - dc - models:>7.1f} ms")


MEMORY_PROBE = """
import gc, os, sys
gc.disable()
page = os.sysconf("SC_PAGE_SIZE")
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page / 1e6
from trainjob_resources.krm import policy_inputs, results
from trainjob_resources.krm import resource_list as krm
from trainjob_resources import process
marks = [rss()]
data = open(sys.argv[1], "rb").read()
marks.append(rss())
resource_list = krm.read(data)
marks.append(rss())
processed = process.process(resource_list)
marks.append(rss())
out = krm.write(processed)
marks.append(rss())
# VmHWM, not ru_maxrss: the latter keeps the parent's peak across fork and exec.
with open("/proc/self/status") as f:
    peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) * 1024 / 1e6
print(*[round(m, 1) for m in marks], round(peak, 1), len(out))
"""


def command_peak_rss(path: str) -> float:
    """The peak RSS in MB of the command users run (``trainjob-resources < resourcelist.yaml``), from
    ``os.wait4``: what the function holds, its imports and the interpreter included. The child
    inherits this process's peak in ``ru_maxrss`` (Linux keeps it over fork and exec), so it is
    spawned from a small interpreter that only execs it."""
    exe = str(ROOT / ".venv" / "bin" / "trainjob-resources")
    spawn = (
        "import os, subprocess, sys\n"
        "with open(sys.argv[2], 'rb') as f:\n"
        "    p = subprocess.Popen([sys.argv[1]], stdin=f, stdout=subprocess.DEVNULL)\n"
        "    _, status, usage = os.wait4(p.pid, 0)\n"
        "print(usage.ru_maxrss)\n"
    )
    out = subprocess.run(["/usr/bin/python3", "-c", spawn, exe, path], capture_output=True, text=True, check=True)
    return int(out.stdout) * 1024 / 1e6


def memory_profile(data: bytes) -> None:
    """RSS at each phase boundary of one fresh process running the pipeline (gc disabled, as the
    CLI), and the peak of the command itself. TrainJobs are composed one at a time while they are
    processed (``Item.verify``) and dropped when done (``Item.settle``): nothing here holds them."""
    with tempfile.NamedTemporaryFile(suffix=".yaml") as f:
        f.write(data)
        f.flush()
        out = subprocess.run([str(PYTHON), "-c", MEMORY_PROBE, f.name], capture_output=True, text=True, check=True)
        command = command_peak_rss(f.name)
    imported, loaded, read, processed, written, peak, out_bytes = (float(x) for x in out.stdout.split())
    print("\nMemory (RSS of a fresh process, MB):")
    print(f"  after imports {imported:.1f}; + input bytes {loaded - imported:.1f}; + krm.read {read - loaded:.1f}")
    print(f"  + process {processed - read:.1f}; + krm.write {written - processed:.1f} ({int(out_bytes)} output bytes)")
    print(f"  peak {peak:.1f} in-process; the command's own peak RSS {command:.1f}")


def instrumented(data: bytes, targets: Sequence[tuple[Any, str, str, str | None]]) -> tuple[Timers, float]:
    """One instrumented run (gc disabled, as the CLI runs): its timers and total."""
    timers = Timers()
    gc.disable()
    gc.collect()
    with wrapped(timers, targets):
        start = time.perf_counter()
        pipeline(data)
        total = time.perf_counter() - start
    gc.enable()
    return timers, total


def profile(n: int, top: int, cprofile: bool, repeat: int) -> None:
    """Rounds of (plain, with gc, phases, steps) so that drift of the machine hits each alike; the
    fastest of each kind is shown."""
    data = generate.resource_list(n).encode()
    print(f"\n=== N={n}: {generate.item_count(n)} items, {len(data)} bytes; best of {repeat} rounds ===")
    pipeline(data)
    plain: list[float] = []
    with_gc: list[float] = []
    coarse: list[tuple[Timers, float]] = []
    fine: list[tuple[Timers, float]] = []
    for _ in range(repeat):
        plain.append(timed_run(data, collect=False))
        with_gc.append(timed_run(data, collect=True))
        coarse.append(instrumented(data, COARSE))
        fine.append(instrumented(data, COARSE + FINE))
    print(
        f"pipeline wall, no instrumentation: {min(plain):.3f} s with gc disabled (as the CLI runs), "
        f"{min(with_gc):.3f} s with"
    )
    timers, total = min(coarse, key=lambda run: run[1])
    print_phases("Phases (validate = process_trainjob minus derive; results = Item.result):", timers, total)
    timers, total = min(fine, key=lambda run: run[1])
    print_steps(timers, total)
    memory_profile(data)
    if cprofile:
        print_cprofile(data, top)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=[500, 5000], help="workload sizes")
    parser.add_argument("--top", type=int, default=25, help="rows of cProfile and import listings")
    parser.add_argument("--no-cprofile", action="store_true", help="skip the cProfile listings")
    parser.add_argument("--repeat", type=int, help="runs per figure, the fastest kept (default: 3, 1 above N=500)")
    args = parser.parse_args(argv)
    # As bench/run.py: the start-up figures are an installed package's, with its bytecode (under
    # PYTHONDONTWRITEBYTECODE a checkout would compile every module in every interpreter measured).
    subprocess.run([str(PYTHON), "-m", "compileall", "-q", str(ROOT / "function" / "trainjob_resources")], check=True)
    startup_profile()
    import_profile(args.top)
    for n in args.n:
        profile(n, args.top, not args.no_cprofile, args.repeat or (3 if n <= 500 else 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
