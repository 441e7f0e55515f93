package api

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
)

// TestHandlersThatNeverRunAreRefused: a memory (or memory_api) written
// where no request can reach it, after a handler that answers every
// request in the same route block, fails to load with a message that says
// why and what to write, whatever answers first (reverse_proxy, respond,
// file_server, a handle block that proxies) and in JSON as in a
// Caddyfile; the running configuration keeps serving. Handlers that let
// requests by (a respond with a matcher, forward_auth, file_server with
// pass_thru, reverse_proxy with handle_response) are no reason, in one
// site or two.
func TestHandlersThatNeverRunAreRefused(t *testing.T) {
	up := harness.NewFakeLLM(t)
	storage := t.TempDir()
	good := harness.SiteConfig(storage, up.Addr(), "diagnostics")
	tester := harness.StartCaddy(t, good)
	site := func(body string) string {
		return harness.WithStorage(storage, "") + "http://localhost {\n" + body + "\n}\n"
	}
	for name, c := range map[string]struct{ cfg, want string }{
		"after reverse_proxy in a route": {site(`	route {
		reverse_proxy ` + up.Addr() + `
		memory
	}`), "memory never runs where it is: before it in the same route, reverse_proxy answers every request itself"},
		"after respond in a route": {site(`	route {
		respond "hello"
		memory
		reverse_proxy ` + up.Addr() + `
	}`), "before it in the same route, respond (or redir, abort) answers every request itself"},
		"after file_server in a route": {site(`	route {
		file_server
		memory
	}`), "file_server answers every request itself"},
		"after a handle block that proxies, in a route": {site(`	route {
		handle {
			reverse_proxy ` + up.Addr() + `
		}
		memory
	}`), "a route or handle block answers every request itself"},
		"memory_api after reverse_proxy in a route": {site(`	route {
		reverse_proxy ` + up.Addr() + `
		memory_api
	}`), "memory_api never runs where it is"},
		"in the second site, after reverse_proxy": {site(`	memory
	reverse_proxy `+up.Addr()) + `http://127.0.0.1 {
	route {
		reverse_proxy ` + up.Addr() + `
		memory
	}
}
`, "memory never runs where it is"},
	} {
		status, body := harness.LoadConfig(t, c.cfg)
		if status == http.StatusOK || !strings.Contains(body, c.want) || !strings.Contains(body, "Put memory") && !strings.Contains(body, "Put memory_api") {
			t.Errorf("%s: %d %s\nwant a refusal saying %q and what to write", name, status, body, c.want)
		}
	}
	status, body := harness.LoadAs(t, "application/json", fmt.Sprintf(`{"admin":{"listen":%q},"apps":{"http":{"servers":{"s":{"listen":[":%s"],
		"routes":[{"handle":[{"handler":"reverse_proxy","upstreams":[{"dial":%q}]},{"handler":"memory"}]}]}}},
		"memory":{"storages":{"default":{"path":%q}}}}}`, harness.AdminListen, harness.Port, up.Addr(), storage))
	if status == http.StatusOK || !strings.Contains(body, "memory never runs where it is: before it in the same route, reverse_proxy") {
		t.Errorf("JSON, memory after reverse_proxy in one route: %d %s", status, body)
	}
	// Refused, the running configuration goes on.
	if s := harness.ChatAs(t, tester, http.Header{"Authorization": {"Bearer sk-reach"}}, "Hello, I live in Zqreach."); s != "nothing_relevant" {
		t.Errorf("after the refused loads, the running configuration answers %q", s)
	}

	// Nothing stops these from reaching memory: they load, and memory runs.
	for name, body := range map[string]string{
		"after respond with a matcher": `	route {
		respond /health 200
		memory {
			diagnostics
		}
		reverse_proxy ` + up.Addr() + `
	}`,
		"behind forward_auth": `	forward_auth ` + up.Addr() + ` {
		uri /auth
	}
	memory {
		diagnostics
	}
	reverse_proxy ` + up.Addr(),
		"after file_server with pass_thru": `	route {
		file_server {
			root ` + t.TempDir() + `
			pass_thru
		}
		memory {
			diagnostics
		}
		reverse_proxy ` + up.Addr() + `
	}`,
		"after reverse_proxy with handle_response": `	route {
		reverse_proxy ` + up.Addr() + ` {
			@never status 599
			handle_response @never {
				respond "never"
			}
		}
		memory {
			diagnostics
		}
	}`,
	} {
		harness.Reload(t, tester, site(body))
		resp, _ := harness.SendChat(t, tester.Client, "/v1/chat/completions", "sk-reach", nil, harness.ChatBody(false, harness.Msg("user", "Where do I live, Zqreach?")))
		if name != "after reverse_proxy with handle_response" && resp.Header.Get("X-Memory-Status") == "" {
			t.Errorf("%s: memory did not run", name)
		}
	}
}

// TestStartupSaysWhereMemoryIs: once a configuration starts, the log says
// where each storage is and where each memory_api's dashboard is, site
// and mount included, for two sites.
func TestStartupSaysWhereMemoryIs(t *testing.T) {
	up := harness.NewFakeLLM(t)
	storage, logFile := t.TempDir(), filepath.Join(t.TempDir(), "caddy.log")
	cfg := strings.Replace(harness.WithStorage(storage, ""), "\tmemory {\n", fmt.Sprintf("\tlog {\n\t\toutput file %s\n\t\tformat json\n\t}\n\tmemory {\n", logFile), 1) +
		`http://localhost {
	memory
	handle /memory/* {
		memory_api
	}
	reverse_proxy ` + up.Addr() + `
}
http://127.0.0.1 {
	handle_path /ops/memory/* {
		basic_auth {
			admin $2a$14$Zkx19XLiW6VYouLHR5NmfOFU0z2GTNmpkT/5qqR7hx4IjWJPDhjvG
		}
		memory_api {
			mode admin
		}
	}
}
`
	harness.StartCaddy(t, cfg)
	opened := harness.LogLines(t, logFile, "memory storage open")
	if len(opened) != 1 || opened[0]["path"] != storage || opened[0]["storage"] != "default" {
		t.Errorf("the storage's line: %v; want its path, %s", opened, storage)
	}
	var urls []string
	for _, l := range harness.LogLines(t, logFile, "memory_api ready") {
		urls = append(urls, strings.TrimPrefix(fmt.Sprint(l["msg"]), "memory_api ready: its dashboard is at ")+" "+fmt.Sprint(l["mode"]))
	}
	want := map[string]bool{harness.CaddyAddr + "/memory/ui/ self": true, "http://127.0.0.1:" + harness.Port + "/ops/memory/ui/ admin": true}
	if len(urls) != 2 || !want[urls[0]] || !want[urls[1]] {
		t.Errorf("the dashboards' lines say %q, want %v", urls, want)
	}
}
