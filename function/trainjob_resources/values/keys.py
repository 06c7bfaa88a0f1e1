"""Names the package reads and writes in Kubernetes objects, each spelled once: annotation and
label keys, their prefixes, and the pod spec's container lists."""

from __future__ import annotations

from typing import Final

# A pod spec's container lists, in the order a pod starts them (k8s.io/api/core/v1/types.go PodSpec).
CONTAINER_LISTS: Final = ("initContainers", "containers")

# kustomize's mark of an object it reads but never emits (api/konfig/builtinpluginconsts, kyaml
# kioutil): the function reads a runtime so marked as a reference copy.
LOCAL_CONFIG: Final = "config.kubernetes.io/local-config"
