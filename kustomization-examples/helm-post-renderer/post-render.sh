#!/bin/sh
# A Helm post-renderer: Helm writes the chart's rendered manifests to stdin and installs what this
# prints. `render -` reads them, materializes the TrainJobs' resource overrides into derived
# runtimes, and prints only manifests; on an error it prints nothing and exits 1, so Helm stops.
# Options: a functionConfig file beside this script, if there is one.
config="$(dirname "$0")/trainjob-resources.yaml"
if [ -f "$config" ]; then
  exec trainjob-resources render --config "$config" -
fi
exec trainjob-resources render -
