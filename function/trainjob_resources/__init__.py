"""trainjob-resources: per-TrainJob container resources for Kubeflow Trainer runtimePatches."""

__version__ = "0.1.0"
