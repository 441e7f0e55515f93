package memory

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The client has the whole answer before the module gathers the turn and
// hands it to the engine: learning from a non-streaming request never adds
// to its latency.
func TestAnswerArrivesBeforeTheHandOff(t *testing.T) {
	held, release := make(chan struct{}, 1), make(chan struct{})
	beforeHandOff = func() {
		held <- struct{}{}
		<-release
	}
	t.Cleanup(func() { beforeHandOff = func() {} }) // after Caddy is unloaded
	up := newFakeOpenAI(t)
	up.answer = func([]byte) string { return "Your cat is called Miso." }
	tester := startCaddy(t, siteConfig(t.TempDir(), up.addr(), ""))
	defer close(release)

	type answer struct {
		status int
		body   string
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, caddyAddr+"/v1/chat/completions",
			strings.NewReader(string(chatBody(false, map[string]any{"role": "user", "content": "What is my cat called?"}))))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-answer")
		resp, err := tester.Client.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{resp.StatusCode, string(b), err}
	}()
	// The answer may arrive before the handler reaches the hand-off, or
	// while it waits there; never only after it.
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the hand-off of its turn")
	}
	select {
	case a := <-got:
		if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, "Miso") {
			t.Fatalf("answer while the turn was being handed off: %+v", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the client did not have the whole answer until the module had handed its turn off")
	}
}
