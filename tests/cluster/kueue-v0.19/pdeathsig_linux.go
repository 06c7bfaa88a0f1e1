package main

import "golang.org/x/sys/unix"

// setParentDeathSignal asks the kernel for SIGTERM when the process that started us exits, so a
// killed parent (a test runner) does not leave a control plane behind.
func setParentDeathSignal() {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0)
}
