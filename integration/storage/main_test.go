// Package storage tests the storage under a running Caddy: damaged stores
// and files, encryption, refused configurations and reloads.
//
// Its tests are black-box: they start Caddy in process with a config, on
// ports the OS picks (internal/harness), and talk to it over HTTP.
package storage

import (
	"os"
	"testing"

	// The module under test, registered with Caddy.
	_ "github.com/caddy-memory/memory"
	"github.com/caddy-memory/memory/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
