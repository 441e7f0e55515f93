package index

import (
	"slices"
	"time"
)

// How an owner's postings are reorganised as they change: memories kept
// forward merged into a segment, dead ones left out when there are enough.

// Settle reorganises the owner after changes: merges the memories kept
// forward into a new segment when there are enough, makes all anew when
// dead memories take too much room, and finds the terms of those that died
// blind (see ownerData.blind) in the segment's lists, so its counts are
// exact again without making it anew (at once for a small segment; a
// large one, whose lists take milliseconds to read, is searched the slower
// way for up to blindFor first, so that a burst of rewrites costs one
// reading). It reports whether it wants to be called again, though nothing
// changes meanwhile.
func (o *Owner) Settle(now time.Time) (again bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dropped {
		return false
	}
	// Expired memories are dead to every search from now on: searches
	// count around them until they are gone.
	for slot, t := range o.expires {
		if now.UnixNano() >= t {
			at, _ := o.search(o.ids[slot])
			o.kill(slot, nil)
			o.order = slices.Delete(o.order, at, at+1)
		}
	}
	n := int32(len(o.ids))
	tail := int(n - o.segN())
	if o.blind > 0 && o.blindSince.IsZero() {
		o.blindSince = now
	}
	switch {
	case o.dead > 0 && o.dead > o.live/4:
		o.compact()
	case o.blind > 0 && (o.seg.n <= blindCompact || now.Sub(o.blindSince) >= blindFor || o.blind*32 > o.live):
		o.unblind()
	}
	switch {
	case o.seg == nil && n > forwardMax, o.seg != nil && tail > tailMax:
		o.merge()
	case o.seg == nil && o.garbage > 0 && o.garbage > len(o.fwd)/2:
		o.compact()
	}
	o.packShown(nil, 0)
	size := o.bytes()
	o.p.bytes.Add(int64(size - o.size))
	o.size = size
	return o.blind > 0
}

// A segment blinded by a rewrite has its dead slots' terms found at once
// when it has at most blindCompact slots, else after blindFor.
const (
	blindCompact = 4096
	blindFor     = 10 * time.Second
)

// unblind finds the terms of the slots that died blind in the segment's
// lists, in one reading of them, and counts them in deadDF: a search's
// counts are exact again, at the cost of reading the lists once, where
// making the segment anew would write them all.
func (o *Owner) unblind() {
	dead := make([]uint64, (o.seg.n+63)/64)
	for _, slot := range o.blindSlots {
		dead[slot/64] |= 1 << (slot % 64)
	}
	if o.deadDF == nil {
		o.deadDF = map[uint32]uint32{}
	}
	o.seg.each(func(e entry) {
		eachPosting(e.list, func(slot int32, _ uint16) {
			if dead[slot/64]&(1<<(slot%64)) != 0 {
				o.deadDF[e.key]++
			}
		})
	})
	o.blind, o.blindSlots, o.blindSince = 0, nil, time.Time{}
}

// tailPostings decodes the forward memories from slot from on, live ones
// only, renumbered by remap (when not nil), into postings sorted by key.
func (o *Owner) tailPostings(remap []int32) []posting {
	// Every encoded term takes at least two bytes: half the forward bytes
	// holds them all without growing (an owner first admitted merges tens of
	// thousands of memories at once, and growing by doubling would allocate
	// twice over).
	out := make([]posting, 0, len(o.fwd)/2)
	base := o.segN()
	for i := range o.fwdAt {
		slot := base + int32(i)
		if o.flags[slot]&flagLive == 0 {
			continue
		}
		to := slot
		if remap != nil {
			to = remap[slot]
		}
		at := o.fwdAt[i]
		c, x := forwardFields(o.fwd[at:])
		for f, enc := range [2][]byte{c, x} {
			eachTerm(enc, func(id uint32, count uint16) {
				out = append(out, postingOf(id<<1|uint32(f), to, count))
			})
		}
	}
	slices.Sort(out)
	return out
}

// merge moves the forward memories into a new segment, with the old one's.
func (o *Owner) merge() {
	n := int32(len(o.ids))
	o.seg = rewrite(o.seg, nil, o.tailPostings(nil), n)
	o.fwd, o.fwdAt, o.garbage = nil, nil, 0
	o.clip()
}

// Trim gives the owner's slices the room they use and no more, after a
// bulk of puts (an owner first admitted): grown by appending, they hold up
// to twice that.
func (o *Owner) Trim() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dropped {
		return
	}
	o.clip()
	size := o.bytes()
	o.p.bytes.Add(int64(size - o.size))
	o.size = size
}

func (o *Owner) clip() {
	o.ids, o.sess, o.kind, o.flags = clipped(o.ids), clipped(o.sess), clipped(o.kind), clipped(o.flags)
	o.updated, o.ment, o.imp, o.turn = clipped(o.updated), clipped(o.ment), clipped(o.imp), clipped(o.turn)
	o.sum, o.order, o.fwd, o.fwdAt = clipped(o.sum), clipped(o.order), clipped(o.fwd), clipped(o.fwdAt)
	o.shown, o.shownAt, o.shownLen = clipped(o.shown), clipped(o.shownAt), clipped(o.shownLen)
}

// clipped is s, copied to a slice of its length when it has much more
// room.
func clipped[S ~[]E, E any](s S) S {
	if cap(s) <= len(s)+len(s)/8 {
		return s
	}
	return slices.Clip(slices.Clone(s))
}

// compact numbers the live memories anew, leaving the dead out: into a
// new segment, or, for an owner without one, forward.
func (o *Owner) compact() {
	remap := make([]int32, len(o.ids))
	n := int32(0)
	for slot := range o.ids {
		remap[slot] = -1
		if o.flags[slot]&flagLive != 0 {
			remap[slot] = n
			n++
		}
	}
	o.packShown(remap, n)
	if o.seg != nil {
		o.seg = rewrite(o.seg, remap, o.tailPostings(remap), n)
		o.fwd, o.fwdAt = nil, nil
	} else {
		fwd := make([]byte, 0, len(o.fwd)-o.garbage)
		fwdAt := make([]uint32, 0, n)
		for slot, at := range o.fwdAt {
			if remap[slot] < 0 {
				continue
			}
			end := len(o.fwd)
			if slot+1 < len(o.fwdAt) {
				end = int(o.fwdAt[slot+1])
			}
			fwdAt = append(fwdAt, uint32(len(fwd)))
			fwd = append(fwd, o.fwd[at:end]...)
		}
		o.fwd, o.fwdAt = fwd, fwdAt
	}
	o.kind, o.flags, o.imp = kept(o.kind, remap, n), kept(o.flags, remap, n), kept(o.imp, remap, n)
	o.ids, o.updated = kept(o.ids, remap, n), kept(o.updated, remap, n)
	o.sess, o.sum, o.turn = kept(o.sess, remap, n), kept(o.sum, remap, n), kept(o.turn, remap, n)
	o.ment = kept(o.ment, remap, n)
	for i, slot := range o.order {
		o.order[i] = remap[slot]
	}
	o.order = slices.Clip(o.order)
	if o.expires != nil {
		exp := make(map[int32]int64, len(o.expires))
		for slot, t := range o.expires {
			exp[remap[slot]] = t
		}
		o.expires = exp
	}
	o.garbage, o.dead, o.blind, o.deadDF, o.blindSlots, o.blindSince = 0, 0, 0, nil, nil, time.Time{}
	o.clip()
}

// kept is s without the slots remap leaves out (-1): n remain.
func kept[E any](s []E, remap []int32, n int32) []E {
	out := make([]E, 0, n)
	for slot, v := range s {
		if remap[slot] >= 0 {
			out = append(out, v)
		}
	}
	return out
}

// bytes is about how much memory the owner takes.
func (o *Owner) bytes() int {
	return 256 + o.seg.bytes() + cap(o.fwd) + 4*cap(o.fwdAt) + 8*cap(o.ids) + 4*cap(o.sess) + cap(o.kind) + cap(o.flags) +
		4*cap(o.sum) + 4*cap(o.order) + 24*len(o.expires) + 12*len(o.deadDF) + 4*cap(o.blindSlots) +
		8*cap(o.updated) + 2*cap(o.ment) + cap(o.imp) + 4*cap(o.turn) + cap(o.shown) + 4*cap(o.shownAt) + 2*cap(o.shownLen)
}
