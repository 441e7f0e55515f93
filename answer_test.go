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

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/harness"
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

// A server that begins to shut down (a reload) while the handler hands a
// turn off must not leave the client holding a kept-alive connection the
// server is about to close: the answer's end goes out when the handler
// returns, saying "Connection: close". An answer flushed before the
// hand-off promised the connection; the client sent its next request on
// it, and the server closed it with that request unread.
func TestShutdownDuringHandOffClosesConnection(t *testing.T) {
	h, _ := provisioned(t, &Handler{})
	l := heldLearner{make(chan struct{}, 1), make(chan struct{})}
	h.learner = l
	// An answer of known length, as reverse_proxy forwards a provider's.
	answerBody := harness.MustBytes(map[string]any{"id": "chatcmpl-1", "choices": []any{
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

	type answer struct {
		status int
		body   string
		close  bool
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(string(harness.ChatBody(false, harness.Msg("user", "What is my cat called?")))))
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{resp.StatusCode, string(b), resp.Close, err}
	}()
	select {
	case <-l.held:
	case a := <-got:
		close(l.release)
		t.Fatalf("the answer was whole at the client while its turn was being handed off: %+v", a)
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the hand-off of its turn")
	}
	// What http.Server.Shutdown does first: no more kept-alive connections.
	srv.Config.SetKeepAlivesEnabled(false)
	close(l.release)
	select {
	case a := <-got:
		if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, "Miso") {
			t.Fatalf("answer across the shutdown: %+v", a)
		}
		if !a.close {
			t.Error("the answer kept the connection alive on a server shutting down")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after the hand-off")
	}
}
