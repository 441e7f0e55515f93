// Package proxy tests memory in front of reverse_proxy as a client meets it:
// each wire format (OpenAI chat and Responses, Anthropic, Ollama) and the
// official SDKs, placement of the block, sessions, owners and the local
// user, compressed and streamed bodies, hostile requests.
//
// Its tests are black-box: they start Caddy in process with a config, on
// ports the OS picks (internal/harness), and talk to it over HTTP.
package proxy

import (
	"os"
	"testing"

	// The module under test, registered with Caddy.
	_ "github.com/caddy-memory/memory"
	"github.com/caddy-memory/memory/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
