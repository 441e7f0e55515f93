package memory

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddytest"
)

// updateAdapt rewrites the golden files' JSON: go test -run
// TestCaddyfileAdaptToJSON . -update (then read the diff before
// committing it).
var updateAdapt = flag.Bool("update", false, "rewrite the JSON of testdata/caddyfile_adapt/*.caddyfiletest with what each Caddyfile adapts to")

// TestCaddyfileAdaptToJSON adapts each testdata/caddyfile_adapt file's
// Caddyfile, as Caddy's own integration tests do: the part before the
// "----------" line is the Caddyfile, the part after it the JSON it must
// adapt to, or the text of the error it must fail with (written by hand:
// -update leaves those files as they are).
func TestCaddyfileAdaptToJSON(t *testing.T) {
	files, err := filepath.Glob("testdata/caddyfile_adapt/*.caddyfiletest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			caddyfile, expected, ok := strings.Cut(string(data), "----------")
			if !ok {
				t.Fatal("no ---------- line")
			}
			caddyfile, expected = strings.TrimSpace(caddyfile)+"\n", strings.TrimSpace(expected)
			if !strings.HasPrefix(expected, "{") {
				_, _, err = caddyconfig.GetAdapter("caddyfile").Adapt([]byte(caddyfile), nil)
				if err == nil || !strings.Contains(err.Error(), expected) {
					t.Errorf("adapting %s: error %v, want one containing %q", file, err, expected)
				}
				return
			}
			if *updateAdapt {
				adapted, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(caddyfile), nil)
				if err != nil {
					t.Fatalf("adapting %s: %v", file, err)
				}
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, adapted, "", "\t"); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(caddyfile+"----------\n"+pretty.String()+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				expected = pretty.String()
			}
			if !caddytest.CompareAdapt(t, file, caddyfile, "caddyfile", expected) {
				t.Errorf("%s does not adapt to its JSON (the diff is above; -update rewrites it)", file)
			}
		})
	}
}
