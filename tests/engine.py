"""The real container engine and image for the image tests (tests/test_image.py, the kustomize
examples): podman or docker, and the image the Dockerfile builds from this checkout.

- ``TRAINJOB_RESOURCES_IMAGE`` names an image already built (CI: ``.ci/image.sh`` builds it on a
  debootstrapped stand-in for python:3.11-slim and exports its ID);
- unset, the engine builds the Dockerfile here (``TRAINJOB_RESOURCES_BASE_IMAGE``, when set, is
  passed as ``--build-arg PYTHON_IMAGE``; else the Dockerfile's own base, from a registry).

Either way the image must hold this checkout's function: one built from other sources is
reported, not tested.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.examples import IMAGE, ROOT

IMAGE_VARIABLE = "TRAINJOB_RESOURCES_IMAGE"
BASE_VARIABLE = "TRAINJOB_RESOURCES_BASE_IMAGE"
TEST_REPOSITORY = "localhost/trainjob-resources-test"

# A digest of the function's installed sources: run by this checkout's interpreter and the image's.
_DIGEST = """
import hashlib, pathlib, trainjob_resources
root = pathlib.Path(trainjob_resources.__file__).parent
digest = hashlib.sha256()
for path in sorted(p for p in root.rglob("*") if p.suffix == ".py" or p.name == "py.typed"):
    digest.update(path.relative_to(root).as_posix().encode() + b"\\0" + path.read_bytes() + b"\\0")
print(digest.hexdigest())
"""


@dataclass(frozen=True)
class Engine:
    cli: str
    image: str
    # For kustomize (a `docker` that reaches this engine first on PATH) and kpt (KPT_FN_RUNTIME).
    env: dict[str, str]

    def localized(self, text: str) -> str:
        """``text`` (an example's file) naming this image where it names the published one."""
        return text.replace(IMAGE, self.image)

    def published(self, text: str) -> str:
        """``text`` (a tool's output) naming the published image where it names this one."""
        return text.replace(self.image, IMAGE)

    def run(
        self, options: list[str], stdin: bytes = b"", args: list[str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """``<engine> run --rm -i OPTIONS IMAGE ARGS`` with ``stdin``."""
        command = [self.cli, "run", "--rm", "-i", *options, self.image, *(args or [])]
        return subprocess.run(command, input=stdin, capture_output=True, timeout=300, check=False)


def _run(command: list[str], timeout: float) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _answers(command: list[str], timeout: float = 60) -> bool:
    done = _run(command, timeout)
    return done is not None and done.returncode == 0


def find_engine(work: Path) -> Engine | str:
    """The engine and this checkout's image, or why there is none.

    The image is tagged ``TEST_REPOSITORY:<digest of the function's sources>`` and used by that
    name: a tag such as ``IMAGE`` can move while the tests run (another build on the machine), that
    one cannot. The examples name ``IMAGE``; the tests put this name in their copies."""
    found = [p for p in (shutil.which(n) for n in ("podman", "docker")) if p and _answers([p, "info"])]
    if not found:
        return (
            "no container engine: neither podman nor docker on PATH answers `info`; these tests run the image "
            "the Dockerfile builds (.ci/image.sh sets up podman on Debian)"
        )
    cli = found[0]
    given = os.environ.get(IMAGE_VARIABLE)
    if given:
        inspected = _run([cli, "image", "inspect", "--format", "{{.Id}}", given], 60)
        if inspected is None or inspected.returncode != 0:
            return f"{IMAGE_VARIABLE}={given}: {cli} has no such image (bash .ci/image.sh builds it)"
        image_id = inspected.stdout.strip()
    else:
        iid = work / "image-id"
        build = [cli, "build", "--iidfile", str(iid)]
        if os.environ.get(BASE_VARIABLE):
            build += ["--build-arg", f"PYTHON_IMAGE={os.environ[BASE_VARIABLE]}"]
        done = _run([*build, str(ROOT)], timeout=900)
        if done is None or done.returncode != 0:
            tail = "" if done is None else done.stderr.strip()[-400:]
            return f"`{' '.join(build)} .` failed (set {IMAGE_VARIABLE} to a built image, or run .ci/image.sh): {tail}"
        image_id = iid.read_text().strip()
    here = subprocess.run([sys.executable, "-c", _DIGEST], capture_output=True, text=True, check=True).stdout
    image = f"{TEST_REPOSITORY}:{here.strip()[:16]}"
    if not _answers([cli, "tag", image_id, image]):
        return f"{cli} could not tag {image_id} as {image}"
    inside = _run([cli, "run", "--rm", "--network", "none", "--entrypoint", "python", image, "-c", _DIGEST], 120)
    if inside is None or inside.returncode != 0:
        return f"{given or image} does not run: {'' if inside is None else inside.stderr.strip()[-400:]}"
    if inside.stdout != here:
        return f"{given or image} holds another version of function/trainjob_resources than this checkout: rebuild it"
    env = dict(os.environ)
    if Path(cli).name == "podman":
        bin_dir = work / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        shim = bin_dir / "docker"
        shim.write_text(f'#!/bin/sh\nexec "{cli}" "$@"\n')
        shim.chmod(0o755)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["KPT_FN_RUNTIME"] = "podman"
    return Engine(cli, image, env)
