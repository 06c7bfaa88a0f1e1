"""Fuzz target (issue 7, item 4): arbitrary bytes through the ResourceList reader and the whole function.

Whatever the input, the function must answer with exit 0 or 1, a ResourceList on stdout (JSON for
JSON input), no internal error, and, when the input is a readable ResourceList, every item back.

A long run with atheris (libFuzzer; coverage-guided), starting from the golden inputs:

    .venv/bin/pip install atheris==3.0.0
    mkdir -p /tmp/fuzz-corpus
    .venv/bin/python tests/fuzz/fuzz_reader.py -dict=tests/fuzz/yaml.dict -max_total_time=3600 \\
        -rss_limit_mb=2048 -timeout=20 -artifact_prefix=/tmp/fuzz- /tmp/fuzz-corpus

A crash leaves ``/tmp/fuzz-crash-*``; replay it with ``.venv/bin/python tests/fuzz/fuzz_reader.py FILE``.
tests/fuzz/test_fuzz.py runs the same check in CI: hypothesis-driven, and atheris for a few seconds
when it is installed. CHANGELOG.md records what the runs found; each finding is a case in docs/hardening.md or a test.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted((ROOT / "tests" / "testdata").glob("*/*/input.yaml"))


def check(data: bytes) -> None:
    """The property every input must keep; raises AssertionError (a crash, to the fuzzer) if not."""
    from trainjob_resources.cli.main import as_main
    from trainjob_resources.krm import resource_list as krm
    from trainjob_resources.process import process
    from trainjob_resources.yamltext import yamlnodes as yn

    stdout, stderr = io.BytesIO(), io.StringIO()
    code = as_main(process, io.BytesIO(data), stdout, stderr)
    out, err = stdout.getvalue(), stderr.getvalue()
    assert code in (0, 1), code
    assert "internal error" not in err and "Traceback" not in err, err[-2000:]
    if data.lstrip().startswith(b"{"):
        json.loads(out)
    try:
        readable = read_whole_of(data)
    except (krm.ResourceListError, yn.YamlInputError):
        readable = None
    assert readable is not None or code == 1, "an input the reader refuses was accepted"
    try:
        again = read_whole_of(out)  # the output is a ResourceList that the next function (this one too) can read
    except (krm.ResourceListError, yn.YamlInputError) as unreadable:
        # ...unless an item the input already had unreadable comes back as it came, unread (a refused
        # functionConfig stops the function before it reads the items)
        assert readable is None, f"the output of a readable input cannot be read: {unreadable}"
        again = None
    errors = [r for r in results_of(out) if r.get("severity") == "error"]
    assert (code == 1) == bool(errors), (code, errors[:3])
    if readable is not None and again is not None:
        assert len(again.items) >= len(readable.items), (len(again.items), len(readable.items))


def results_of(out: bytes) -> list[dict[str, Any]]:
    """The output's results, read by PyYAML's composer (no tag is resolved), so that they can be
    read even where an item passed through unread holds YAML the function's reader refuses."""
    import yaml

    root = yaml.compose(out.decode(), Loader=yaml.CSafeLoader)
    assert isinstance(root, yaml.MappingNode), root
    for key, value in root.value:
        if key.value == "results":
            return [{k.value: v.value for k, v in result.value} for result in value.value]
    return []


def read_whole_of(data: bytes) -> Any:
    """``krm.read`` with every item composed: a TrainJob is read lazily, so ``read`` alone does not
    find out whether its text parses; when one does not, the function reads the whole document
    (``krm.NotSplittable``), and so does this."""
    from trainjob_resources.krm import resource_list as krm

    try:
        resource_list = krm.read(data)
        for item in resource_list.items:
            assert item.node is not None
        return resource_list
    except krm.NotSplittable:
        return krm.read(data, by_items=False)


def seed_corpus(directory: Path) -> None:
    """Put the golden inputs into an empty corpus directory, so the fuzzer starts from real bundles."""
    if directory.is_dir() and not any(directory.iterdir()):
        for seed in SEEDS:
            (directory / f"{seed.parent.parent.name}-{seed.parent.name}.yaml").write_bytes(seed.read_bytes())


def main() -> None:
    import atheris

    with atheris.instrument_imports(include=["trainjob_resources", "yaml"]):
        import trainjob_resources.cli.main
        import trainjob_resources.process  # noqa: F401

    for arg in sys.argv[1:]:
        if not arg.startswith("-"):
            seed_corpus(Path(arg))
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
