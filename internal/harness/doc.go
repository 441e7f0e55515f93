// Package harness is what the integration tests (integration/...) and the
// root's few tests that run Caddy share: an in-process Caddy on ports the
// OS picks (caddytest), configs built on one set of global options, fake
// upstreams that speak every wire format the handler knows, clients of the
// management API, and waits for learning to finish.
//
// It does not import the module's root package: each test package imports
// that, which registers the memory handler with Caddy.
package harness
