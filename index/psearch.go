package index

import (
	"math/bits"
	"slices"
	"sync"
	"time"
)

// Filter says which memories a search may return: all the owner's active
// ones count towards its statistics.
type Filter struct {
	Session       string
	OnlySession   bool
	Kinds, Except []string
}

// Known is what a search that read all of an owner's memories knows of the
// question's terms, for its floor (NewFloor): the scorer weighed by the
// owner's own counts, the terms each hit holds, and the terms any active
// memory of the owner holds in its content (in any session).
type Known struct {
	scorer *Scorer
	found  map[uint64]termSet
	has    uint32
}

// termSet is the query's terms a memory holds, by field.
type termSet struct{ content, context uint32 }

// searchSpace is a search's working space over a segment's slots, reused:
// a large owner's would otherwise be most of what a search allocates.
type searchSpace struct {
	acc     []accum
	touched []int32
	tail    []tailMatch
	cands   []int32   // walkSegment's, probing
	kept    []accum   // walkSegment's: the candidates' sums
	heap    []float64 // threshold's
}

// accum is what a segment's walk has found of one memory: its score and
// terms side by side, so a posting costs one cache line, not two.
type accum struct {
	score float64
	terms uint64 // the query's terms found: content bit i, context bit 32+i
}

type tailMatch struct {
	slot int32
	m    Match
}

var spacePool = sync.Pool{New: func() any { return new(searchSpace) }}

// Search ranks the owner's active memories that hold the scorer's terms
// (from NewScorer; its statistics are set here), and returns the best size
// that f admits, best first (newer first on ties), as Records.Top does,
// with what the floor needs to know, each hit's Brief and what the block
// shows of it.
func (o *Owner) Search(s *Scorer, f Filter, now time.Time, size int) ([]Hit, *Known, []Brief, []Shown) {
	hits, known, briefs, shown, _ := o.searchWith(s, f, now, size, true)
	return hits, known, briefs, shown
}

// searchWith is Search; without prune, it walks every posting of the
// question's lists (what pruning must agree with). pruned tells whether
// some list was only probed.
func (o *Owner) searchWith(s *Scorer, f Filter, now time.Time, size int, prune bool) (hits []Hit, kn *Known, briefs []Brief, shown []Shown, pruned bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	nowNano := now.UnixNano()
	// The query's terms by number, per field, and their keys. Terms are
	// resolved under the owner's lock: a term its memories hold was
	// numbered before they were put.
	n := len(s.Matcher.Terms)
	var qbuf [2][32]qterm
	var q [2][]qterm
	var keys [32]uint32
	var known uint32 // terms some memory (of any owner) has held
	for _, h := range s.hashes {
		id, ok := o.p.terms.lookup(h.hash)
		if !ok {
			continue
		}
		i := bits.TrailingZeros32(h.bit)
		keys[i] = id << 1
		known |= h.bit
		for fl := range 2 {
			q[fl] = append(qbuf[fl][:len(q[fl])], qterm{id, uint8(i)})
		}
	}
	for fl := range 2 {
		slices.SortFunc(q[fl], func(a, b qterm) int { return int(a.id) - int(b.id) })
	}

	lists, counts := o.segmentLists(&keys, known, n, nowNano)
	sp := spacePool.Get().(*searchSpace)
	defer spacePool.Put(sp)
	adm := o.admitter(f)
	sp.tail = sp.tail[:0]
	if known != 0 {
		o.matchTail(sp, &q, &adm, nowNano, &counts)
	}
	s.UseCounts(&counts)
	pruned = o.walkSegment(sp, s, &lists, n, &adm, nowNano, size, prune)
	top := o.best(sp, s, &adm, nowNano, make([]ranked, 0, size))
	kn = &Known{scorer: s, found: make(map[uint64]termSet, len(top))}
	for i := range n {
		if counts.DF[0][i] > 0 {
			kn.has |= 1 << i
		}
	}
	hits, briefs, shown = make([]Hit, len(top)), make([]Brief, len(top)), make([]Shown, len(top))
	for i, r := range top {
		hits[i], briefs[i], shown[i] = r.Hit, o.brief(r.slot), o.shownFor(r.slot)
		kn.found[r.ID] = r.set
	}
	return hits, kn, briefs, shown, pruned
}

// active reports whether the memory in slot is live and not expired at
// nowNano.
func (o *Owner) active(slot int32, nowNano int64) bool {
	fl := o.flags[slot]
	return fl&flagLive != 0 && (fl&flagExpiring == 0 || nowNano < o.expires[slot])
}

// segmentLists returns the segment's lists of the query's n terms (known
// and keyed as Search resolved them), per field, and the owner's counts
// of them: its active memories, and how many of those in the segment hold
// each term: the list's count, less the dead known to hold it; or, while
// dead ones of unknown terms or expired ones are in it, counted.
func (o *Owner) segmentLists(keys *[32]uint32, known uint32, n int, nowNano int64) (lists [2][32]entry, counts Counts) {
	expired := 0
	for slot, t := range o.expires {
		if nowNano >= t && o.flags[slot]&flagLive != 0 {
			expired++
		}
	}
	counts.Docs = uint64(o.live - expired)
	exact := o.blind == 0 && expired == 0
	for fl := range 2 {
		for i := range n {
			if known&(1<<i) == 0 {
				continue
			}
			key := keys[i] | uint32(fl)
			e, ok := o.seg.lookup(key)
			if !ok {
				continue
			}
			lists[fl][i] = e
			if exact {
				counts.DF[fl][i] = uint64(e.postings - o.deadDF[key])
				continue
			}
			eachPosting(e.list, func(slot int32, _ uint16) {
				if o.active(slot, nowNano) {
					counts.DF[fl][i]++
				}
			})
		}
	}
	return lists, counts
}

// matchTail matches the query's terms q in the memories kept forward,
// counting them in counts, and appends those adm admits to sp.tail.
func (o *Owner) matchTail(sp *searchSpace, q *[2][]qterm, adm *admitter, nowNano int64, counts *Counts) {
	base := o.segN()
	for i, at := range o.fwdAt {
		slot := base + int32(i)
		if !o.active(slot, nowNano) {
			continue
		}
		var m Match
		if !matchForward(o.fwd[at:], q, &m) {
			continue
		}
		for fl, set := range [2]uint32{m.Content, m.Context} {
			for ; set != 0; set &= set - 1 {
				counts.DF[fl][bits.TrailingZeros32(set)]++
			}
		}
		if adm.admits(o, slot) {
			sp.tail = append(sp.tail, tailMatch{slot, m})
		}
	}
}

// walkSegment walks the segment's lists of the query's n terms,
// accumulating each memory's score and terms in sp.acc (and the slots
// touched in sp.touched). Whether a memory is active is asked once it is
// touched (best), not at every posting.
//
// The lists are walked heaviest first, in the order Scorer.Score sums a
// memory's clauses, whether or not the walk prunes: pruning changes no
// score, and a memory scores what its record would. With prune, a large owner's common words are not walked whole:
// once the size-th best memory touched so far (that the filter admits)
// scores more than any memory the remaining lists alone could make, no
// memory they hold is new to the top, and they are only probed for the
// memories touched so far that could still reach it (probeList), stepping
// over the runs of postings that hold none of them.
func (o *Owner) walkSegment(sp *searchSpace, s *Scorer, lists *[2][32]entry, n int, adm *admitter, nowNano int64, size int, prune bool) (pruned bool) {
	segN := int(o.segN())
	if len(sp.acc) < segN {
		sp.acc = make([]accum, segN)
	}
	sp.touched = sp.touched[:0]
	var order [64]walkList
	m := 0
	for _, k := range s.order { // heaviest first, as Score sums
		fl, i := int(k>>5), int(k&31)
		e := &lists[fl][i]
		if i >= n || e.list == nil {
			continue
		}
		w := s.clause[fl][i]
		order[m] = walkList{e: e, w: w, bit: uint64(1) << (32*fl + i), bound: w * tfPart(uint16(min(e.maxCount, 1<<16-1)))}
		m++
	}
	walked := order[:m]
	// rest[j] is the most lists j on can add to a memory's sum.
	var rest [65]float64
	for j := m - 1; j >= 0; j-- {
		rest[j] = rest[j+1] + walked[j].bound
	}
	clauses := float64(s.clauses)
	closed, theta := false, 0.0
	for j, l := range walked {
		if prune && !closed && size > 0 && l.e.skips != nil && int(l.e.postings) > 2*len(sp.touched) {
			// A memory no list so far holds has at most the remaining
			// lists' weight, and as many terms.
			theta = o.threshold(sp, adm, nowNano, size, clauses)
			closed = theta > 0 && rest[j]*float64(m-j)/clauses*(1+1e-9) < theta
		}
		if !closed {
			walkAll(sp, l)
			continue
		}
		// Only the memories touched so far that may still reach theta: at
		// the first list probed, of all touched; after, of those left.
		from := sp.cands
		if !pruned {
			from = sp.touched
		}
		cands := sp.cands[:0]
		for _, slot := range from {
			a := &sp.acc[slot]
			if (a.score+rest[j])*float64(bits.OnesCount64(a.terms)+m-j)/clauses*(1+1e-9) >= theta && (pruned || o.active(slot, nowNano) && adm.admits(o, slot)) {
				cands = append(cands, slot)
			}
		}
		if !pruned {
			slices.Sort(cands)
		}
		sp.cands, pruned = cands, true
		probeList(l.e.list, l.e.skips, cands, func(slot int32, c uint16) {
			a := &sp.acc[slot]
			a.score += l.w * tfPart(c)
			a.terms |= l.bit
		})
	}
	if pruned {
		// Only the candidates left can be among the best (best offers
		// what is touched): the others' partial sums are let go.
		keep := sp.kept[:0]
		for _, slot := range sp.cands {
			keep = append(keep, sp.acc[slot])
		}
		for _, slot := range sp.touched {
			sp.acc[slot] = accum{}
		}
		for i, slot := range sp.cands {
			sp.acc[slot] = keep[i]
		}
		sp.kept = keep
		sp.touched = append(sp.touched[:0], sp.cands...)
	}
	return pruned
}

// walkList is one of the question's lists as walkSegment walks it: its
// weight, the term's bit in accum.terms, and the most a posting adds.
type walkList struct {
	e        *entry
	w, bound float64
	bit      uint64
}

// walkAll walks all of one list.
func walkAll(sp *searchSpace, l walkList) {
	list, w, bit := l.e.list, l.w, l.bit
	slot := int32(0)
	for pos := 0; pos < len(list); {
		v := uint64(list[pos])
		pos++
		if v >= 0x80 {
			v, pos = uvarintAt(list, pos-1)
		}
		c := uint16(1)
		if v&1 != 0 {
			var cv uint64
			cv, pos = uvarintAt(list, pos)
			c = uint16(cv)
		}
		slot += int32(v >> 1) // the first from 0
		a := &sp.acc[slot]
		if a.terms == 0 {
			sp.touched = append(sp.touched, slot)
		}
		a.score += w * tfPart(c)
		a.terms |= bit
	}
}

// threshold is the size-th best score, as it stands, of the memories
// touched so far that are active and that adm admits (0 when there are
// fewer): their scores only grow as more lists are walked.
func (o *Owner) threshold(sp *searchSpace, adm *admitter, nowNano int64, size int, clauses float64) float64 {
	h := sp.heap[:0]
	for _, slot := range sp.touched {
		a := &sp.acc[slot]
		v := a.score * float64(bits.OnesCount64(a.terms)) / clauses
		if len(h) == size && v <= h[0] || !o.active(slot, nowNano) || !adm.admits(o, slot) {
			continue
		}
		if len(h) < size {
			h = append(h, v)
			for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
			continue
		}
		h[0] = v
		for i := 0; ; {
			c := 2*i + 1
			if c >= len(h) {
				break
			}
			if c+1 < len(h) && h[c+1] < h[c] {
				c++
			}
			if h[i] <= h[c] {
				break
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	sp.heap = h
	if len(h) < size {
		return 0
	}
	return h[0]
}

// probeList calls fn with the postings of list (with its skips, see
// inverted) of the slots in cands, ascending, reading only the runs of
// postings that may hold them.
func probeList(list []byte, skips []uint32, cands []int32, fn func(slot int32, count uint16)) {
	pos, slot, run := 0, int32(0), 0
	for _, want := range cands {
		// Step over the runs that end before want.
		for ; 2*run < len(skips) && int32(skips[2*run]) < want; run++ {
			if next := int(skips[2*run+1]); next > pos {
				pos, slot = next, int32(skips[2*run])
			}
		}
		for pos < len(list) {
			v, next := uint64(list[pos]), pos+1
			if v >= 0x80 {
				v, next = uvarintAt(list, pos)
			}
			c := uint64(1)
			if v&1 != 0 {
				c, next = uvarintAt(list, next)
			}
			at := slot + int32(v>>1)
			if at > want {
				break
			}
			pos, slot = next, at
			if at == want {
				fn(at, uint16(c))
				break
			}
		}
	}
}

// ranked is a hit among the best of a search, with the terms it holds
// and its slot.
type ranked struct {
	Hit
	set  termSet
	slot int32
}

// better reports whether hit a ranks before b: a higher score, or the
// newer on a tie.
func better(a, b Hit) bool { return a.Score > b.Score || (a.Score == b.Score && a.ID > b.ID) }

// best returns the best cap(top) of the memories the segment's walk
// touched and the tail matched, that are active and adm admits, best
// first, in top (empty: the caller makes it, as it keeps it). They
// are kept in order as they come: a common word touches most of a large
// owner's memories, and sorting them all would cost more than scoring
// them. Each touched memory's accumulator is cleared for the next search.
func (o *Owner) best(sp *searchSpace, s *Scorer, adm *admitter, nowNano int64, top []ranked) []ranked {
	size := cap(top)
	offer := func(h Hit, set termSet, slot int32) {
		if size <= 0 || len(top) == size && !better(h, top[len(top)-1].Hit) {
			return
		}
		at, _ := slices.BinarySearchFunc(top, h, func(e ranked, t Hit) int {
			if better(e.Hit, t) {
				return -1
			}
			return 1
		})
		if len(top) == size {
			top = top[:size-1]
		}
		top = slices.Insert(top, at, ranked{h, set, slot})
	}
	// Most touched memories of a large owner score below the best size
	// found so far: they are passed over before the filter is asked.
	for _, slot := range sp.touched {
		a := &sp.acc[slot]
		set := a.terms
		h := Hit{ID: o.ids[slot], Score: a.score * float64(bits.OnesCount64(set)) / float64(s.clauses)}
		*a = accum{}
		if len(top) == size && (size <= 0 || !better(h, top[len(top)-1].Hit)) || !o.active(slot, nowNano) || !adm.admits(o, slot) {
			continue
		}
		offer(h, termSet{uint32(set), uint32(set >> 32)}, slot)
	}
	for _, t := range sp.tail {
		offer(Hit{ID: o.ids[t.slot], Score: s.Score(&t.m)}, termSet{t.m.Content, t.m.Context}, t.slot)
	}
	return top
}

// admitter is a Filter in the owner's terms.
type admitter struct {
	session     uint32
	onlySession bool
	kinds       []uint8 // nil: any
	noKind      bool    // Kinds named only kinds no memory has: none
	except      []uint8
}

func (o *Owner) admitter(f Filter) admitter {
	a := admitter{session: sessionHash(f.Session), onlySession: f.OnlySession}
	for _, k := range f.Kinds {
		if n, ok := o.p.kindNumber(k); ok {
			a.kinds = append(a.kinds, n)
		}
	}
	a.noKind = len(f.Kinds) > 0 && len(a.kinds) == 0
	for _, k := range f.Except {
		if n, ok := o.p.kindNumber(k); ok {
			a.except = append(a.except, n)
		}
	}
	return a
}

// admits reports whether the filter admits slot. A kind past the
// numbered ones is admitted: the engine checks the record.
func (a *admitter) admits(o *Owner, slot int32) bool {
	if a.onlySession && o.sess[slot] != a.session {
		return false
	}
	k := o.kind[slot]
	if k == otherKind {
		return true
	}
	if a.noKind || a.kinds != nil && !slices.Contains(a.kinds, k) {
		return false
	}
	return !slices.Contains(a.except, k)
}
