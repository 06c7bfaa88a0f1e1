# The trainjob-resources KRM function. Build from the repository root:
#   docker build -t ghcr.io/trainjob-resources/trainjob-resources:0.1.0 .
# CI builds it with podman on a stand-in for the base (.ci/image.sh: --build-arg PYTHON_IMAGE) and
# runs the image (tests/test_image.py). tests/test_image_recipe.py also runs this file's build-stage
# RUN steps without an engine and the result as user 65534, so keep every install step in a RUN of
# the build stage.
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
COPY pyproject.toml README.md ./
COPY function ./function
COPY requirements-image.txt ./
RUN pip wheel --no-deps --wheel-dir /wheels .
RUN python -m venv /opt/trainjob-resources \
    && /opt/trainjob-resources/bin/pip install --no-deps --only-binary=:all: -r requirements-image.txt /wheels/trainjob_resources-*.whl \
    && /opt/trainjob-resources/bin/pip check \
    && /opt/trainjob-resources/bin/pip uninstall --yes pip setuptools

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="trainjob-resources" \
      org.opencontainers.image.description="KRM function: per-TrainJob container resources for Kubeflow Trainer runtimePatches" \
      org.opencontainers.image.source="https://github.com/trainjob-resources/trainjob-resources" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /opt/trainjob-resources /opt/trainjob-resources
ENV PATH=/opt/trainjob-resources/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65534:65534
ENTRYPOINT ["/opt/trainjob-resources/bin/trainjob-resources"]
