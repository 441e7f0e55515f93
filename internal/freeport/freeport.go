// Package freeport picks TCP ports for the Caddy a test starts, so that
// test binaries run in parallel, and beside a Caddy someone runs on
// Caddyfile.example's port.
package freeport

import "net"

// Loopback returns n distinct TCP ports of the loopback interface that the
// OS picked for listeners on port 0, held open together (so that the n
// differ) and closed before it returns, for Caddy to bind. Another process
// can take one in between, as with any port picked this way; out of the
// tens of thousands of the ephemeral range, that seldom happens.
func Loopback(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
