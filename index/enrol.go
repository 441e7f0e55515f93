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

func (s *shard) knownHeld(owner string) bool {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	return s.held[owner]
}

func (s *shard) setHeld(owners []string, reset bool) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	if reset || s.held == nil {
		s.held = make(map[string]bool, len(owners))
	}
	for _, o := range owners {
		s.held[o] = true
	}
}

// Holds reports whether owner is enrolled in the index (see Doc.Enrol):
// whether a search of the index finds all of the owner's memories, up to
// the shard's applied change. It is false while the owner's shard is being
// rebuilt.
func (x *Index) Holds(owner string) (bool, error) {
	s, unlock, err := x.shardFor(owner)
	if err != nil {
		return false, err
	}
	defer unlock()
	if s.state != Ready || s.idx == nil {
		return false, nil
	}
	if s.knownHeld(owner) {
		return true, nil
	}
	v, err := s.idx.GetInternal(enrolKey(owner))
	if err != nil {
		return false, fmt.Errorf("reading index shard %s: %w", s.path, err)
	}
	if v != nil {
		s.setHeld([]string{owner}, false)
	}
	return v != nil, nil
}
