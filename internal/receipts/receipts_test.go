package receipts

import (
	"fmt"
	"runtime"
	"testing"
)

func TestBookIsBoundedAndNewestFirst(t *testing.T) {
	var b Book
	for i := range PerOwner + 5 {
		b.Record("a", Receipt{Tokens: i})
	}
	got := b.Recent("a")
	if len(got) != PerOwner || got[0].Tokens != PerOwner+4 || got[PerOwner-1].Tokens != 5 {
		t.Errorf("an owner's receipts: %d, newest %d, oldest %d", len(got), got[0].Tokens, got[len(got)-1].Tokens)
	}
	if got[0].MemoryIDs == nil {
		t.Error("memory_ids is null, want []")
	}
	for i := range Owners {
		b.Record(fmt.Sprint("o", i), Receipt{})
	}
	if len(b.Recent("a")) != 0 || len(b.Recent("o1")) != 1 || len(b.owners) != Owners {
		t.Errorf("past %d owners the least recent is not forgotten: %d owners", Owners, len(b.owners))
	}
	b.Forget("o1")
	if len(b.Recent("o1")) != 0 || len(b.Recent("nobody")) != 0 {
		t.Error("a forgotten owner still has receipts")
	}
}

// TestBookIsBoundedInBytes: however many ids each request injected, the
// book holds at most Budget bytes: a receipt keeps its first MaxIDs ids
// (and how many there were), and past Budget the least recently seen
// owners go. Before, a receipt kept every id, and 4,096 owners of 32
// receipts held whatever max_items gave them (75 MiB at 64 ids each).
func TestBookIsBoundedInBytes(t *testing.T) {
	var b Book
	before := heapInUse()
	for o := range Owners {
		for range PerOwner {
			ids := make([]uint64, 100) // each request's own, as the proxy's are
			for i := range ids {
				ids[i] = uint64(o*1000 + i)
			}
			b.Record(fmt.Sprint("owner", o), Receipt{MemoryIDs: ids})
		}
	}
	if grew := heapInUse() - before; grew > 2*Budget {
		t.Errorf("the book holds %d MiB; its budget is %d MiB", grew>>20, Budget>>20)
	}
	runtime.KeepAlive(&b) // measured alive
	last := b.Recent(fmt.Sprint("owner", Owners-1))
	if len(last) != PerOwner || len(last[0].MemoryIDs) != MaxIDs || last[0].Injected != 100 || last[0].MemoryIDs[0] != uint64((Owners-1)*1000) {
		t.Errorf("the newest owner's receipts: %d, the newest with %d ids of %d", len(last), len(last[0].MemoryIDs), last[0].Injected)
	}
	if len(b.Recent("owner0")) != 0 {
		t.Error("the least recently seen owner was kept past the budget")
	}
	// The count the budget is held to is what the receipts hold.
	sum := 0
	for _, el := range b.owners {
		rg := el.Value.(*ring)
		n := ownerBytes
		for i := range rg.items {
			n += rg.items[i].bytes()
		}
		sum += n
	}
	if sum != b.bytes || b.bytes > Budget {
		t.Errorf("the book counts %d bytes, its receipts hold %d; budget %d", b.bytes, sum, Budget)
	}
}

func heapInUse() int {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int(ms.HeapAlloc)
}
