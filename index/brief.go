package index

import "time"

// What the postings keep of each memory besides its terms, so a search
// can filter and rank its hits without reading their records.

// Attrs are what the postings keep of a memory besides its terms: what
// filters a search, what ranks its hits (Brief) and when it expires.
type Attrs struct {
	Kind, Session        string
	Expires              *time.Time
	Updated              time.Time
	Mentions, Importance int
	// Turn is the key of the transcript turn the memory is or was learned
	// from ("" for none).
	Turn string
	// Content is what the block shows of it (see Shown; nil: not known,
	// its record is read when it is returned), and Framed whether it was
	// said in a story or a role-play.
	Content []byte
	Framed  bool
}

// Brief is what ranking needs of a hit, from the postings: a search
// ranks its hits without reading their records.
type Brief struct {
	Kind                 string
	Updated              time.Time
	Mentions, Importance int
	// Turn is TurnHash of the memory's Attrs.Turn (0 for none): a search
	// leaving a turn out checks the records whose hash is that turn's.
	Turn uint32
}

// TurnHash stands for a turn's key in a Brief.
func TurnHash(turn string) uint32 {
	if turn == "" {
		return 0
	}
	return sessionHash(turn)
}

// brief is slot's Brief.
func (o *Owner) brief(slot int32) Brief {
	b := Brief{Updated: time.Unix(0, o.updated[slot]).UTC(), Mentions: int(o.ment[slot]), Importance: int(o.imp[slot]), Turn: o.turn[slot]}
	if k := o.kind[slot]; k != otherKind {
		if names := o.p.kinds.Load(); names != nil && int(k) < len(*names) {
			b.Kind = (*names)[k]
		}
	}
	return b
}

// setAttrs keeps what ranks slot.
func (o *Owner) setAttrs(slot int32, a *Attrs) {
	o.updated[slot], o.ment[slot] = a.Updated.UnixNano(), uint16(min(a.Mentions, 1<<16-1))
	o.imp[slot], o.turn[slot] = uint8(min(max(a.Importance, 0), 255)), TurnHash(a.Turn)
}
