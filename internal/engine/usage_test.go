package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/caddy-memory/memory/store"
)

// TestUsesPastTheBufferAreCounted: when more memories wait to have their
// uses written than the buffer holds, the write comes early; none of the
// uses of a steady stream of requests is lost.
func TestUsesPastTheBufferAreCounted(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir, 1)
	e.usage.limit = 8
	owner := e.OwnerID("sk-uses")
	puts := make([]store.Put, 40)
	for i := range puts {
		puts[i] = store.Put{Kind: "note", Key: fmt.Sprintf("n%d", i), Content: fmt.Sprintf("Note number %d about the garden.", i)}
	}
	ms := remember(t, e, owner, puts...)
	// Requests use four memories each; the stream waits for no write.
	for i := 0; i < len(ms); i += 4 {
		e.Used(owner, ms[i].ID, ms[i+1].ID, ms[i+2].ID, ms[i+3].ID)
		// The write the full buffer asks for runs in the background: a
		// request after it finds room again. (Without the early write, the
		// buffer stays full for useFlushEvery.)
		deadline := time.Now().Add(5 * time.Second)
		for pendingUses(e) >= e.usage.limit && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	closeEngine(t, e)
	e2 := open(t, dir, 1)
	defer closeEngine(t, e2)
	for _, m := range ms {
		got, err := e2.Get(owner, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Uses != 1 {
			t.Errorf("memory %q: %d uses counted, want 1", m.Content, got.Uses)
		}
	}
}

// pendingUses is how many memories wait to have their uses written.
func pendingUses(e *Engine) int {
	e.uses.mu.Lock()
	defer e.uses.mu.Unlock()
	return e.uses.n
}

// A use shows at once in what the engine answers of a memory, though it is
// written later.
func TestAUseShowsBeforeItIsWritten(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-shown")
	ms := remember(t, e, owner, store.Put{Kind: "note", Key: "n", Content: "The garden gate sticks in the rain."})
	e.Used(owner, ms[0].ID)
	e.Used(owner, ms[0].ID)
	got, err := e.Get(owner, ms[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Uses != 2 || got.LastUsed == nil {
		t.Errorf("after two uses, not yet written: %d uses, last %v", got.Uses, got.LastUsed)
	}
	e.usage.flush()
	if got, _ := e.Get(owner, ms[0].ID); got.Uses != 2 {
		t.Errorf("once written: %d uses, want 2 (counted once)", got.Uses)
	}
}
