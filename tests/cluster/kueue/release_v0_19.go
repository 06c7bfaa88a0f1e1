//go:build kueue_v0_19

// Kueue v0.19.2's API, where it differs from v0.17.0's (release_v0_17.go): built with -tags kueue_v0_19 on
// ../kueue-v0.19/go.mod (tests/cluster/kueue-v0.19/build.sh). Event recorders are client-go's
// events.EventRecorder (from controller-runtime's GetEventRecorder), and core.SetupControllers takes
// core.SetupControllersOpts.
package main

import (
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/util/expectations"
)

// eventRecorder: what trainjob.NewReconciler and scheduler.New take.
func eventRecorder(mgr manager.Manager, name string) events.EventRecorder {
	return mgr.GetEventRecorder(name)
}

// setupCoreControllers: core.SetupControllers with only the preemption expectations set, as Kueue's
// trainjob suite_test.go at v0.19.2 calls it.
func setupCoreControllers(mgr manager.Manager, queues *qcache.Manager, cCache *schdcache.Cache,
	configuration *configapi.Configuration, preemptionExpectations *expectations.Store) (string, error) {
	return core.SetupControllers(mgr, queues, cCache, configuration,
		core.SetupControllersOpts{PreemptionExpectations: preemptionExpectations})
}
