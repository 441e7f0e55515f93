package index

import (
	"encoding/binary"
	"slices"
)

// A memory's terms in Postings, kept per memory ("forward") for the
// memories an owner's segment does not hold yet (all of a small owner's):
// term numbers (see termTable) rather than hashes, ascending, each as its
// difference from the one before, so a memory takes about two bytes a
// term instead of a digest's five, and reads them without branching on
// their length.
//
// Layout: uvarint(content bytes), uvarint(context bytes), then each field's
// entries: a little-endian uint16 delta << 1 | more, or, for a delta past
// maxShort, 0xffff and a little-endian uint32 of the same; and one byte
// count after an entry with more set (the term occurs more than once;
// rarely).

// maxShort is the largest delta an entry holds in two bytes.
const maxShort = 0x7ffe

// term is a term of one field of a memory: its number << 8 | its count
// (1 to 255, as the digest has it).
type term = uint64

// appendForward appends the forward encoding of a memory whose fields hold
// the given terms, each ascending by number.
func appendForward(dst []byte, fields *[2][]term) []byte {
	var enc [2][]byte
	var buf [2][256]byte
	for f := range fields {
		enc[f] = appendTerms(buf[f][:0], fields[f])
	}
	dst = binary.AppendUvarint(dst, uint64(len(enc[0])))
	dst = binary.AppendUvarint(dst, uint64(len(enc[1])))
	return append(append(dst, enc[0]...), enc[1]...)
}

func appendTerms(dst []byte, ts []term) []byte {
	prev := uint64(0)
	for _, t := range ts {
		id, c := t>>8, t&0xff
		d := id - prev // the first from 0
		prev = id
		v := d << 1
		if c > 1 {
			v |= 1
		}
		if d <= maxShort {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
		} else {
			dst = binary.LittleEndian.AppendUint16(dst, 0xffff)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		}
		if c > 1 {
			dst = append(dst, byte(c))
		}
	}
	return dst
}

// nextTerm reads the entry at pos of a field's encoding: the delta, the
// count, and where the next entry starts.
func nextTerm(enc []byte, pos int) (delta uint32, count uint16, next int) {
	v := uint32(enc[pos]) | uint32(enc[pos+1])<<8
	pos += 2
	if v == 0xffff {
		v = binary.LittleEndian.Uint32(enc[pos:])
		pos += 4
	}
	count = 1
	if v&1 != 0 {
		count = uint16(enc[pos])
		pos++
	}
	return v >> 1, count, pos
}

// forwardFields splits one memory's encoding into its two fields.
func forwardFields(b []byte) (content, context []byte) {
	n0, s0 := binary.Uvarint(b)
	n1, s1 := binary.Uvarint(b[s0:])
	b = b[s0+s1:]
	return b[:n0], b[n0 : n0+n1]
}

// eachTerm calls fn with each term of one field's encoding, ascending.
func eachTerm(b []byte, fn func(id uint32, count uint16)) {
	var id uint32
	for pos := 0; pos < len(b); {
		d, c, next := nextTerm(b, pos)
		pos = next
		id += d // the first from 0
		fn(id, c)
	}
}

// qterm is a query term as a search looks for it: its number and its
// index in the scorer's terms. A query's are sorted by number; two terms
// may share one (their hashes collide) and then match together.
type qterm struct {
	id uint32
	i  uint8
}

// matchForward finds the query's terms (q, per field) in one memory's
// encoding, as Scorer.MatchDigest does in its digest. It is the inner
// loop of a small owner's search: the terms are decoded in place, one or
// two bytes each nearly always, and compared with the next query term
// only.
func matchForward(b []byte, q *[2][]qterm, m *Match) bool {
	m.Content, m.Context = 0, 0
	n0, s0 := binary.Uvarint(b)
	n1, s1 := binary.Uvarint(b[s0:])
	b = b[s0+s1:]
	fields := [2][]byte{b[:n0], b[n0 : n0+n1]}
	for f, enc := range fields {
		qs := q[f]
		if len(qs) == 0 {
			continue
		}
		var set uint32
		next := qs[0].id
		id, k := uint32(0), 0
		for pos := 0; pos+1 < len(enc); {
			v := uint32(enc[pos]) | uint32(enc[pos+1])<<8
			pos += 2
			if v == 0xffff {
				v = binary.LittleEndian.Uint32(enc[pos:])
				pos += 4
			}
			c := uint16(1)
			if v&1 != 0 {
				c = uint16(enc[pos])
				pos++
			}
			id += v >> 1 // the first from 0
			if id < next {
				continue
			}
			for k < len(qs) && qs[k].id < id {
				k++
			}
			for j := k; j < len(qs) && qs[j].id == id; j++ {
				set |= 1 << qs[j].i
				m.count[f][qs[j].i] = c
			}
			if k == len(qs) {
				break
			}
			next = qs[k].id
		}
		if f == 0 {
			m.Content = set
		} else {
			m.Context = set
		}
	}
	return m.Content|m.Context != 0
}

// digestTerms reads a digest (past its version byte) into its fields'
// terms, numbering new ones with number; false for a damaged one.
func digestTerms(d []byte, number func(hash uint32) uint32, out *[2][]term) bool {
	fields, ok := digestFields(d)
	if !ok {
		return false
	}
	for f, fl := range fields {
		ts := out[f][:0]
		for i := range fl.n {
			h := binary.LittleEndian.Uint32(fl.hashes[4*i:])
			ts = append(ts, term(number(h))<<8|term(fl.counts[i]))
		}
		slices.Sort(ts)
		out[f] = ts
	}
	return true
}

// digestField is one field of a digest: n term hashes and their counts.
type digestField struct {
	n      int
	hashes []byte
	counts []byte
}

// digestFields splits a digest, past its version byte, into its fields.
func digestFields(d []byte) (out [2]digestField, ok bool) {
	for f := range 2 {
		n, size := binary.Uvarint(d)
		if size <= 0 || n > uint64(len(d)-size)/5 {
			return out, false
		}
		d = d[size:]
		out[f] = digestField{n: int(n), hashes: d[:4*n], counts: d[4*n : 5*n]}
		d = d[5*n:]
	}
	return out, len(d) == 0
}
