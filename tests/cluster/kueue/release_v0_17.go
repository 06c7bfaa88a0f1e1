//go:build !kueue_v0_19

// Kueue v0.17.0's API, where it differs from the other releases' (release_v0_*.go, one a release, chosen by
// build tag: none for this one, go.mod's release; tests/cluster/build.sh builds it): event recorders are
// client-go's record.EventRecorder, and core.SetupControllers takes its options as positional parameters.
package main

import (
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/util/expectations"
)

// eventRecorder: what trainjob.NewReconciler and scheduler.New take.
func eventRecorder(mgr manager.Manager, name string) record.EventRecorder {
	return mgr.GetEventRecorderFor(name)
}

// setupCoreControllers: core.SetupControllers with no role tracker and no custom metric labels, as Kueue's
// trainjob suite_test.go calls it.
func setupCoreControllers(mgr manager.Manager, queues *qcache.Manager, cCache *schdcache.Cache,
	configuration *configapi.Configuration, preemptionExpectations *expectations.Store) (string, error) {
	return core.SetupControllers(mgr, queues, cCache, configuration, nil, preemptionExpectations, nil)
}
