package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/stats"
)

// How fast learning keeps up: the commits it makes under load, how long a
// turn takes to become searchable (under load, and across instances), and
// how long learning takes to catch up once the load stops.

// memoryEngine is the engine of the memory server this process runs.
func memoryEngine() (*engine.Engine, error) {
	v, err := caddy.ActiveContext().AppIfConfigured("memory")
	if err != nil {
		return nil, err
	}
	for _, s := range v.(*app.App).Open() {
		return s.Engine(), nil
	}
	return nil, errors.New("no memory storage is open")
}

// finder reports whether word is searchable for the owner of key on one
// instance.
type finder func(ctx context.Context, key, word string) (bool, error)

// engineFinder searches e, in this process.
func engineFinder(e *engine.Engine) finder {
	return func(ctx context.Context, key, word string) (bool, error) {
		res, err := e.Search(ctx, engine.SearchRequest{Owner: e.OwnerID(key), Query: word, Limit: 1})
		return len(res) > 0, err
	}
}

// httpFinder asks an instance in another process (its -instance-probe
// endpoint, see instances.go).
func httpFinder(client *http.Client, port int) finder {
	return func(ctx context.Context, key, word string) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/found?key=%s&word=%s", port, key, word), nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b) == "yes", nil
	}
}

// prober sends, one at a time, a turn carrying a word of its own through
// a memory server, and times how long after its answer ended the word is
// found by search on a (maybe other) instance: a turn's lag from being
// told to being recalled.
type prober struct {
	client *http.Client
	port   int    // the memory server the turns are told through
	find   finder // where they are looked for
	gap    time.Duration

	mu   sync.Mutex
	lags []float64 // ms
	lost int       // not found within probeTimeout
	n    int
}

// probeTimeout bounds the wait for one probe's word.
const probeTimeout = 30 * time.Second

// run probes until ctx is done.
func (p *prober) run(ctx context.Context) {
	for ctx.Err() == nil {
		p.mu.Lock()
		p.n++
		i := p.n
		p.mu.Unlock()
		key := fmt.Sprintf("bench-probe-%d-%d", time.Now().UnixNano(), i)
		word := "zqprobe" + letters(time.Now().UnixNano()%1e9) + "x" + letters(int64(i))
		body := fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"My neighbour's parrot is called %s."}]}`, word)
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", p.port), bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := p.client.Do(req)
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		told := time.Now()
		// Followed to the end even when ctx ends meanwhile: the lag after
		// the load stops is part of what is measured.
		wait, cancel := context.WithTimeout(context.Background(), probeTimeout)
		found := false
		for wait.Err() == nil {
			if ok, _ := p.find(wait, key, word); ok {
				found = true
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		cancel()
		p.mu.Lock()
		if found {
			p.lags = append(p.lags, float64(time.Since(told).Microseconds())/1000)
		} else {
			p.lost++
		}
		p.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(p.gap):
		}
	}
}

// learnWatch follows learning in the memory server's rounds of one mode:
// commits a second, the lag of probe turns, and how long after the load
// stops everything accepted is learned and searchable.
type learnWatch struct {
	e       *engine.Engine
	commits []float64 // a second, each round
	catchUp []float64 // ms, each round
	probes  *prober
}

// around runs one round of the memory server with probes alongside.
func (w *learnWatch) around(round func() measure) measure {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.probes.run(ctx)
	}()
	c0, t0 := w.e.LearningCommits(), time.Now()
	m := round()
	w.commits = append(w.commits, float64(w.e.LearningCommits()-c0)/time.Since(t0).Seconds())
	stopped := time.Now()
	sctx, scancel := context.WithTimeout(context.Background(), time.Minute)
	if err := w.e.Sync(sctx); err == nil {
		w.catchUp = append(w.catchUp, float64(time.Since(stopped).Microseconds())/1000)
	}
	scancel()
	cancel()
	<-done
	return m
}

// letters spells n in the letters a to z, so a probe's word is one word
// to every analyzer.
func letters(n int64) string {
	var b []byte
	for {
		b = append(b, byte('a'+n%26))
		n /= 26
		if n == 0 {
			return string(b)
		}
	}
}

// report prints what w saw, for the rounds of mode.
func (w *learnWatch) report(mode, where string) {
	p := w.probes
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Printf("learning, %s rounds: %.1f commits/s (median of rounds); a told turn searchable %s after p50 %.1f ms, p99 %.1f ms (%d probes, %d not found in %s); all learned and searchable %.0f ms after the load stopped (median)\n",
		mode, median(w.commits), where, stats.Percentile(p.lags, 50), stats.Percentile(p.lags, 99), len(p.lags), p.lost, probeTimeout, median(w.catchUp))
}

// client0 is a client of the probes' own, so they never wait for a
// connection behind the load's clients.
func client0() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true}}
}
