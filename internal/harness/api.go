package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// APIConfig serves the proxy and both API modes on one storage: the admin
// API behind basic_auth, the self-service API for API-key holders, the way
// the README shows.
func APIConfig(t *testing.T, storage, upstream, extra string) string {
	return APIConfigWith(t, storage, "", upstream, "", extra)
}

// APIConfigWith is apiConfig with settings of the storage (settings) and
// of the memory handler (directives).
func APIConfigWith(t *testing.T, storage, settings, upstream, directives, extra string) string {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return WithStorage(storage, settings) + fmt.Sprintf(`http://localhost {
	memory {
		%[4]s
	}
	handle /memory/admin/* {
		basic_auth {
			admin %[2]s
		}
		memory_api {
			mode admin
			%[3]s
		}
	}
	handle /memory/* {
		memory_api {
			%[3]s
		}
	}
	reverse_proxy %[1]s
}
`, upstream, hash, extra, directives)
}

// APICall is one request to the API.
type APICall struct {
	T      *testing.T
	Client *http.Client
}

// Do sends a request; body is JSON-encoded unless it is []byte. It returns
// the status and the decoded JSON answer (nil if not JSON).
func (a APICall) Do(method, path, auth string, body any) (int, map[string]any) {
	a.T.Helper()
	status, raw := a.Raw(method, path, auth, body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return status, out
}

func (a APICall) Raw(method, path, auth string, body any) (int, []byte) {
	a.T.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		r = bytes.NewReader(MustBytes(b))
	}
	req, err := http.NewRequest(method, CaddyAddr+path, r)
	if err != nil {
		a.T.Fatal(err)
	}
	if r != nil {
		// As docs/api.md has it: JSON lines to /import, JSON elsewhere.
		req.Header.Set("Content-Type", "application/json")
		if strings.Contains(path, "/import") {
			req.Header.Set("Content-Type", "application/x-ndjson")
		}
	}
	switch {
	case auth == "admin":
		req.SetBasicAuth("admin", "s3cret")
	case auth != "":
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := a.Client.Do(req)
	if err != nil {
		a.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// ErrCode is the error code of an error answer.
func ErrCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	return code + ": " + msg
}

func MemoryOf(out map[string]any) map[string]any {
	m, _ := out["memory"].(map[string]any)
	return m
}

func IDOf(m map[string]any) int {
	f, _ := m["id"].(float64)
	return int(f)
}

func ListContents(out map[string]any) []string { return FieldContents(out, "memories") }

// FieldContents are the contents of the memories in out's fields.
func FieldContents(out map[string]any, fields ...string) []string {
	var s []string
	for _, field := range fields {
		ms, _ := out[field].([]any)
		for _, m := range ms {
			s = append(s, m.(map[string]any)["content"].(string))
		}
	}
	return s
}
