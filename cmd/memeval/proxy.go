package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/caddy-memory/memory"
	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/internal/block"
)

// proxy is a real Caddy with the memory handler (its defaults, plus any
// extra directives) in front of a fake OpenAI upstream that answers each
// request by echoing its latest user message and keeps the last body it
// received for each API key: what a user of the proxy would get.
type proxy struct {
	url    string
	up     *httptest.Server
	client *http.Client

	mu   sync.Mutex
	last map[string][]byte // Authorization -> the last request body upstream saw

	sent atomic.Int64 // chat requests answered, each a turn handed to learning
	// base is handedOver when this Caddy started (the counter is the
	// process's).
	base float64
}

// message is one chat message.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// startProxy loads a Caddy config serving memory on storage in front of the
// fake upstream. Only one can run at a time (Caddy's config is global).
func startProxy(storage, extra string) (*proxy, error) {
	p := &proxy{last: map[string][]byte{}, client: &http.Client{Timeout: time.Minute}}
	p.up = httptest.NewServer(http.HandlerFunc(p.answer))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(fmt.Sprintf(`{
	admin off
	persist_config off
	log {
		level ERROR
	}
	memory {
		storage default {
			path %s
		}
	}
}
http://127.0.0.1:%d {
	memory {
		%s
	}
	reverse_proxy %s
}
`, storage, port, extra, strings.TrimPrefix(p.up.URL, "http://"))), nil)
	if err != nil {
		p.up.Close()
		return nil, err
	}
	if err := caddy.Load(cfg, true); err != nil {
		p.up.Close()
		return nil, err
	}
	p.url = fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port)
	p.base = handedOver()
	return p, nil
}

func (p *proxy) stop() {
	caddy.Stop()
	p.up.Close()
}

// answer is the fake upstream: an OpenAI chat completion echoing the
// latest user message.
func (p *proxy) answer(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.last[r.Header.Get("Authorization")] = body
	p.mu.Unlock()
	var req struct {
		Messages []message `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	echo := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			echo = req.Messages[i].Content
			break
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-eval", "object": "chat.completion", "model": "echo",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": echo}}},
	})
}

// chat sends one request for the owner key and returns the answer's text.
func (p *proxy) chat(key string, msgs []message) (string, error) {
	b, _ := json.Marshal(map[string]any{"model": "gpt-eval", "messages": msgs})
	req, _ := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := p.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	p.sent.Add(1)
	var out struct {
		Choices []struct {
			Message message `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Choices) == 0 {
		return "", fmt.Errorf("unreadable answer: %s", raw)
	}
	return out.Choices[0].Message.Content, nil
}

// conversation sends the user turns of one conversation in order, each
// request carrying the conversation so far (after an optional system
// prompt), as a chat client does.
func (p *proxy) conversation(key, system string, turns []string) error {
	var msgs []message
	if system != "" {
		msgs = append(msgs, message{"system", system})
	}
	for _, t := range turns {
		msgs = append(msgs, message{"user", t})
		reply, err := p.chat(key, msgs)
		if err != nil {
			return err
		}
		msgs = append(msgs, message{"assistant", reply})
	}
	return nil
}

// settle waits until learning has finished with every turn sent so far
// (the handler hands a turn over as its answer ends, so the client can
// have the answer a moment before) and everything learned is searchable:
// what the next request finds then does not depend on the machine's speed.
func (p *proxy) settle() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for handedOver()-p.base < float64(p.sent.Load()) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("learning finished with %.0f of %d turns in a minute", handedOver()-p.base, p.sent.Load())
		case <-time.After(2 * time.Millisecond):
		}
	}
	v, err := caddy.ActiveContext().AppIfConfigured("memory")
	if err != nil {
		return err
	}
	for _, s := range v.(*app.App).Open() {
		if err := s.Engine().Sync(ctx); err != nil {
			return err
		}
	}
	return nil
}

// handedOver counts the turns learning has finished with (learned, failed
// or dropped), from the running configuration's metrics.
func handedOver() float64 {
	ctx := caddy.ActiveContext()
	mfs, _ := ctx.GetMetricsRegistry().Gather()
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "caddy_memory_extraction_jobs_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// block is the memory block of the last request the upstream received for
// key, "" for none.
func (p *proxy) block(key string) string {
	p.mu.Lock()
	body := p.last["Bearer "+key]
	p.mu.Unlock()
	var req struct {
		Messages []message `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	for _, m := range req.Messages {
		if i := strings.Index(m.Content, block.Start); i >= 0 {
			s := m.Content[i:]
			if j := strings.Index(s, block.End); j >= 0 {
				return s[:j+len(block.End)]
			}
			return s
		}
	}
	return ""
}

// blockLines are the memories of a block, one a line, without the date.
func blockLines(block string) []string {
	lines, _ := blockEntries(block)
	return lines
}

// blockEntries are the memories of a block, one a line, without the date,
// and whether each had one: the profile's standing facts have none.
func blockEntries(block string) (lines []string, dated []bool) {
	for _, l := range strings.Split(block, "\n") {
		l, ok := strings.CutPrefix(l, "- ")
		if !ok {
			continue
		}
		d := false
		if strings.HasPrefix(l, "[") {
			if i := strings.Index(l, "] "); i > 0 {
				l, d = l[i+2:], true
			}
		}
		lines, dated = append(lines, l), append(dated, d)
	}
	return lines, dated
}
