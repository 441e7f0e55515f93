package index

import (
	"encoding/binary"
	"sort"
)

// inverted is the inverted part of an owner's postings: for each term of
// each field (its key: number << 1 | field), the memories holding it, by
// slot (see Owner), ascending. It is immutable: memories added since it
// was made are kept forward until the next merge (Owner.settle) makes a
// new one.
//
// The dictionary is sorted by key, in blocks of blockTerms entries found by
// bisecting each block's first key; an entry is uvarint(key - previous
// key), uvarint(postings), uvarint(list bytes), uvarint(last slot),
// uvarint(the largest count in the list), uvarint(where its skips start in
// skips, + 1; 0 for none). A list is its postings: uvarint(slot delta << 1
// | more), the first from 0, and uvarint(count) when more is set. A list of
// skipEvery postings or more has skips: for each run of skipEvery postings,
// the last slot in it and the offset in the list where the next run
// starts, so a search looking for a few memories in a long list reads the
// runs that may hold them and steps over the rest (see probeList). Nothing
// in it is a pointer but its slices, so the collector has seven of them to
// look at however large the owner.
type inverted struct {
	n      int32    // slots below n are the segment's
	first  []uint32 // each block's first key
	dictAt []uint32 // each block's offset in dict
	listAt []uint32 // each block's first list's offset in lists
	dict   []byte
	lists  []byte
	skips  []uint32
	terms  int
}

// skipEvery is how many postings a skip steps over.
const skipEvery = 128

const blockTerms = 32

// entry is one dictionary entry.
type entry struct {
	key, postings, last uint32
	maxCount            uint32
	list                []byte
	// skips are the list's: last slot, then next run's offset, per run
	// (nil for a short list).
	skips []uint32
}

// lookup finds key's entry.
func (s *inverted) lookup(key uint32) (entry, bool) {
	if s == nil {
		return entry{}, false
	}
	b := sort.Search(len(s.first), func(i int) bool { return s.first[i] > key }) - 1
	if b < 0 {
		return entry{}, false
	}
	pos, end := int(s.dictAt[b]), len(s.dict)
	if b+1 < len(s.dictAt) {
		end = int(s.dictAt[b+1])
	}
	off := s.listAt[b]
	k := s.first[b]
	for j := 0; pos < end; j++ {
		var e entry
		var d, size uint32
		d, size, pos = s.entryAt(pos, &e)
		if j > 0 {
			k += d
		}
		switch {
		case k == key:
			e.key, e.list = k, s.lists[off:off+size]
			return e, true
		case k > key:
			return entry{}, false
		}
		off += size
	}
	return entry{}, false
}

// each calls fn with every entry, by key.
func (s *inverted) each(fn func(e entry)) {
	if s == nil {
		return
	}
	pos, off := 0, uint32(0)
	var k uint32
	for j := 0; pos < len(s.dict); j++ {
		var e entry
		var d, size uint32
		d, size, pos = s.entryAt(pos, &e)
		if j%blockTerms == 0 {
			k = s.first[j/blockTerms]
		} else {
			k += d
		}
		e.key, e.list = k, s.lists[off:off+size]
		off += size
		fn(e)
	}
}

// entryAt reads the dictionary entry at pos into e (its postings, last
// slot, largest count and skips), and returns its key's difference from
// the previous one, its list's bytes, and where the next entry starts.
func (s *inverted) entryAt(pos int, e *entry) (d, size uint32, next int) {
	var v [6]uint64
	for i := range v {
		v[i], pos = uvarintAt(s.dict, pos)
	}
	e.postings, e.last, e.maxCount = uint32(v[1]), uint32(v[3]), uint32(v[4])
	if v[5] > 0 {
		at := int(v[5] - 1)
		e.skips = s.skips[at : at+2*(int(e.postings)/skipEvery)]
	}
	return uint32(v[0]), uint32(v[2]), pos
}

func uvarintAt(b []byte, pos int) (uint64, int) {
	if c := b[pos]; c < 0x80 {
		return uint64(c), pos + 1
	}
	v, n := binary.Uvarint(b[pos:])
	return v, pos + n
}

// eachPosting calls fn with each posting of a list, by slot.
func eachPosting(list []byte, fn func(slot int32, count uint16)) {
	eachPostingAt(list, func(slot int32, count uint16, _ int) { fn(slot, count) })
}

// eachPostingAt calls fn with each posting of a list, by slot, and where
// the next one starts.
func eachPostingAt(list []byte, fn func(slot int32, count uint16, next int)) {
	slot := uint64(0)
	for pos := 0; pos < len(list); {
		var v uint64
		v, pos = uvarintAt(list, pos)
		c := uint64(1)
		if v&1 != 0 {
			c, pos = uvarintAt(list, pos)
		}
		slot += v >> 1 // the first from 0
		fn(int32(slot), uint16(c), pos)
	}
}

// appendPosting appends a posting of slot after one of prev (0 for a
// list's first).
func appendPosting(dst []byte, slot, prev uint32, count uint16) []byte {
	d := uint64(slot - prev)
	if count > 1 {
		dst = binary.AppendUvarint(dst, d<<1|1)
		return binary.AppendUvarint(dst, uint64(count))
	}
	return binary.AppendUvarint(dst, d<<1)
}

// segWriter writes a segment's entries in key order.
type segWriter struct {
	s    *inverted
	prev uint32
}

func (w *segWriter) add(key, postings, last uint32, list []byte) {
	s := w.s
	d := key - w.prev
	if s.terms%blockTerms == 0 {
		s.first = append(s.first, key)
		s.dictAt = append(s.dictAt, uint32(len(s.dict)))
		s.listAt = append(s.listAt, uint32(len(s.lists)))
		d = 0
	}
	// The largest count, and a skip after every skipEvery postings.
	maxCount, skipsAt := uint32(1), 0
	if postings >= skipEvery {
		skipsAt = len(s.skips) + 1
	}
	n := 0
	eachPostingAt(list, func(slot int32, count uint16, next int) {
		maxCount = max(maxCount, uint32(count))
		if n++; skipsAt > 0 && n%skipEvery == 0 {
			s.skips = append(s.skips, uint32(slot), uint32(next))
		}
	})
	s.dict = binary.AppendUvarint(s.dict, uint64(d))
	s.dict = binary.AppendUvarint(s.dict, uint64(postings))
	s.dict = binary.AppendUvarint(s.dict, uint64(len(list)))
	s.dict = binary.AppendUvarint(s.dict, uint64(last))
	s.dict = binary.AppendUvarint(s.dict, uint64(maxCount))
	s.dict = binary.AppendUvarint(s.dict, uint64(skipsAt))
	s.lists = append(s.lists, list...)
	s.terms++
	w.prev = key
}

// posting is a posting on its way into a segment: key << 32 | slot << 8 |
// count, so that sorting postings sorts them by key, then slot.
type posting = uint64

func postingOf(key uint32, slot int32, count uint16) posting {
	return uint64(key)<<32 | uint64(slot)<<8 | uint64(min(count, 255))
}

// rewrite makes the segment of n slots holding old's postings and add's
// (sorted; slots at or above old's). With remap, old's slots are renumbered
// (remap[slot], or dropped where it is negative) and their lists made
// again; without it they are copied as they are.
func rewrite(old *inverted, remap []int32, add []posting, n int32) *inverted {
	s := &inverted{n: n}
	if old != nil {
		s.dict = make([]byte, 0, len(old.dict)+len(add)*4)
		s.lists = make([]byte, 0, len(old.lists)+len(add)*2)
	}
	w := segWriter{s: s}
	var list []byte
	// flush writes key's list: what old had (e, if ok) and add's postings
	// of it.
	flush := func(key uint32, e entry, ok bool, adds []posting) {
		list = list[:0]
		var postings, last uint32
		if ok && remap == nil {
			list = append(list, e.list...)
			postings, last = e.postings, e.last
		} else if ok {
			eachPosting(e.list, func(slot int32, c uint16) {
				if to := remap[slot]; to >= 0 {
					list = appendPosting(list, uint32(to), last, c)
					postings, last = postings+1, uint32(to)
				}
			})
		}
		for _, p := range adds {
			slot := uint32(p>>8) & 0xffffff
			list = appendPosting(list, slot, last, uint16(p&0xff))
			postings, last = postings+1, slot
		}
		if postings > 0 {
			w.add(key, postings, last, list)
		}
	}
	i := 0
	// adds returns add's postings of key, and moves past them.
	adds := func(key uint32) []posting {
		j := i
		for j < len(add) && uint32(add[j]>>32) == key {
			j++
		}
		out := add[i:j]
		i = j
		return out
	}
	old.each(func(e entry) {
		for i < len(add) && uint32(add[i]>>32) < e.key {
			k := uint32(add[i] >> 32)
			flush(k, entry{}, false, adds(k))
		}
		flush(e.key, e, true, adds(e.key))
	})
	for i < len(add) {
		k := uint32(add[i] >> 32)
		flush(k, entry{}, false, adds(k))
	}
	s.dict, s.lists = clipped(s.dict), clipped(s.lists)
	s.first, s.dictAt, s.listAt, s.skips = clipped(s.first), clipped(s.dictAt), clipped(s.listAt), clipped(s.skips)
	return s
}

// bytes is about how much memory the segment takes.
func (s *inverted) bytes() int {
	if s == nil {
		return 0
	}
	return 120 + cap(s.dict) + cap(s.lists) + 4*(cap(s.first)+cap(s.dictAt)+cap(s.listAt)+cap(s.skips))
}
