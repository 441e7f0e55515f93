package sharedtest_test

import "syscall"

// sysProcAttr puts a Caddy process in a process group of its own (a ^C to
// the tests does not reach it half way through a test) and has the kernel
// kill it if the test binary dies without its cleanup (a panic, a timeout),
// so no Caddy outlives the tests.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
