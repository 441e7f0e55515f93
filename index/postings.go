package index

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Postings holds the owners' memories as an index in memory, built from
// their digests (see Digest): what a search of an owner reads instead of
// its records or the Bleve index. A Bleve search of an owner walks the
// postings of the question's words in its whole shard; reading an owner's
// records costs a record a memory; here a search reads only what the
// question's terms hold in the owner's memories. It ranks as Records does,
// by the owner's own statistics, and keeps, per term, how many memories
// hold it, so a search walks each list once.
//
// Each owner's part (Owner) has its own lock: searches read side by side,
// one writer (the engine, following the store's change log) applies
// changes. An owner's memories are numbered by slot, in the order they were
// put; a small owner's are kept forward (each memory's terms, see
// forward.go), a larger one's mostly in an inverted segment (segment.go),
// with the memories put since kept forward until there are enough to merge.
type Postings struct {
	version byte // the digests' first byte

	mu     sync.RWMutex // owners
	owners map[string]*Owner

	wmu   sync.Mutex // writers of the tables below
	terms termTable
	words wordTable
	kinds atomic.Pointer[[]string] // by kind number; copied on write
	kind  map[string]uint8         // under wmu

	bytes atomic.Int64
}

// Sizes that decide an owner's layout.
const (
	// forwardMax is the most memories an owner keeps forward only: reading
	// that many memories' terms costs about what looking up and reading a
	// segment's lists does, and a segment's dictionary would cost more
	// memory than the terms it indexes.
	forwardMax = 256
	// tailMax is the most memories an owner with a segment keeps forward
	// before they are merged into a new one.
	tailMax = 64
	// otherKind is the kind number of kinds past the 254th: a search
	// filtering by kind admits them, and the engine checks their record.
	otherKind = 255
)

// NewPostings makes empty postings for digests made by this index's
// digester.
func (x *Index) NewPostings() *Postings {
	return &Postings{version: x.Digester().Version(), owners: map[string]*Owner{}, kind: map[string]uint8{}}
}

// Version is the first byte of the digests the postings were made from:
// those of another digester's (a storage encrypted or decrypted since)
// match nothing, and the postings are to be made again.
func (p *Postings) Version() byte { return p.version }

// Bytes is about how much memory the postings take.
func (p *Postings) Bytes() int { return int(p.bytes.Load()) + p.terms.bytes() + p.words.bytes() }

// Owner returns owner's part, or nil when the postings do not hold it.
func (p *Postings) Owner(owner string) *Owner {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.owners[owner]
}

// Hold returns owner's part, made empty if the postings did not hold it.
func (p *Postings) Hold(owner string) *Owner {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.owners[owner]
	if o == nil {
		o = &Owner{p: p}
		p.owners[owner] = o
	}
	return o
}

// Drop lets go of owner's part.
func (p *Postings) Drop(owner string) {
	p.mu.Lock()
	o := p.owners[owner]
	delete(p.owners, owner)
	p.mu.Unlock()
	if o != nil {
		o.mu.Lock()
		p.bytes.Add(-int64(o.size))
		o.ownerData = ownerData{dropped: true}
		o.mu.Unlock()
	}
}

// Owners is how many owners the postings hold.
func (p *Postings) Owners() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.owners)
}

// kindOf is kind's number, made if new. The caller holds wmu.
func (p *Postings) kindOf(kind string) uint8 {
	if k, ok := p.kind[kind]; ok {
		return k
	}
	var names []string
	if old := p.kinds.Load(); old != nil {
		names = *old
	}
	if len(names) >= otherKind {
		return otherKind
	}
	names = append(slices.Clip(names), kind)
	k := uint8(len(names) - 1)
	p.kind[kind] = k
	p.kinds.Store(&names)
	return k
}

// kindNumber is kind's number, or false when no memory has had it.
func (p *Postings) kindNumber(kind string) (uint8, bool) {
	if names := p.kinds.Load(); names != nil {
		if i := slices.Index(*names, kind); i >= 0 {
			return uint8(i), true
		}
	}
	return 0, false
}

// sessionHash stands for a session in the postings: 0 for none. A search
// of one session admits memories by it, and the engine checks the records
// it returns (two sessions may share a hash).
func sessionHash(s string) uint32 {
	if s == "" {
		return 0
	}
	if h := uint32(xxhash.Sum64String(s)); h != 0 {
		return h
	}
	return 1
}

// Owner is one owner's memories in Postings. Its methods lock it.
type Owner struct {
	p  *Postings
	mu sync.RWMutex
	ownerData
}

type ownerData struct {
	// By slot: each memory put is given the next slot; a memory whose
	// terms change gets a new one, and its old one is dead.
	ids   []uint64
	sess  []uint32 // sessionHash
	kind  []uint8
	flags []uint8
	sum   []uint32 // of the digest: same sum, same terms
	// What ranking needs of each memory (see Brief): its time, mentions,
	// importance and the turn that taught it.
	updated []int64
	ment    []uint16
	imp     []uint8
	turn    []uint32
	// order is the live slots by id.
	order []int32
	live  int
	// What the block shows of each slot that has it kept (flagShown):
	// shown[shownAt[slot]:][:shownLen[slot]], encoded (see Shown). A
	// rewritten text is appended; shownGarbage is the bytes of those
	// replaced and of dead slots.
	shown        []byte
	shownAt      []uint32
	shownLen     []uint16
	shownGarbage int

	seg *inverted // slots below seg.n; nil: none yet
	// fwd holds the forward encoding of each slot from seg.n on, at
	// fwdAt[slot - seg.n]; garbage is the bytes of dead ones.
	fwd     []byte
	fwdAt   []uint32
	garbage int

	// expires holds the expiry of the live slots that have one, in Unix
	// nanoseconds.
	expires map[int32]int64
	// The segment's postings of slots that died since it was made still
	// count in its lists: deadDF is how many of them hold each key, when
	// their terms were known as they died; blind is how many died with
	// terms unknown (their memory was rewritten or purged; blindSlots are
	// they): a search then counts each list's live postings, until Settle
	// finds their terms in the lists (blindSince: when the first of them
	// died).
	deadDF     map[uint32]uint32
	blind      int
	blindSlots []int32
	blindSince time.Time
	dead       int // dead slots below seg.n

	size    int  // bytes, as last accounted in Postings.bytes
	dropped bool // Postings.Drop let it go: held no more
}

const (
	flagLive     = 1 << iota
	flagExpiring // has an entry in expires
	flagShown    // its text is kept (see Shown)
	flagFramed   // said in a story or a role-play
)

// Live is how many memories the owner has in the postings.
func (o *Owner) Live() int {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.live
}

// Held reports whether the postings still hold the owner (see Drop).
func (o *Owner) Held() bool {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return !o.dropped
}

// digestSum is the sum Owner keeps of a digest.
func digestSum(d []byte) uint32 { return uint32(xxhash.Sum64(d)) }

// putScratch is what Put works in: a memory's terms.
var putScratch = sync.Pool{New: func() any { return new([2][]term) }}

// Put adds memory id with its digest and attributes, replacing what it
// had. It reports false, adding nothing, for a digest of another digester
// or analyzer: make it again from the text.
func (o *Owner) Put(id uint64, digest []byte, a Attrs) bool {
	kind, session, expires := a.Kind, a.Session, a.Expires
	p := o.p
	if len(digest) == 0 || digest[0] != p.version {
		return false
	}
	sum := digestSum(digest)
	ts := putScratch.Get().(*[2][]term)
	defer putScratch.Put(ts)

	p.wmu.Lock()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dropped {
		p.wmu.Unlock()
		return true
	}
	at, found := o.search(id)
	shown := o.encodeShown(&a)
	if found && o.sum[o.order[at]] == sum {
		// The same terms: what a restatement or a use rewrites.
		slot := o.order[at]
		o.sess[slot], o.kind[slot] = sessionHash(session), p.kindOf(kind)
		p.wmu.Unlock()
		o.setExpiry(slot, expires)
		o.setAttrs(slot, &a)
		o.setShown(slot, shown, &a)
		return true
	}
	ok := digestTerms(digest[1:], p.terms.number, ts)
	k := p.kindOf(kind)
	p.wmu.Unlock()
	if !ok {
		return false
	}
	if len(o.ids) >= maxSlots {
		return true // no budget holds as many
	}
	slot := int32(len(o.ids))
	if found {
		o.kill(o.order[at], nil)
		o.order[at] = slot
	} else {
		o.order = slices.Insert(o.order, at, slot)
	}
	o.ids = append(o.ids, id)
	o.sess = append(o.sess, sessionHash(session))
	o.kind = append(o.kind, k)
	o.flags = append(o.flags, flagLive)
	o.sum = append(o.sum, sum)
	o.updated, o.ment, o.imp, o.turn = append(o.updated, 0), append(o.ment, 0), append(o.imp, 0), append(o.turn, 0)
	o.shownAt, o.shownLen = append(o.shownAt, 0), append(o.shownLen, 0)
	o.setAttrs(slot, &a)
	o.setShown(slot, shown, &a)
	o.fwdAt = append(o.fwdAt, uint32(len(o.fwd)))
	o.fwd = appendForward(o.fwd, ts)
	o.live++
	o.setExpiry(slot, expires)
	return true
}

// maxSlots is how many memories (live or dead) an owner's slots number:
// a posting keeps its slot in 24 bits.
const maxSlots = 1 << 24

// Delete removes memory id, if it is there. digest is what its record
// holds now (nil if none, or it is gone): when it is the one put, the
// memory's terms are known and the segment's counts stay exact.
func (o *Owner) Delete(id uint64, digest []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	at, ok := o.search(id)
	if !ok {
		return
	}
	slot := o.order[at]
	if len(digest) == 0 || digest[0] != o.p.version || digestSum(digest) != o.sum[slot] {
		digest = nil
	}
	o.kill(slot, digest)
	o.order = slices.Delete(o.order, at, at+1)
}

// search finds id in order: its position, or where it would go.
func (o *Owner) search(id uint64) (int, bool) {
	lo, hi := 0, len(o.order)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if o.ids[o.order[m]] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(o.order) && o.ids[o.order[lo]] == id
}

// kill marks a live slot dead. digest, when not nil, holds its terms.
func (o *Owner) kill(slot int32, digest []byte) {
	o.flags[slot] &^= flagLive
	o.live--
	o.setExpiry(slot, nil)
	o.dropShown(slot)
	if o.seg == nil || slot >= o.seg.n {
		at := o.fwdAt[slot-o.segN()]
		end := len(o.fwd)
		if int(slot-o.segN())+1 < len(o.fwdAt) {
			end = int(o.fwdAt[slot-o.segN()+1])
		}
		o.garbage += end - int(at)
		return
	}
	o.dead++
	var ts [2][]term
	if digest == nil || !digestTerms(digest[1:], o.p.lookupTerm, &ts) {
		o.blind++
		o.blindSlots = append(o.blindSlots, slot)
		return
	}
	if o.deadDF == nil {
		o.deadDF = map[uint32]uint32{}
	}
	for f := range ts {
		for _, t := range ts[f] {
			o.deadDF[uint32(t>>8)<<1|uint32(f)]++
		}
	}
}

// lookupTerm is a term's number; only terms a memory holds are asked.
func (p *Postings) lookupTerm(hash uint32) uint32 {
	id, _ := p.terms.lookup(hash)
	return id
}

func (o *Owner) segN() int32 {
	if o.seg == nil {
		return 0
	}
	return o.seg.n
}

func (o *Owner) setExpiry(slot int32, expires *time.Time) {
	if expires == nil {
		if o.flags[slot]&flagExpiring != 0 {
			delete(o.expires, slot)
			o.flags[slot] &^= flagExpiring
		}
		return
	}
	if o.expires == nil {
		o.expires = map[int32]int64{}
	}
	o.expires[slot] = expires.UnixNano()
	o.flags[slot] |= flagExpiring
}
