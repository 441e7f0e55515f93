package index

import (
	"fmt"

	"github.com/blevesearch/bleve/v2"
)

// An owner is enrolled in the index once it outgrows searching its records
// (see Holds); the mark is an internal key of its shard, written in the
// batch that adds its memories, so a rebuilt or lost shard forgets it with
// them.
func enrolKey(owner string) []byte { return []byte("holds:" + owner) }

// enrol marks owner in batch b and adds it to enrolled, the owners the
// shard is told it holds once b is written.
func enrol(b *bleve.Batch, owner string, enrolled []string) []string {
	b.SetInternal(enrolKey(owner), []byte{1})
	return append(enrolled, owner)
}

// heldUnknownMax bounds the owners a shard remembers it does not hold:
// each learned turn of a small owner asks, and an answer from the cache
// does not reopen a parked shard (park.go).
const heldUnknownMax = 4096

// knownHeld is whether owner is enrolled, if the shard remembers.
func (s *shard) knownHeld(owner string) (held, known bool) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	held, known = s.held[owner]
	return held, known
}

// setHeld remembers owners as enrolled (after the batch that enrols them,
// or a rebuild, with reset, which forgets the rest).
func (s *shard) setHeld(owners []string, reset bool) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	if reset || s.held == nil {
		s.held = make(map[string]bool, len(owners))
		s.notHeld = 0
	}
	for _, o := range owners {
		if held, known := s.held[o]; known && !held {
			s.notHeld--
		}
		s.held[o] = true
	}
}

// setNotHeld remembers that owner is not enrolled, while there is room:
// only an enrolling batch or a rebuild changes that, and both call setHeld.
func (s *shard) setNotHeld(owner string) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	if s.held == nil {
		s.held = map[string]bool{}
	}
	if _, known := s.held[owner]; !known && s.notHeld < heldUnknownMax {
		s.held[owner] = false
		s.notHeld++
	}
}

// Holds reports whether owner is enrolled in the index (see Doc.Enrol):
// whether a search of the index finds all of the owner's memories, up to
// the shard's applied change. It is false while the owner's shard is being
// rebuilt.
func (x *Index) Holds(owner string) (bool, error) {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.closed {
		return false, ErrClosed
	}
	s := x.shards[x.ShardOf(owner)]
	s.mu.RLock()
	ready := s.state == Ready && (s.idx != nil || s.parked)
	s.mu.RUnlock()
	if !ready {
		return false, nil
	}
	if held, known := s.knownHeld(owner); known {
		return held, nil
	}
	x.acquire(s)
	defer s.mu.RUnlock()
	if s.state != Ready || s.idx == nil {
		return false, nil
	}
	v, err := s.idx.GetInternal(enrolKey(owner))
	if err != nil {
		return false, fmt.Errorf("reading index shard %s: %w", s.path, err)
	}
	if v != nil {
		s.setHeld([]string{owner}, false)
	} else {
		s.setNotHeld(owner)
	}
	return v != nil, nil
}
