package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestValidateChecksWhatTheCaddyfileChecks: a storage given in JSON meets
// every range and shape the global option's parser checks, when the
// configuration is validated (`caddy validate`), with an error that says
// what to write; every setting of a storage has a case but those the
// parser checks nothing of.
func TestValidateChecksWhatTheCaddyfileChecks(t *testing.T) {
	validate := func(t *testing.T, name, storage string) error {
		t.Helper()
		var cfg caddy.Config
		if err := json.Unmarshal(fmt.Appendf(nil, `{"apps": {"memory": {"storages": {%q: {%s}}}}}`, name, storage), &cfg); err != nil {
			t.Fatal(err)
		}
		return caddy.Validate(&cfg)
	}
	dir, _ := json.Marshal(t.TempDir())
	if err := validate(t, "default", fmt.Sprintf(`"path": %s, "index_shards": 1, "salience_floor": 0.3, "search_cache": -1`, dir)); err != nil {
		t.Fatalf("a valid storage: %v", err)
	}
	const llm, embed = "url u\nmodel m\n", "url u\nmodel m\n"
	const llmJSON, embedJSON = `"url": "u", "model": "m"`, `"url": "u", "model": "m"`
	covered := map[string]bool{}
	for _, c := range []struct {
		setting   string // as the parser names it: "index_shards", "llm debounce"
		caddyfile string // the storage block's lines
		json      string // the storage's JSON fields
		want      string
	}{
		{"path", "path /x\nurl postgres://db/m", `"path": "/x", "url": "postgres://db/m"`, "path and url are two kinds of storage: give one"},
		{"url", "url mysql://db/m", `"url": "mysql://db/m"`, "url must be a postgres:// or postgresql:// URL"},
		{"replica", "replica /r", `"replica": "/r"`, "it needs url"},
		{"encryption", "encryption {\nold_keys k\n}", `"encryption": {"old_keys": ["k"]}`, "the key is empty"},
		{"retention", "retention forever 1d", `"retention": {"forever": "1d"}`, `retention must be turn, episode or fact, not "forever"`},
		{"retention", "retention turn -1d", `"retention": {"turn": "-24h"}`, "retention turn must be a positive duration"},
		{"consolidate_every", "consolidate_every -1h", `"consolidate_every": "-1h"`, "consolidate_every must be a positive duration"},
		{"salience_floor", "salience_floor 2", `"salience_floor": 2`, "salience_floor must be a number from 0 to 1, not 2"},
		{"index_shards", "index_shards -1", `"index_shards": -1`, "index_shards must be a positive whole number, not -1"},
		{"search_cache", "search_cache -2", `"search_cache": -2`, "search_cache must be a size in bytes, or -1 for none"},
		{"queue_size", "queue_size -1", `"queue_size": -1`, "queue_size must be a positive whole number"},
		{"drain_timeout", "drain_timeout -1s", `"drain_timeout": "-1s"`, "drain_timeout must be a positive duration"},
		{"llm url", "llm {\nmodel m\n}", `"llm": {"model": "m"}`, "llm needs url and model"},
		{"llm model", "llm {\nurl u\n}", `"llm": {"url": "u"}`, "llm needs url and model"},
		{"llm debounce", "llm {\n" + llm + "debounce -1s\n}", `"llm": {` + llmJSON + `, "debounce": "-1s"}`, "llm debounce must be a positive duration"},
		{"llm timeout", "llm {\n" + llm + "timeout -1s\n}", `"llm": {` + llmJSON + `, "timeout": "-1s"}`, "llm timeout must be a positive duration"},
		{"llm calls_per_minute", "llm {\n" + llm + "calls_per_minute -1\n}", `"llm": {` + llmJSON + `, "calls_per_minute": -1}`, "llm calls_per_minute must be a positive whole number"},
		{"embed url", "embed {\nmodel m\n}", `"embed": {"model": "m"}`, "embed needs url and model"},
		{"embed model", "embed {\nurl u\n}", `"embed": {"url": "u"}`, "embed needs url and model"},
		{"embed dimensions", "embed {\n" + embed + "dimensions -1\n}", `"embed": {` + embedJSON + `, "dimensions": -1}`, "embed dimensions must be a positive whole number"},
		{"embed timeout", "embed {\n" + embed + "timeout -1s\n}", `"embed": {` + embedJSON + `, "timeout": "-1s"}`, "embed timeout must be a positive duration"},
		{"embed min_similarity", "embed {\n" + embed + "min_similarity 1.5\n}", `"embed": {` + embedJSON + `, "min_similarity": 1.5}`, "embed min_similarity must be a number from 0 to 1"},
		{"embed batch_size", "embed {\n" + embed + "batch_size -1\n}", `"embed": {` + embedJSON + `, "batch_size": -1}`, "embed batch_size must be a positive whole number"},
	} {
		covered[c.setting] = true
		t.Run(c.setting, func(t *testing.T) {
			option := "memory {\nstorage default {\n" + c.caddyfile + "\n}\n}"
			if _, err := parseGlobal(caddyfile.NewTestDispenser(option), nil); err == nil {
				t.Errorf("the Caddyfile parser took %q", c.caddyfile)
			}
			err := validate(t, "default", c.json)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("JSON %s: error %v, want one saying %q", c.json, err, c.want)
			}
		})
	}
	// A storage's name is the JSON's key.
	if err := validate(t, "a/b", `"path": "/x"`); err == nil || !strings.Contains(err.Error(), "use letters, digits, '-' or '_'") {
		t.Errorf("a storage named a/b: %v", err)
	}

	unchecked := []string{"llm api_key", "embed api_key"} // any text
	settings := slices.Clone(StorageSettings)
	for _, s := range llmSettings {
		settings = append(settings, "llm "+s)
	}
	for _, s := range embedSettings {
		settings = append(settings, "embed "+s)
	}
	for _, s := range settings {
		if !covered[s] && !slices.Contains(unchecked, s) && s != "llm" && s != "embed" {
			t.Errorf("storage setting %s has no case: add what the parser refuses, and check that Validate refuses it in JSON", s)
		}
	}
}
