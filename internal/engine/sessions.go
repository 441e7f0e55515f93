package engine

import (
	"cmp"
	"slices"
	"time"

	"github.com/caddy-memory/memory/store"
)

// Session is one conversation of an owner as its transcript holds it.
type Session struct {
	// Session is its id: the client's session, or the fingerprint the
	// proxy made of the conversation's first messages ("c-531c633c...").
	Session string
	// Turns counts its transcript turns; First and Last are when its
	// first and latest turns were stored.
	Turns       int
	First, Last time.Time
	// Opening is its first turn, whole: what the conversation began with.
	Opening *store.Memory
}

// Sessions lists owner's conversations that have active transcript turns,
// the most recently active first.
func (e *Engine) Sessions(owner string) ([]Session, error) { return e.manager.sessions(owner) }

func (mg *manager) sessions(owner string) ([]Session, error) {
	by := map[string]*Session{}
	err := mg.store.View(func(tx *store.Tx) error {
		return tx.PeekAll(owner, func(pk *store.Peek) error {
			if !pk.Active(tx.Now()) {
				return nil
			}
			b, err := pk.Brief()
			if err != nil || b.Kind != "turn" {
				return err
			}
			id := pk.Session()
			s := by[id]
			if s == nil {
				// Turns are stored as they are said, so the first in id
				// order opened the conversation.
				m, err := pk.Memory()
				if err != nil {
					return err
				}
				s = &Session{Session: id, First: m.CreatedAt, Opening: m}
				by[id] = s
			}
			s.Turns++
			for _, t := range []time.Time{s.First, b.Updated} {
				if t.After(s.Last) {
					s.Last = t
				}
			}
			return nil
		})
	})
	out := make([]Session, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Session) int {
		return cmp.Or(b.Last.Compare(a.Last), cmp.Compare(a.Session, b.Session))
	})
	return out, err
}
