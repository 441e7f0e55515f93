package memory

import "github.com/caddy-memory/memory/app"

// Request outcomes, the values of the "outcome" label.
const (
	outcomeInjected     = "injected"         // memories were placed in the request
	outcomeNothing      = "nothing_relevant" // searched; nothing cleared the floor
	outcomePassed       = "passed_through"   // not rewritten: no owner, not a chat body, too large, compressed
	outcomeFailedOpen   = "failed_open"      // memory failed; the request went on without it
	outcomeFailedClosed = "failed_closed"    // memory failed; fail_closed answered 503
	outcomeOptedOut     = "opted_out"        // the client asked for no memory (X-Memory: off)
)

// outcome counts a chat request by its outcome. The collectors are the
// memory app's, which registers every metric of the module.
func outcome(o string) { app.RequestsTotal.WithLabelValues(o).Inc() }
