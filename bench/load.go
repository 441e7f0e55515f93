package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The A/B run's load: the requests, and the closed-loop clients that send
// them and time each.

type target struct {
	name string
	port int
}

type request struct {
	key  string
	body []byte
}

// traffic makes n requests: an owner, a system prompt, a few turns of
// history and a question mostly about that owner's memories. Owners are
// drawn in proportion to the square root of what they hold: those who hold
// more chat more, though not in proportion (a year of daily use is also
// a year of small talk).
func traffic(words map[int][]string, sizes []int, n int) []request {
	v := newVocab(99)
	system := "You are a helpful assistant. " + strings.Join(v.words(60), " ")
	cum := make([]float64, len(sizes))
	total := 0.0
	for o, s := range sizes {
		total += math.Sqrt(float64(s))
		cum[o] = total
	}
	out := make([]request, n)
	for i := range out {
		o, _ := slices.BinarySearch(cum, v.rng.Float64()*total)
		o = min(o, len(sizes)-1)
		out[i] = v.chat(system, words, o)
	}
	return out
}

// chat is a request of owner o: the system prompt, a few turns of history
// and a question about the owner's words.
func (v *vocab) chat(system string, words map[int][]string, o int) request {
	msgs := []map[string]string{{"role": "system", "content": system}}
	for range 2 {
		msgs = append(msgs,
			map[string]string{"role": "user", "content": strings.Join(v.words(15), " ")},
			map[string]string{"role": "assistant", "content": strings.Join(v.words(40), " ")})
	}
	msgs = append(msgs, map[string]string{"role": "user", "content": v.question(words[o])})
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": msgs})
	return request{key: ownerKey(o), body: b}
}

// measure is one measurement of one server.
type measure struct {
	reqs    int
	seconds float64
	lat     []float64 // ms, whole request
	ttfb    []float64 // ms, to the first body byte
	reach   []float64 // ms, until the upstream had the whole request
	back    []float64 // ms, from the upstream's answer to the client's last byte
	search  []float64 // ms, the memory handler's search (X-Memory-Time)
	errors  int
	// cpu is the process's CPU seconds while it ran: both servers, the
	// upstream and the clients, of which only one server was loaded.
	cpu float64
}

// run sends requests from concurrency clients for d.
func run(client *http.Client, t target, bodies []request, concurrency int, d time.Duration, stream bool) measure {
	var mu sync.Mutex
	var m measure
	var next atomic.Int64
	deadline := time.Now().Add(d)
	start, cpu0 := time.Now(), processCPU()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat, ttfb, reach, back, search []float64
			errs := 0
			for time.Now().Before(deadline) {
				r := bodies[int(next.Add(1))%len(bodies)]
				body := r.body
				if stream {
					body = append([]byte(`{"stream":true,`), body[1:]...)
				}
				req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", t.port), bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+r.key)
				req.Header.Set("Content-Type", "application/json")
				// A task per request, so a trace (-trace) shows when each ran.
				ctx, task := trace.NewTask(context.Background(), t.name)
				req = req.WithContext(ctx)
				t0 := time.Now()
				req.Header.Set("X-Bench-Sent", strconv.FormatInt(t0.UnixNano(), 10))
				resp, err := client.Do(req)
				if err != nil {
					task.End()
					errs++
					continue
				}
				if ms, err := strconv.ParseFloat(resp.Header.Get("X-Bench-Reach"), 64); err == nil {
					reach = append(reach, ms)
				}
				answered, answerErr := strconv.ParseFloat(resp.Header.Get("X-Bench-Answer"), 64)
				if v := resp.Header.Get("X-Memory-Time"); v != "" {
					if ms, err := strconv.ParseFloat(strings.TrimSuffix(v, "ms"), 64); err == nil {
						search = append(search, ms)
					}
				}
				var first time.Duration
				buf := make([]byte, 4096)
				for {
					n, err := resp.Body.Read(buf)
					if n > 0 && first == 0 {
						first = time.Since(t0)
					}
					if err != nil {
						break
					}
				}
				resp.Body.Close()
				task.End()
				if resp.StatusCode != http.StatusOK {
					errs++
					continue
				}
				ms := float64(time.Since(t0).Microseconds()) / 1000
				lat = append(lat, ms)
				ttfb = append(ttfb, float64(first.Microseconds())/1000)
				if answerErr == nil {
					back = append(back, ms-answered)
				}
			}
			mu.Lock()
			m.lat = append(m.lat, lat...)
			m.ttfb = append(m.ttfb, ttfb...)
			m.reach = append(m.reach, reach...)
			m.back = append(m.back, back...)
			m.search = append(m.search, search...)
			m.errors += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	m.seconds, m.cpu = time.Since(start).Seconds(), processCPU()-cpu0
	m.reqs = len(m.lat)
	return m
}
