package memory

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

func TestCaddyfileEverySubdirective(t *testing.T) {
	d := caddyfile.NewTestDispenser(`memory {
		storage main
		owner {http.request.header.X-User} {http.request.remote.host}
		session {http.request.header.X-Session}
		scope session
		placement user
		no_system_role o1-mini my-strict-model
		format anthropic
		max_tokens 600
		max_items 5
		min_score 0.5
		max_body 1MiB
		max_capture 512KiB
		timeout 250ms
		fail closed
		gate off
		profile off
		profile_tokens 120
		tools recall_memory
		max_tool_rounds 2
		overflow trim
		overflow_ollama_ctx 4096
	}`)
	var h Handler
	if err := h.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(h)
	want := `{"storage":"main","owner":["{http.request.header.X-User}","{http.request.remote.host}"],` +
		`"session":"{http.request.header.X-Session}","scope":"session","placement":"user",` +
		`"no_system_role":["o1-mini","my-strict-model"],"format":"anthropic",` +
		`"max_tokens":600,"max_items":5,"min_score":0.5,"max_body":1048576,"max_capture":524288,` +
		`"timeout":250000000,"fail_closed":true,"gate":"off","profile":"off","profile_tokens":120,` +
		`"tools":["recall_memory"],"max_tool_rounds":2,"overflow":"trim","overflow_ollama_ctx":4096}`
	if string(got) != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
}

func TestCaddyfileBareDirective(t *testing.T) {
	var h Handler
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`memory`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(h); string(got) != `{}` {
		t.Errorf("a bare directive should leave every default: %s", got)
	}
}

func TestCaddyfileErrorsSayWhatIsWrong(t *testing.T) {
	for in, want := range map[string]string{
		"memory {\n bogus 1\n}":                         "unrecognized memory subdirective 'bogus'",
		"memory {\n scope world\n}":                     "scope must be owner or session",
		"memory {\n fail maybe\n}":                      "fail must be open or closed",
		"memory {\n max_tokens lots\n}":                 `"lots" is not a positive whole number`,
		"memory {\n max_items 0\n}":                     `"0" is not a positive whole number`,
		"memory {\n max_body huge\n}":                   "is not a size",
		"memory {\n timeout soon\n}":                    "is not a duration",
		"memory {\n min_score -1\n}":                    "is not a number from 0 to 1",
		"memory {\n storage\n}":                         "wrong argument count",
		"memory {\n storage a b\n}":                     "storage takes one argument",
		"memory {\n storage /var/lib/memory\n}":         "storage names a storage of the memory app now",
		"memory {\n storage postgres://db/memory\n}":    "{ memory { storage default { path postgres://db/memory } } } (url for a PostgreSQL database)",
		"memory extra":                                  "wrong argument count",
		"memory {\n max_tokens 500\n max_tokens 600\n}": "max_tokens already specified",
		"memory {\n owner {a}\n owner {b}\n}":           "owner already specified",
		"memory {\n gate maybe\n}":                      "gate must be heuristic or off",
		"memory {\n identity on\n}":                     "identity is part of the profile now",
		"memory {\n profile maybe\n}":                   "profile must be on or off",
		"memory {\n profile_tokens -1\n}":               "profile_tokens",
		"memory {\n overflow always\n}":                 "overflow must be trim or off",
		"memory {\n tools search_memory\n}":             `"search_memory" is not a memory tool`,
		"memory {\n tools\n tools\n}":                   "tools already specified",
		"memory {\n max_tool_rounds 0\n}":               `"0" is not a positive whole number`,
		"memory {\n llm {\n url u\n model m\n}\n}":      "llm is a setting of the storage, not of a route: move it to the storage in the global options",
		"memory {\n encryption {\n key k\n}\n}":         "encryption is a setting of the storage",
		"memory {\n index_shards 4\n}":                  "{ memory { storage default { index_shards ... } } }",
		"memory {\n path /var/lib/memory\n}":            "memory: path is a setting of the storage, not of a route: move it to the storage in the global options, { memory { storage default { path ... } } }",
		"memory {\n url postgres://db/m\n}":             "memory: url is a setting of the storage, not of a route",
		"memory {\n replica /var/lib/r\n}":              "memory: replica is a setting of the storage, not of a route",
		"memory {\n storage default {\n path /x\n }\n}": "a storage's settings go in the global options, { memory { storage default { ... } } }",
		"memory {\n max_token 500\n}":                   "unrecognized memory subdirective 'max_token'; did you mean max_tokens?",
		"memory {\n placment user\n}":                   "did you mean placement?",
		"memory {\n diagnostic\n}":                      "did you mean diagnostics?",
		"memory {\n tool\n}":                            "did you mean tools?",
		"memory {\n ownr {memory.api_key}\n}":           "did you mean owner?",
		"memory {\n mode admin\n}":                      "mode is a setting of memory_api, not of memory",
	} {
		var h Handler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", in, err, want)
		}
	}
	for in, want := range map[string]string{
		"memory_api {\n mode admin\n mode self\n}":              "mode already specified",
		"memory_api {\n insecure_no_auth yes\n}":                "insecure_no_auth takes no argument",
		"memory_api {\n insecure_no_auth\n insecure_no_auth\n}": "insecure_no_auth already specified",
		"memory_api {\n encryption {\n key k\n}\n}":             "memory_api: encryption is a setting of the storage",
		"memory_api {\n storage ./data\n}":                      "storage names a storage of the memory app now",
		"memory_api {\n path /var/lib/memory\n}":                "memory_api: path is a setting of the storage",
		"memory_api {\n mod admin\n}":                           "unrecognized memory_api subdirective 'mod'; did you mean mode?",
		"memory_api {\n max_tokens 500\n}":                      "max_tokens is a setting of memory, not of memory_api",
		"memory_api {\n insecure_no_auth_please\n}":             "did you mean insecure_no_auth?",
	} {
		var a APIHandler
		err := a.UnmarshalCaddyfile(caddyfile.NewTestDispenser(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", in, err, want)
		}
	}
	if err := (&APIHandler{Mode: "self", InsecureNoAuth: true}).Validate(); err == nil || !strings.Contains(err.Error(), "admin only") {
		t.Errorf("insecure_no_auth in self mode: %v, want a config error", err)
	}
}

func TestValidateRejectsBadValues(t *testing.T) {
	for _, h := range []Handler{{Scope: "everyone"}, {Scope: "owner", MaxTokens: -1}, {Scope: "owner", Timeout: -1}} {
		if err := h.Validate(); err == nil {
			t.Errorf("%+v validated", h)
		}
	}
	// A bad placement fails Provision before any storage is opened.
	bad := &Handler{Placement: "sideways"}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	err := bad.Provision(ctx)
	if err == nil || !strings.Contains(err.Error(), "use cache_safe, system or user") {
		t.Errorf("bad placement: %v", err)
	}
	if bad.storage != nil {
		t.Errorf("a failed Provision took a storage")
	}
}

// TestDirectiveOrderNeedsNoOrderLine: memory sorts after encode (so the tee
// reads uncompressed bytes) and before reverse_proxy, with no global order.
func TestDirectiveOrderNeedsNoOrderLine(t *testing.T) {
	adapter := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}
	out, _, err := adapter.Adapt([]byte(`:8080 {
	reverse_proxy 127.0.0.1:11434
	memory
	encode gzip
}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	enc, mem, rp := strings.Index(s, `"handler":"encode"`), strings.Index(s, `"handler":"memory"`), strings.Index(s, `"handler":"reverse_proxy"`)
	if enc < 0 || mem < 0 || rp < 0 || !(enc < mem && mem < rp) {
		t.Errorf("want encode, memory, reverse_proxy in that order:\n%s", out)
	}
}

// TestTeeCopiesWithoutHoldingBack: the client gets every byte and every
// flush; the copy is taken from Write and from io.Copy alike and is capped.
func TestTeeCopiesWithoutHoldingBack(t *testing.T) {
	rec := httptest.NewRecorder()
	tw := newTee(rec, 10)
	tw.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	tw.WriteHeader(http.StatusOK)
	io.WriteString(tw, "data: 1\n\n")
	if err := http.NewResponseController(tw).Flush(); err != nil {
		t.Fatalf("flush through the tee: %v", err)
	}
	if !rec.Flushed {
		t.Error("flush did not reach the client's writer")
	}
	// io.Copy must not bypass the copy through a ReadFrom of the client writer.
	if _, err := io.Copy(tw, strings.NewReader("data: 2\n\n")); err != nil {
		t.Fatal(err)
	}
	if got := rec.Body.String(); got != "data: 1\n\ndata: 2\n\n" {
		t.Errorf("client got %q", got)
	}
	if !tw.capture || tw.buf.String() != "data: 1\n\nd" || !tw.truncated {
		t.Errorf("copy = %q (capture %v, truncated %v); want the first 10 bytes, truncated", tw.buf.String(), tw.capture, tw.truncated)
	}
}

func TestTeeSkipsWhatItCannotDecode(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                true,
		"application/json; charset=utf-8": true,
		"text/event-stream":               true,
		"text/html":                       false,
		"application/octet-stream":        false,
	} {
		tw := newTee(httptest.NewRecorder(), 1<<20)
		tw.Header().Set("Content-Type", ct)
		tw.WriteHeader(http.StatusOK)
		if tw.capture != want {
			t.Errorf("%s: capture %v", ct, tw.capture)
		}
	}
	tw := newTee(httptest.NewRecorder(), 1<<20)
	tw.Header().Set("Content-Type", "application/json")
	tw.WriteHeader(http.StatusTooManyRequests)
	if tw.capture {
		t.Error("an error response was captured for extraction")
	}
	// A 1xx informational response does not decide anything.
	tw = newTee(httptest.NewRecorder(), 1<<20)
	tw.WriteHeader(http.StatusEarlyHints)
	tw.Header().Set("Content-Type", "application/json")
	tw.Write([]byte(`{}`))
	if !tw.capture || tw.status != http.StatusOK {
		t.Errorf("after 103, status %d capture %v", tw.status, tw.capture)
	}
}

// TestExampleOwnerIsTheKeyThenTheLocalUser: the shipped Caddyfile.example
// names owners by API key, else (for keyless clients) the person at this
// machine, in the proxy and in the API alike. Never by the client's
// address: an address-based owner is shared by everyone behind one NAT or
// proxy, and anyone could claim it by sending the address as a key.
func TestExampleOwnerIsTheKeyThenTheLocalUser(t *testing.T) {
	src, err := os.ReadFile("Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(src, nil)
	if err != nil {
		t.Fatalf("Caddyfile.example does not adapt: %v", err)
	}
	owners := regexp.MustCompile(`"owner":\[[^\]]*\]`).FindAllString(string(cfg), -1)
	want := `"owner":["{memory.api_key}","{memory.local_user}"]`
	if len(owners) != 2 || owners[0] != want || owners[1] != want {
		t.Errorf("Caddyfile.example's owners are %v, want the API key, then the local user, in memory and memory_api", owners)
	}
}

// exampleOption is Caddyfile.example with the optional setting whose
// commented first line starts with first turned on as its comments say: the
// lines of the commented blocks it is in uncommented once (one "# "
// removed from each), then its own lines (through the brace that closes
// it, for a block) until they are no comments. Lines that start with
// others (settings it replaces) are commented out.
func exampleOption(t *testing.T, first string, others ...string) string {
	t.Helper()
	src, err := os.ReadFile("Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	text := func(i int) string { return strings.TrimLeft(lines[i], "\t# ") }
	indent := func(i int) int { return len(lines[i]) - len(text(i)) }
	commented := func(i int) bool { return strings.HasPrefix(strings.TrimSpace(lines[i]), "#") }
	// through is the line that closes the block line i opens (i itself for
	// a line that opens none).
	through := func(i int) int {
		depth := 0
		for j := i; j < len(lines); j++ {
			depth += strings.Count(text(j), "{") - strings.Count(text(j), "}")
			if depth <= 0 {
				return j
			}
		}
		return len(lines) - 1
	}
	at := -1
	for i := range lines {
		if commented(i) && strings.HasPrefix(text(i), first) {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatalf("Caddyfile.example has no commented line %q", first)
	}
	var blocks []int // the commented blocks around it, innermost first
	for i, need := at-1, indent(at); i >= 0 && commented(i); i-- {
		if strings.HasSuffix(lines[i], "{") && indent(i) < need && through(i) > at {
			blocks, need = append(blocks, i), indent(i)
		}
	}
	if len(blocks) > 0 {
		outer := blocks[len(blocks)-1]
		for i := outer; i <= through(outer); i++ {
			lines[i] = strings.Replace(lines[i], "# ", "", 1)
		}
	}
	for i := at; i <= through(at); i++ {
		for commented(i) {
			lines[i] = strings.Replace(lines[i], "# ", "", 1)
		}
	}
	for i, l := range lines {
		for _, o := range others {
			if strings.HasPrefix(strings.TrimSpace(l), o) {
				lines[i] = strings.Replace(l, o, "# "+o, 1)
			}
		}
	}
	return strings.Join(lines, "\n")
}

// TestExampleOptionsTurnOnOneAtATime: each optional setting of
// Caddyfile.example, uncommented as its comment says, turns that setting
// on and nothing else, and the configuration loads; uncommenting the
// storage block sets its path alone (not encryption, which would need a
// key).
func TestExampleOptionsTurnOnOneAtATime(t *testing.T) {
	adapt := func(text string) string {
		t.Helper()
		cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), nil)
		if err != nil {
			t.Fatalf("does not adapt: %v\n%s", err, text)
		}
		return string(cfg)
	}
	storage := func(cfg string) string { // the memory app, as "memory":{...}
		var c struct {
			Apps map[string]json.RawMessage `json:"apps"`
		}
		if err := json.Unmarshal([]byte(cfg), &c); err != nil {
			t.Fatal(err)
		}
		if c.Apps["memory"] == nil {
			return ""
		}
		return `"memory":` + string(c.Apps["memory"])
	}
	for _, c := range []struct {
		first  string
		others []string
		want   string
	}{
		{"path /var/lib/caddy/memory", nil, `"memory":{"storages":{"default":{"path":"/var/lib/caddy/memory"}}}`},
		{"url {env.MEMORY_DATABASE_URL}", []string{"path "}, `"memory":{"storages":{"default":{"url":"{env.MEMORY_DATABASE_URL}"}}}`},
		{"encryption {", nil, `"memory":{"storages":{"default":{"path":"/var/lib/caddy/memory","encryption":{"key":"{env.MEMORY_KEY}"}}}}`},
		{"llm {", nil, `"memory":{"storages":{"default":{"path":"/var/lib/caddy/memory","llm":{"url":"http://127.0.0.1:11434/v1/chat/completions","model":"qwen2.5:7b-instruct"}}}}`},
	} {
		if got := storage(adapt(exampleOption(t, c.first, c.others...))); got != c.want {
			t.Errorf("%s uncommented: the storage is\n%s\nwant\n%s", c.first, got, c.want)
		}
	}
	shipped := adapt(exampleOption(t, "placement cache_safe")) // a line of the handler, to compare with
	for first, want := range map[string]string{
		"placement cache_safe": `"placement":"cache_safe"`,
		"max_tokens 800":       `"max_tokens":800`,
		"tools":                `"tools":["save_memory","recall_memory"]`,
	} {
		got := adapt(exampleOption(t, first))
		if !strings.Contains(got, want) || storage(got) != "" {
			t.Errorf("%s uncommented: want %s and the default storage:\n%s", first, want, got)
		}
		if first != "placement cache_safe" && strings.Contains(got, `"placement"`) || strings.Count(got, `"handler":"memory"`) != strings.Count(shipped, `"handler":"memory"`) {
			t.Errorf("%s uncommented turned on more:\n%s", first, got)
		}
	}
}

func TestCaddyfileBareToolsMeansBoth(t *testing.T) {
	var h Handler
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("memory {\n tools\n}")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.Tools, " "); got != "save_memory recall_memory" {
		t.Errorf("bare tools gave %q, want both", got)
	}
}

// TestExampleListensOnlyWhereTold: Caddyfile.example serves plain HTTP on
// 127.0.0.1:8080 unless MEMORY_BIND and MEMORY_PORT say otherwise, and no
// choice of address starts HTTPS, a certificate authority or a listener
// on :80.
func TestExampleListensOnlyWhereTold(t *testing.T) {
	src, err := os.ReadFile("Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ bind, port, want string }{
		{"", "", "127.0.0.1:8080"},
		{"localhost", "", "localhost:8080"},
		{"0.0.0.0", "9000", "0.0.0.0:9000"},
		{"192.0.2.7", "", "192.0.2.7:8080"},
	} {
		t.Setenv("MEMORY_BIND", c.bind)
		t.Setenv("MEMORY_PORT", c.port)
		if c.bind == "" {
			os.Unsetenv("MEMORY_BIND")
		}
		if c.port == "" {
			os.Unsetenv("MEMORY_PORT")
		}
		out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(src, nil)
		if err != nil {
			t.Fatalf("MEMORY_BIND=%q: %v", c.bind, err)
		}
		var cfg struct {
			Apps map[string]json.RawMessage `json:"apps"`
		}
		if err := json.Unmarshal(out, &cfg); err != nil {
			t.Fatal(err)
		}
		var httpApp struct {
			Servers map[string]struct {
				Listen []string `json:"listen"`
			} `json:"servers"`
		}
		json.Unmarshal(cfg.Apps["http"], &httpApp)
		var listen []string
		for _, s := range httpApp.Servers {
			listen = append(listen, s.Listen...)
		}
		if len(listen) != 1 || listen[0] != c.want {
			t.Errorf("MEMORY_BIND=%q MEMORY_PORT=%q: listens on %v, want %s alone", c.bind, c.port, listen, c.want)
		}
		for app := range cfg.Apps {
			if app != "http" && app != "memory" {
				t.Errorf("MEMORY_BIND=%q: the config loads the %s app", c.bind, app)
			}
		}
		if strings.Contains(string(out), "automatic_https") || strings.Contains(string(out), ":443") || strings.Contains(string(out), ":80\"") {
			t.Errorf("MEMORY_BIND=%q: the config can start HTTPS or a :80 listener:\n%s", c.bind, out)
		}
	}
}
