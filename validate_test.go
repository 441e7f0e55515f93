package memory

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// validateJSON validates a configuration given in JSON as `caddy validate`
// does (every module provisioned and validated, nothing started): one
// route of handler, then a static response, with the memory app's default
// storage in a directory of the test's.
func validateJSON(t *testing.T, handler string) error {
	t.Helper()
	storage, _ := json.Marshal(t.TempDir())
	var cfg caddy.Config
	err := json.Unmarshal(fmt.Appendf(nil, `{"apps": {
		"memory": {"storages": {"default": {"path": %s, "index_shards": 1}}},
		"http": {"servers": {"s": {"listen": ["localhost:0"], "routes": [{"handle": [%s, {"handler": "static_response"}]}]}}}
	}}`, storage, handler), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	return caddy.Validate(&cfg)
}

// rangeCase is a value the Caddyfile parser refuses for a setting, and a
// JSON value Validate must refuse for it, with (part of) what its error
// says to write.
type rangeCase struct {
	setting, caddyfile, json, want string
}

// checkRanges: each case's value is refused by the directive's Caddyfile
// parser, and its JSON value by `caddy validate`, saying what to write;
// every setting of the directive has a case but those the parser checks
// no range of (unchecked).
func checkRanges(t *testing.T, directive string, settings, unchecked []string, cases []rangeCase, unmarshal func(*caddyfile.Dispenser) error) {
	t.Helper()
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.setting] = true
		t.Run(c.setting+"="+c.json, func(t *testing.T) {
			if err := unmarshal(caddyfile.NewTestDispenser(directive + " {\n" + c.setting + " " + c.caddyfile + "\n}")); err == nil {
				t.Errorf("the Caddyfile parser took %s %s", c.setting, c.caddyfile)
			}
			err := validateJSON(t, fmt.Sprintf(`{"handler": %q, %q: %s}`, directive, c.setting, c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("JSON %q: %s: error %v, want one saying %q", c.setting, c.json, err, c.want)
			}
		})
	}
	for _, s := range settings {
		if !covered[s] && !slices.Contains(unchecked, s) {
			t.Errorf("%s %s has no case: add what its parser refuses, and check that Validate refuses it in JSON", directive, s)
		}
	}
}

// TestValidateChecksWhatTheCaddyfileChecks: a configuration given in JSON
// meets every range the Caddyfile parser checks, in Validate (or
// Provision), with an error that says what to write.
func TestValidateChecksWhatTheCaddyfileChecks(t *testing.T) {
	if err := validateJSON(t, `{"handler": "memory", "min_score": 0.5, "max_tokens": 600, "scope": "session"}`); err != nil {
		t.Fatalf("a valid handler: %v", err)
	}
	checkRanges(t, "memory", memorySubdirectives,
		// Templates and names (any text), flags, and fail (a bool in JSON).
		[]string{"owner", "session", "no_system_role", "diagnostics", "fail", "placement"},
		[]rangeCase{
			{"storage", "/var/lib/memory", `"/var/lib/memory"`, "storages are configured in the global options now"},
			{"scope", "world", `"world"`, `scope must be owner or session, not "world"`},
			{"format", "klingon", `"klingon"`, `unknown format "klingon": use`},
			{"max_tokens", "-1", "-1", "max_tokens must be a positive whole number, not -1"},
			{"max_items", "-3", "-3", "max_items must be a positive whole number, not -3"},
			{"min_score", "1.5", "1.5", "min_score must be a number from 0 to 1, not 1.5"},
			{"min_score", "-0.1", "-0.1", "min_score must be a number from 0 to 1, not -0.1"},
			{"max_body", "-1", "-1", "max_body must be a size in bytes"},
			{"max_capture", "-1", "-1", "max_capture must be a size in bytes"},
			{"timeout", "-1s", "-1000000000", `timeout must be a positive duration such as "500ms"`},
			{"gate", "maybe", `"maybe"`, `gate must be heuristic or off, not "maybe"`},
			{"profile", "maybe", `"maybe"`, `profile must be on or off, not "maybe"`},
			{"profile_tokens", "-1", "-1", "profile_tokens must be a positive whole number"},
			{"tools", "search_memory", `["search_memory"]`, `"search_memory" is not a memory tool: use save_memory, recall_memory`},
			{"max_tool_rounds", "-1", "-1", "max_tool_rounds must be a positive whole number"},
			{"overflow", "always", `"always"`, `overflow must be trim or off, not "always"`},
			{"overflow_ollama_ctx", "-1", "-1", "overflow_ollama_ctx must be a positive whole number"},
		},
		func(d *caddyfile.Dispenser) error { return new(Handler).UnmarshalCaddyfile(d) })

	// placement is checked when the handler is provisioned, in both.
	if err := validateJSON(t, `{"handler": "memory", "placement": "sideways"}`); err == nil || !strings.Contains(err.Error(), "use cache_safe, system or user") {
		t.Errorf("JSON placement sideways: %v", err)
	}

	checkRanges(t, "memory_api", apiSubdirectives,
		[]string{"owner", "insecure_no_auth"},
		[]rangeCase{
			{"storage", "./data", `"./data"`, "storages are configured in the global options now"},
			{"mode", "root", `"root"`, `mode must be self or admin, not "root"`},
			{"max_body", "-1", "-1", "max_body must be a size in bytes"},
			{"max_import", "-1", "-1", "max_import must be a size in bytes"},
		},
		func(d *caddyfile.Dispenser) error { return new(APIHandler).UnmarshalCaddyfile(d) })
}
