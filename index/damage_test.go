package index_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/index"
)

// TestDamagedShardIsMarkedUntilRebuilt: a shard whose segment fails as it
// is read answers ErrDamaged (once told, the engine searches records),
// holds no owner, takes no change, is reported once, and is Ready again
// once rebuilt; the other shard is untouched.
func TestDamagedShardIsMarkedUntilRebuilt(t *testing.T) {
	dir := t.TempDir()
	x := openIndex(t, dir, 2)
	reported := make(chan int, 4)
	x.OnDamaged(func(shard int, err error) { reported <- shard })
	o := ownersInShards(t, x, 2)
	bad := x.ShardOf(o[0])
	apply(t, x, 1, index.Doc{ID: 1, Owner: o[0], Content: "damaged shard text"}, index.Doc{Owner: o[0], Enrol: true},
		index.Doc{ID: 2, Owner: o[1], Content: "healthy shard text"})
	segments, _ := filepath.Glob(filepath.Join(shardDir(dir, bad), "store", "*.zap"))
	if len(segments) == 0 {
		t.Fatal("no segment to damage")
	}
	for _, p := range segments {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt(bytes.Repeat([]byte{0x5a}, int(fi.Size())), 0) // in place: the mapping sees it
		f.Close()
	}

	for range 2 {
		if _, err := x.Search(context.Background(), index.Query{Owner: o[0], Text: "text"}); !errors.Is(err, index.ErrDamaged) {
			t.Fatalf("search of the damaged shard: %v, want ErrDamaged", err)
		}
	}
	select {
	case s := <-reported:
		if s != bad {
			t.Errorf("reported shard %d, want %d", s, bad)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the damage was not reported")
	}
	if held, err := x.Holds(o[0]); held || err != nil {
		t.Errorf("a damaged shard holds its owner: %v %v", held, err)
	}
	apply(t, x, 2, index.Doc{ID: 3, Owner: o[0], Content: "more text"})
	if applied, st := x.Applied(bad); applied != 1 || st != index.Damaged {
		t.Errorf("damaged shard took a change: applied %d state %v", applied, st)
	}
	if got := find(t, x, index.Query{Owner: o[1], Text: "text"}); !sameSet(got, 2) {
		t.Errorf("the healthy shard answers %v", got)
	}

	err := x.Rebuild(bad, 3, func(add func(index.Doc) error) error {
		if err := add(index.Doc{ID: 1, Owner: o[0], Content: "damaged shard text"}); err != nil {
			return err
		}
		return add(index.Doc{Owner: o[0], Enrol: true})
	})
	if err != nil {
		t.Fatal(err)
	}
	if applied, st := x.Applied(bad); applied != 3 || st != index.Ready {
		t.Errorf("rebuilt shard: applied %d state %v", applied, st)
	}
	if got := find(t, x, index.Query{Owner: o[0], Text: "text"}); !sameSet(got, 1) {
		t.Errorf("the rebuilt shard answers %v", got)
	}
	if len(reported) != 0 {
		t.Errorf("the damage was reported %d more times", len(reported))
	}
}

// TestSegmentDamagedAtRestIsFoundAtOpen: one byte changed in the middle of
// a segment (where no open reads, only some later search) is found at
// open by the segment's checksum: the shard starts again, to be refilled
// from the store, instead of serving until a search meets the damage.
func TestSegmentDamagedAtRestIsFoundAtOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x := openIndex(t, dir, 1)
	for i := uint64(1); i <= 5; i++ {
		apply(t, x, i, index.Doc{ID: i, Owner: "zqowner", Content: "User keeps zqbox number " + strings.Repeat("x", int(i))})
	}
	x.Close()
	x = openIndex(t, dir, 1)
	if applied, _ := x.Applied(0); applied != 5 {
		t.Fatalf("a sound shard reopened has applied %d, want 5", applied)
	}
	x.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "shard-000", "store", "*.zap"))
	if len(segs) == 0 {
		t.Fatal("no segment")
	}
	for _, seg := range segs {
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x40
		if err := os.WriteFile(seg, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	x = openIndex(t, dir, 1)
	if applied, _ := x.Applied(0); applied != 0 {
		t.Errorf("a shard with a damaged segment opened with %d applied; it must start again", applied)
	}
}
