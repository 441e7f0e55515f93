package memory

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-memory/memory/engine"
)

// heldLearner holds every hand-off until released.
type heldLearner struct {
	held, release chan struct{}
}

func (l heldLearner) Enqueue(*engine.Job) bool {
	l.held <- struct{}{}
	<-l.release
	return true
}

// The client has the whole answer before the module gathers the turn and
// hands it over: learning from a non-streaming request never adds to its
// latency.
func TestAnswerArrivesBeforeTheHandOff(t *testing.T) {
	h := provisioned(t, &Handler{})
	l := heldLearner{make(chan struct{}, 1), make(chan struct{})}
	h.learner = l
	// An answer of known length, as reverse_proxy forwards a provider's.
	answerBody := mustBytes(map[string]any{"id": "chatcmpl-1", "choices": []any{
		map[string]any{"message": map[string]any{"role": "assistant", "content": "Your cat is called Miso."}}}})
	upstream := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answerBody)))
		_, err := w.Write(answerBody)
		return err
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.ServeHTTP(w, chatRequest(t, readAll(t, r)), upstream); err != nil {
			t.Error(err)
		}
	}))
	defer srv.Close()
	defer close(l.release)

	type answer struct {
		status int
		body   string
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(string(chatBody(false, msg("user", "What is my cat called?")))))
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
	case <-l.held:
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
