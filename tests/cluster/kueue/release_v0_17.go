//go:build !kueue_v0_19

// Kueue v0.17.0's API, where it differs from the other releases' (release_v0_*.go, one a release, chosen by
// build tag: none for this one, go.mod's release; tests/cluster/build.sh builds it).
package main

import (
	"k8s.io/client-go/tools/record"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/core"
)

// recorder: what trainjob.NewReconciler and scheduler.New take, client-go's record.EventRecorder.
func (s kueueSetup) recorder(name string) record.EventRecorder {
	return s.mgr.GetEventRecorderFor(name)
}

// coreControllers: core.SetupControllers with no role tracker and no custom metric labels (positional
// parameters), as Kueue's trainjob suite_test.go calls it.
func (s kueueSetup) coreControllers(configuration *configapi.Configuration) (string, error) {
	return core.SetupControllers(s.mgr, s.queues, s.cache, configuration, nil, s.expectations, nil)
}
