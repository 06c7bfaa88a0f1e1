"""The test kit: what every test module builds its inputs and checks its goldens with.

- ``build``: TrainJobs, runtimes, their patches and bundles, as plain objects (after upstream Trainer's
  ``pkg/util/testing/wrapper.go``: one builder per kind, defaults a test overrides by keyword);
- ``golden``: one golden checker and its one update switch (``--update-goldens``, ``make goldens``);
- ``cpu_budget``: the pytest plugin that names a test over the suite's CPU budget (CONTRIBUTING);
- ``forked``: the command line run in a fork of the test process, for ``make unit``'s hostile renders.
- ``workers``: the pytest plugin that schedules `make test`'s files on pytest-xdist's workers.
"""
