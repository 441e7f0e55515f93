// Command build produces a caddy binary from the build manifest xcaddy.json:
// the Caddy version and the plugins to compile in, this module among them.
// It drives the xcaddy library, so the build is the same on every machine
// without installing xcaddy:
//
//	go run ./cmd/build                 # reads ./xcaddy.json, writes ./caddy
//	go run ./cmd/build -manifest other.json -o /usr/local/bin/caddy
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/caddyserver/xcaddy"
)

// Manifest is the schema of xcaddy.json.
type Manifest struct {
	// CaddyVersion pins Caddy, e.g. "v2.11.9". Required: without it xcaddy
	// asks the module proxy for "latest".
	CaddyVersion string   `json:"caddy_version"`
	Plugins      []Plugin `json:"plugins"`
	// Output is the binary's path, relative to the manifest. Default "caddy".
	Output string `json:"output,omitempty"`
	// RaceDetector builds with -race.
	RaceDetector bool `json:"race_detector,omitempty"`
	// BuildFlags are extra flags for go build, e.g. "-trimpath".
	BuildFlags string `json:"build_flags,omitempty"`
}

// Plugin is one module to compile in.
type Plugin struct {
	Module  string `json:"module"`
	Version string `json:"version,omitempty"`
	// Replace builds the module from a local directory (relative to the
	// manifest) instead of a published version.
	Replace string `json:"replace,omitempty"`
}

// localVersion is the zero pseudo-version, for modules built from a directory.
const localVersion = "v0.0.0-00010101000000-000000000000"

func main() {
	manifest := flag.String("manifest", "xcaddy.json", "build manifest")
	output := flag.String("o", "", "output binary (overrides the manifest's output)")
	flag.Parse()
	log.SetFlags(0)

	b, out, err := load(*manifest)
	if err != nil {
		log.Fatalf("build: %v", err)
	}
	if *output != "" {
		out = *output
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := b.Build(ctx, out); err != nil {
		log.Fatalf("build: %v", err)
	}
	fmt.Println("built", out)
}

// load reads a manifest into an xcaddy Builder and the output path.
func load(path string) (xcaddy.Builder, string, error) {
	var b xcaddy.Builder
	raw, err := os.ReadFile(path)
	if err != nil {
		return b, "", err
	}
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return b, "", fmt.Errorf("%s: %w", path, err)
	}
	if m.CaddyVersion == "" {
		return b, "", fmt.Errorf("%s: caddy_version is required (for example \"v2.11.9\")", path)
	}
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return b, "", err
	}
	b.CaddyVersion = m.CaddyVersion
	b.RaceDetector = m.RaceDetector
	b.BuildFlags = m.BuildFlags
	for _, p := range m.Plugins {
		if p.Module == "" {
			return b, "", fmt.Errorf("%s: a plugin has no module path", path)
		}
		version := p.Version
		if p.Replace != "" && version == "" {
			// xcaddy still runs "go get" on a replaced module; without a
			// version that asks the proxy for "latest", which a module that
			// is only local does not have. Any version resolves through the
			// replace.
			version = localVersion
		}
		b.Plugins = append(b.Plugins, xcaddy.Dependency{PackagePath: p.Module, Version: version})
		if p.Replace != "" {
			dir := p.Replace
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(base, dir)
			}
			b.Replacements = append(b.Replacements, xcaddy.NewReplace(p.Module, dir))
		}
	}
	out := m.Output
	if out == "" {
		out = "caddy"
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(base, out)
	}
	return b, out, nil
}
