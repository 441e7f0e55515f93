package freeport

import (
	"net"
	"strconv"
	"testing"
)

// The ports differ and are free to bind once Loopback returns.
func TestLoopbackPortsDifferAndAreFree(t *testing.T) {
	ports, err := Loopback(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: want three distinct ports", ports)
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		l.Close()
	}
}
