//go:build unix && !linux

package sharedtest_test

import "syscall"

// sysProcAttr puts a Caddy process in a process group of its own, so a ^C
// to the tests does not reach it half way through a test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
