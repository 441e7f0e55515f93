package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/cmdrun"
)

// TestImportStoresLinesForTheOwnerNamed: lines without an owner id (a file
// written by hand or by another tool) are refused with a message that
// names the flags that fix it, and --owner / --owner-id store them all for
// one owner, as owner= and owner_id= do on POST /import.
func TestImportStoresLinesForTheOwnerNamed(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "lines.jsonl")
	lines := `{"owner":"sk-alice","kind":"fact","key":"home","content":"User lives in Porto."}
{"kind":"preference","key":"drink","content":"User prefers green tea."}
`
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := cmdrun.Memory("import", "--path", dir, "--input", file)
	if err == nil || !strings.Contains(out, "failed 2") || !strings.Contains(out, "--owner") {
		t.Fatalf("lines without an owner id: err %v, printed:\n%s", err, out)
	}
	if _, err := cmdrun.Memory("import", "--path", dir, "--input", file, "--owner", "sk-a", "--owner-id", "0123456789abcdef0123456789abcdef"); err == nil {
		t.Fatal("--owner and --owner-id together were accepted")
	}
	if _, err := cmdrun.Memory("import", "--path", dir, "--input", file, "--owner-id", "not-an-id"); err == nil {
		t.Fatal("an --owner-id that is no owner id was accepted")
	}

	out, err = cmdrun.Memory("import", "--path", dir, "--input", file, "--owner", "sk-alice")
	if err != nil || !strings.Contains(out, "imported 2") {
		t.Fatalf("--owner sk-alice: err %v, printed:\n%s", err, out)
	}
	out, err = cmdrun.Memory("export", "--path", dir)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			Owner string `json:"owner"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		owners[m.Owner] = true
	}
	if len(owners) != 1 {
		t.Fatalf("the two lines went to %d owners, want one: %v", len(owners), owners)
	}

	// The same lines for the same owner by id: the import is idempotent.
	var id string
	for o := range owners {
		id = o
	}
	out, err = cmdrun.Memory("import", "--path", dir, "--input", file, "--owner-id", id)
	if err != nil || !strings.Contains(out, "imported 0") {
		t.Fatalf("--owner-id %s again: err %v, printed:\n%s", id, err, out)
	}
}
