//go:build kueue_v0_19

// Kueue v0.19.2's API, where it differs from v0.17.0's (release_v0_17.go): built with -tags kueue_v0_19 on
// ../kueue-v0.19/go.mod (tests/cluster/kueue-v0.19/build.sh).
package main

import (
	"k8s.io/client-go/tools/events"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/core"
)

// recorder: what trainjob.NewReconciler and scheduler.New take, client-go's events.EventRecorder
// (controller-runtime's GetEventRecorder).
func (s kueueSetup) recorder(name string) events.EventRecorder { return s.mgr.GetEventRecorder(name) }

// coreControllers: core.SetupControllers with only the preemption expectations (core.SetupControllersOpts),
// as Kueue's trainjob suite_test.go at v0.19.2 calls it.
func (s kueueSetup) coreControllers(configuration *configapi.Configuration) (string, error) {
	opts := core.SetupControllersOpts{PreemptionExpectations: s.expectations}
	return core.SetupControllers(s.mgr, s.queues, s.cache, configuration, opts)
}
