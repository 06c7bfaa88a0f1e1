#!/bin/sh
# Run by Helm 4 (runtime: subprocess) with the chart's manifests on stdin; prints what Helm installs.
# `render -` materializes the TrainJobs' resource overrides into derived runtimes and prints only
# manifests; on an error it prints nothing and exits 1, so Helm stops.
#
# Helm v4.3.2 collects a subprocess post-renderer's stderr and never prints it (runPostrenderer in
# internal/plugin/runtime_subprocess.go), so render's messages go to Helm's own stderr, which Linux
# names /proc/<helm's pid>/fd/2. Where that cannot be opened, Helm shows only
# `plugin "trainjob-resources" exited with error`.
helm_stderr="/proc/$PPID/fd/2"
if (: 2>>"$helm_stderr") 2>/dev/null; then
  exec 2>>"$helm_stderr"
fi
exec trainjob-resources render - "$@"
