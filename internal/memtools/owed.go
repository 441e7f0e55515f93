package memtools

import (
	"sync"
	"time"
)

// An OpenAI responses answer that called the proxy's tools beside the
// client's own reaches the client with the client's calls alone, but
// OpenAI stores it whole: a next request that continues it
// (previous_response_id) must bring an output for every call, or OpenAI
// refuses it. The proxy keeps the outputs of its calls, by owner and
// response, and adds them to that request.

// owedLimit bounds the answers remembered; owedFor is how long one is.
const (
	owedLimit = 4096
	owedFor   = time.Hour
)

// Owed are function_call_output items owed to stored responses.
type Owed struct {
	mu    sync.Mutex
	items map[string]owed
	order []string // keys, oldest first
}

type owed struct {
	items []string
	at    time.Time
}

func owedKey(owner, response string) string { return owner + "\x00" + response }

// put remembers the outputs owed to owner's response.
func (o *Owed) put(owner, response string, items []string) {
	if response == "" || len(items) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.items == nil {
		o.items = map[string]owed{}
	}
	now := time.Now()
	for len(o.order) > 0 && (len(o.order) >= owedLimit || now.Sub(o.items[o.order[0]].at) > owedFor) {
		delete(o.items, o.order[0])
		o.order = o.order[1:]
	}
	k := owedKey(owner, response)
	if _, ok := o.items[k]; !ok {
		o.order = append(o.order, k)
	}
	o.items[k] = owed{items, now}
}

// take returns, once, the outputs owed to owner's response.
func (o *Owed) take(owner, response string) []string {
	if response == "" {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := owedKey(owner, response)
	d, ok := o.items[k]
	if !ok || time.Since(d.at) > owedFor {
		return nil
	}
	delete(o.items, k) // its key leaves order when it comes first
	return d.items
}
