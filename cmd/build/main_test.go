package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeManifest(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "xcaddy.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadResolvesLocalPluginsAgainstTheManifest(t *testing.T) {
	p := writeManifest(t, `{"caddy_version":"v2.11.9","plugins":[
		{"module":"github.com/caddy-memory/memory","replace":"."},
		{"module":"github.com/mholt/caddy-ratelimit","version":"v0.1.0"}],"output":"bin/caddy"}`)
	b, out, err := load(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(p)
	if b.CaddyVersion != "v2.11.9" || out != filepath.Join(dir, "bin/caddy") {
		t.Errorf("version %q output %q", b.CaddyVersion, out)
	}
	if len(b.Plugins) != 2 || b.Plugins[0].Version != localVersion || b.Plugins[1].Version != "v0.1.0" {
		t.Errorf("plugins %+v", b.Plugins)
	}
	if len(b.Replacements) != 1 || b.Replacements[0].New.String() != dir {
		t.Errorf("replacements %+v, want the manifest's directory", b.Replacements)
	}
}

func TestLoadRejectsIncompleteManifests(t *testing.T) {
	for body, want := range map[string]string{
		`{"plugins":[]}`: "caddy_version is required",
		`{"caddy_version":"v2.11.9","plugins":[{"version":"v1"}]}`: "no module path",
		`{"caddy_version":"v2.11.9","plugin":[]}`:                  "unknown field",
	} {
		if _, _, err := load(writeManifest(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// The repository's own manifest must build this module from the checkout.
func TestRepositoryManifest(t *testing.T) {
	b, _, err := load("../../xcaddy.json")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	if len(b.Replacements) == 0 || b.Replacements[0].New.String() != root || b.Plugins[0].PackagePath != "github.com/caddy-memory/memory" {
		t.Errorf("xcaddy.json does not build this checkout: %+v %+v", b.Plugins, b.Replacements)
	}
}
