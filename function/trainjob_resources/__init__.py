"""trainjob-resources: per-TrainJob container resources for Kubeflow Trainer runtimePatches.

The package is in layers, each importing only from the ones before it (tests/test_layers.py):
``values`` -> ``yamltext`` -> ``krm`` -> ``kube`` -> ``trainer``, then the pipeline's folders
``options`` -> ``derive`` -> ``resolve`` -> ``report`` -> ``rules`` -> ``pipeline`` (each stage run),
then ``process`` (the list of stages) -> ``repo`` -> ``live`` (``check``'s reads of a live cluster and
its findings) -> ``cli``.
Its public interface is the command line (``trainjob-resources``, ``python -m trainjob_resources``);
no module of it is a public API.
"""

# The one place the version is written: pyproject.toml (setuptools' dynamic attr) and .ci/image.sh read it,
# tests/test_version.py checks every copy in the docs and examples against it.
__version__ = "0.1.0"
