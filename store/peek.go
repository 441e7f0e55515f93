package store

import (
	"errors"
	"fmt"
	"time"
)

// Peek is what a search reads of each memory of an owner before it knows
// which ones it keeps: the head of the record, not copied, and the rest
// only on demand (Memory). Its bytes are the store file's own, valid only
// inside the transaction that read them.
type Peek struct {
	ID uint64
	// Pinned and Importance are the record's (see Memory).
	Pinned           bool
	Importance       int
	v3               bool // the record is codecV3
	session, terms   []byte
	expires, deleted optTime
	raw              []byte
	body             []byte  // raw after the head
	mem              *Memory // decoded: a record of an earlier version, or by Memory
}

type optTime struct {
	set bool
	t   time.Time
}

// Active is Memory.Active.
func (p *Peek) Active(now time.Time) bool {
	return !p.deleted.set && (!p.expires.set || now.Before(p.expires.t))
}

// InSession reports whether the memory belongs to session.
func (p *Peek) InSession(session string) bool { return string(p.session) == session }

// Session is the memory's session.
func (p *Peek) Session() string { return string(p.session) }

// Expires is when the memory expires, or nil.
func (p *Peek) Expires() *time.Time { return p.expiresAt() }

// Terms is the memory's search digest, as the store's digest function made
// it when the memory was last written; nil for records written without one.
func (p *Peek) Terms() []byte {
	if len(p.terms) == 0 {
		return nil
	}
	return p.terms
}

// Memory decodes the whole record, once.
func (p *Peek) Memory() (*Memory, error) {
	if p.mem != nil {
		return p.mem, nil
	}
	m := new(Memory)
	if err := decodeMemory(p.raw, m); err != nil {
		return nil, fmt.Errorf("decoding memory %d: %w", p.ID, err)
	}
	p.mem = m
	return m, nil
}

// Brief is what a search ranks and filters memories by, read from the
// record without decoding its text (or taken from a decoded Memory).
type Brief struct {
	Kind       string
	Updated    time.Time
	Mentions   int
	Importance int
	// The record's key and Meta["turn"], its bytes (good as long as the
	// Peek's), or the decoded memory.
	key, turn []byte
	mem       *Memory
}

// BriefOf is the Brief of a decoded memory.
func BriefOf(m *Memory) Brief {
	return Brief{Kind: m.Kind, Updated: m.UpdatedAt, Mentions: m.Mentions, Importance: m.Importance, mem: m}
}

// FromTurn reports whether the memory was learned from the turn whose
// transcript has key turn: it is that transcript (its key), or a fact
// pointing to it (Meta["turn"]).
func (b *Brief) FromTurn(turn string) bool {
	if b.mem != nil {
		return b.mem.Key == turn || b.mem.Meta["turn"] == turn
	}
	return string(b.key) == turn || string(b.turn) == turn
}

// Turn is what FromTurn compares: the memory's Meta["turn"] (a fact
// learned from a turn), else its key (a transcript's is its turn's).
func (b *Brief) Turn() string {
	if b.mem != nil {
		if t := b.mem.Meta["turn"]; t != "" {
			return t
		}
		return b.mem.Key
	}
	if len(b.turn) > 0 {
		return string(b.turn)
	}
	return string(b.key)
}

// Brief reads the peeked memory's Brief.
func (p *Peek) Brief() (Brief, error) {
	if p.mem != nil {
		return BriefOf(p.mem), nil
	}
	b := Brief{Importance: p.Importance}
	d := decoder{b: p.body}
	d.bytes() // owner
	kind := d.bytes()
	b.key = d.bytes()
	d.bytes() // content
	d.bytes() // context
	d.bytes() // ref
	for n := d.count(); n > 0 && !d.err; n-- {
		if k, v := d.bytes(), d.bytes(); string(k) == "turn" {
			b.turn = v
		}
	}
	d.time() // created
	b.Updated = d.time()
	b.Mentions = int(d.uvarint())
	if d.err {
		return Brief{}, fmt.Errorf("decoding memory %d: %w", p.ID, errCorrupt)
	}
	// Most memories are turns: their kind is not copied.
	if b.Kind = kindTurn; string(kind) != b.Kind {
		b.Kind = string(kind)
	}
	return b, nil
}

func (p *Peek) read(raw []byte) error {
	*p = Peek{raw: raw}
	if len(raw) == 0 || raw[0] != codecV2 && raw[0] != codecV3 {
		// Written by an earlier version: no head to read on its own.
		m := new(Memory)
		if err := decodeMemory(raw, m); err != nil {
			return err
		}
		p.ID, p.session, p.mem = m.ID, []byte(m.Session), m
		p.Pinned, p.Importance = m.Pinned, m.Importance
		if m.ExpiresAt != nil {
			p.expires = optTime{true, *m.ExpiresAt}
		}
		if m.DeletedAt != nil {
			p.deleted = optTime{true, *m.DeletedAt}
		}
		return nil
	}
	p.v3 = raw[0] == codecV3
	d := decoder{b: raw[1:]}
	if err := p.head(&d); err != nil {
		return err
	}
	p.body = d.b
	return nil
}

// head reads the head of a codecV2 or codecV3 record (p.v3), after its
// version byte.
func (p *Peek) head(d *decoder) error {
	p.ID = d.uvarint()
	p.session = d.bytes()
	p.expires, p.deleted = d.optTime(), d.optTime()
	p.terms = d.bytes()
	if p.v3 {
		flags := d.byte()
		p.Pinned, p.Importance = flags&flagPinned != 0, int(d.byte())
	}
	if d.err {
		return errCorrupt
	}
	return nil
}

func (p *Peek) expiresAt() *time.Time { return p.expires.ptr() }
func (p *Peek) deletedAt() *time.Time { return p.deleted.ptr() }

func (o optTime) ptr() *time.Time {
	if !o.set {
		return nil
	}
	return &o.t
}

// Peek reads memory id of owner as PeekAll does: good until the
// transaction ends, decoded only as far as asked. ErrNotFound when owner
// has no such memory.
func (t *Tx) Peek(owner string, id uint64) (*Peek, error) {
	pt, err := t.Partition(owner)
	if err != nil {
		return nil, err
	}
	return pt.Peek(id)
}

// Partition is one owner's memories in a transaction: reading several of
// them finds the owner's buckets once.
type Partition struct {
	t          *Tx
	owner      string
	mem, usage *kvBucket
}

// Partition returns owner's partition; ErrNotFound when it has none.
func (t *Tx) Partition(owner string) (*Partition, error) {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return nil, err
	}
	return &Partition{t: t, owner: owner, mem: ob.Bucket(bucketMem), usage: ob.Bucket(bucketUsage)}, nil
}

// Peek is Tx.Peek in the partition.
func (pt *Partition) Peek(id uint64) (*Peek, error) {
	key := encodeU64(id)
	raw := pt.mem.Get(key)
	if raw == nil {
		return nil, ErrNotFound
	}
	raw, err := pt.t.open(labelMemory, pt.owner, key, raw)
	if err != nil {
		return nil, fmt.Errorf("reading memory %d: %w", id, err)
	}
	p := new(Peek)
	if err := p.read(raw); err != nil {
		return nil, fmt.Errorf("decoding memory %d: %w", id, err)
	}
	return p, nil
}

// Usage is Tx.Usage in the partition.
func (pt *Partition) Usage(id uint64) Usage {
	if pt.usage != nil {
		if v := pt.usage.Get(encodeU64(id)); v != nil {
			return decodeUsage(v)
		}
	}
	return Usage{}
}

// CountAtMost is the number of memories of owner (deleted ones included),
// counted only as far as limit+1: an owner with more costs a short walk of
// keys.
func (t *Tx) CountAtMost(owner string, limit int) (int, error) {
	ob, err := t.ownerBucket(owner, false)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	c := ob.Bucket(bucketMem).Cursor()
	n := 0
	for k, _ := c.First(); k != nil && n <= limit; k, _ = c.Next() {
		n++
	}
	return n, nil
}

// PeekAll calls fn with a Peek of every memory of owner (deleted ones
// included), in id order. fn must not keep the Peek past its call; a copy
// is good until the transaction ends. A damaged record is passed over and
// counted (Skipped), whether its head does not read or fn finds the rest
// does not (an error wrapping ErrRecordDamaged).
func (t *Tx) PeekAll(owner string, fn func(*Peek) error) error {
	ob, err := t.ownerBucket(owner, false)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	c := ob.Bucket(bucketMem).Cursor()
	var p Peek
	for k, v := c.First(); k != nil; k, v = c.Next() {
		v, err := t.open(labelMemory, owner, k, v)
		if err == nil {
			err = p.read(v)
		}
		if err == nil {
			err = fn(&p)
		}
		if t.skip(err) {
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Shown is what the block shows of the peeked memory: its content (the
// record's bytes, good as long as the Peek's), and whether it was said in
// a story or a role-play (Meta["framed"]), read without decoding the rest.
func (p *Peek) Shown() (content []byte, framed bool, err error) {
	if p.mem != nil {
		return []byte(p.mem.Content), p.mem.Meta["framed"] != "", nil
	}
	d := decoder{b: p.body}
	d.bytes() // owner
	d.bytes() // kind
	d.bytes() // key
	content = d.bytes()
	d.bytes() // context
	d.bytes() // ref
	for n := d.count(); n > 0 && !d.err; n-- {
		if k, v := d.bytes(), d.bytes(); string(k) == "framed" {
			framed = len(v) > 0
		}
	}
	if d.err {
		return nil, false, fmt.Errorf("decoding memory %d: %w", p.ID, errCorrupt)
	}
	return content, framed, nil
}
