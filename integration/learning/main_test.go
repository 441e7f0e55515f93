// Package learning tests what memory learns from conversations through
// Caddy: the profile, whose words a fact is, feedback never learned again,
// distillation by a model, embedding recall.
//
// Its tests are black-box: they start Caddy in process with a config, on
// ports the OS picks (internal/harness), and talk to it over HTTP.
package learning

import (
	"os"
	"testing"

	// The module under test, registered with Caddy.
	_ "github.com/caddy-memory/memory"
	"github.com/caddy-memory/memory/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
