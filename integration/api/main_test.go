// Package api tests memory_api through Caddy: the management routes and
// their data, failures, the OpenAPI document, import, lifecycle, preview,
// receipts and where the handlers may run.
//
// Its tests are black-box: they start Caddy in process with a config, on
// ports the OS picks (internal/harness), and talk to it over HTTP.
package api

import (
	"os"
	"testing"

	// The module under test, registered with Caddy.
	_ "github.com/caddy-memory/memory"
	"github.com/caddy-memory/memory/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
