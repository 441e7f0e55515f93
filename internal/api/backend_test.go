package api_test

import (
	"os"
	"testing"

	"github.com/caddy-memory/memory/internal/pgtest"
)

// Every API test runs on a storage directory, then on PostgreSQL
// (pgtest.Both): export, import, forget, ingest and consolidation included.
func TestMain(m *testing.M) { os.Exit(pgtest.Both(m)) }
