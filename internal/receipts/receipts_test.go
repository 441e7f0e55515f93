package receipts

import (
	"fmt"
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
