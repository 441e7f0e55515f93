package pgtest

import (
	"flag"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// BackendEnv selects the store backend of a package whose tests run on
// both (see Both): unset, the embedded file; "postgres", PostgreSQL.
const BackendEnv = "MEMORY_TEST_BACKEND"

// OnPostgres reports whether this run of the tests is the PostgreSQL one.
func OnPostgres() bool { return os.Getenv(BackendEnv) == "postgres" }

// Both runs a package's tests on the embedded file, then runs the same
// test binary (same flags) again with BackendEnv=postgres, where tests open
// their storage through DatabaseFor. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Both(m)) }
func Both(m *testing.M) int {
	if OnPostgres() {
		return Main(m)
	}
	code := m.Run()
	if benchmarking() {
		// Benchmarks measure the file; store/postgres measures the database.
		return code
	}
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), BackendEnv+"=postgres")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	os.Stdout.WriteString("the same tests on PostgreSQL:\n")
	if err := cmd.Run(); err != nil {
		code = 1
	}
	return code
}

var databases sync.Map // storage key → database URL

// DatabaseFor returns the database of a storage (a directory or file
// path): the same one each time, so a test that reopens its storage finds
// what it left; "" on the file backend.
func DatabaseFor(t testing.TB, storage string) string {
	t.Helper()
	if !OnPostgres() {
		return ""
	}
	if url, ok := databases.Load(storage); ok {
		return url.(string)
	}
	url, _ := databases.LoadOrStore(storage, Database(t))
	return url.(string)
}

// benchmarking reports whether the binary was asked to run benchmarks.
func benchmarking() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}
