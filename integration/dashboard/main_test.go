// Package dashboard tests the dashboard in Chromium against a running Caddy,
// hostile data included.
//
// Its tests are black-box: they start Caddy in process with a config, on
// ports the OS picks (internal/harness), and talk to it over HTTP.
package dashboard

import (
	"os"
	"testing"

	// The module under test, registered with Caddy.
	_ "github.com/caddy-memory/memory"
	"github.com/caddy-memory/memory/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
