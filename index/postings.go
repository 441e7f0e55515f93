package index

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"time"
)

// Postings is one owner's memories as an inverted index in memory, built
// from their digests (see Digest). A Bleve search of a large owner walks
// the postings of the question's words in the whole shard and intersects
// them with the owner's; here a search reads only the owner's postings of
// the question's terms, so it costs what the question matches in the
// owner's memories, not what the owner or its shard holds. It ranks as
// Records does, by the owner's own statistics.
//
// A Postings is not safe for concurrent use.
type Postings struct {
	docs []pdoc
	byID map[uint64]int32
	// lists holds each term's postings; index finds them by term hash << 1
	// | field. Neither the index (a map of numbers) nor the postings
	// (numbers) holds pointers: the collector, which scans what does, has
	// one slice per term to look at, however large the owner.
	index map[uint64]int32
	lists []plist
	live  int
	// expiring are the documents with an expiry, whose activity depends on
	// the time of the search.
	expiring []int32
	version  byte // the digests' first byte
	bytes    int
	// strs interns kinds and sessions: a few of each, repeated by every
	// memory.
	strs map[string]string
}

type pdoc struct {
	id      uint64
	kind    string
	session string
	expires int64 // Unix nanoseconds; 0: never
	live    bool
}

// plist is one term's postings in one field: a document number (below
// 1<<24) and the count of the term in it (below 256, as the digest has it)
// each, in one number.
type plist struct {
	posts []uint32
}

// maxDocs is how many memories (live or removed) postings can number.
const maxDocs = 1 << 24

// Approximate sizes, for Bytes.
const (
	pdocBytes  = 64
	plistBytes = 64
	postBytes  = 4
)

// NewPostings makes an empty index of one owner's memories, for digests
// made by this index's digester.
func (x *Index) NewPostings() *Postings {
	return &Postings{byID: map[uint64]int32{}, index: map[uint64]int32{}, strs: map[string]string{}, version: x.Digester().Version()}
}

// Put adds memory id (replacing what it had) with its digest, kind,
// session and expiry. It reports false, adding nothing, for a digest of
// another digester or analyzer: make it again from the text. (Past maxDocs
// it adds nothing either: no budget holds as many.)
func (p *Postings) Put(id uint64, digest []byte, kind, session string, expires *time.Time) bool {
	if len(digest) == 0 || digest[0] != p.version {
		return false
	}
	if len(p.docs) >= maxDocs {
		return true
	}
	fields, ok := digestFields(digest[1:])
	if !ok {
		return false
	}
	p.Delete(id)
	d := int32(len(p.docs))
	doc := pdoc{id: id, kind: p.intern(kind), session: p.intern(session), live: true}
	if expires != nil {
		doc.expires = expires.UnixNano()
		p.expiring = append(p.expiring, d)
	}
	p.docs = append(p.docs, doc)
	p.byID[id] = d
	p.live++
	p.bytes += pdocBytes
	for f, fl := range fields {
		for i := range fl.n {
			key := uint64(binary.LittleEndian.Uint32(fl.hashes[4*i:]))<<1 | uint64(f)
			li, ok := p.index[key]
			if !ok {
				li = int32(len(p.lists))
				p.lists = append(p.lists, plist{})
				p.index[key] = li
				p.bytes += plistBytes
			}
			l := &p.lists[li]
			l.posts = append(l.posts, uint32(d)<<8|uint32(fl.counts[i]))
			p.bytes += postBytes
		}
	}
	return true
}

func (p *Postings) intern(s string) string {
	if v, ok := p.strs[s]; ok {
		return v
	}
	p.strs[s] = s
	p.bytes += len(s) + 32
	return s
}

// Trim gives the postings lists the room they use and no more: built by
// appending, they would hold up to twice that.
func (p *Postings) Trim() {
	for i := range p.lists {
		if l := &p.lists[i]; cap(l.posts) > len(l.posts) {
			l.posts = slices.Clip(slices.Clone(l.posts))
		}
	}
	p.lists = slices.Clip(p.lists)
	p.docs = slices.Clip(p.docs)
}

// Delete removes memory id, if it is there.
func (p *Postings) Delete(id uint64) {
	if d, ok := p.byID[id]; ok {
		p.docs[d].live = false
		delete(p.byID, id)
		p.live--
	}
}

// Live is how many memories it holds; Dead how many removed ones still take
// room in it (rebuild it when they outnumber the live).
func (p *Postings) Live() int { return p.live }
func (p *Postings) Dead() int { return len(p.docs) - p.live }

// Version is the first byte of the digests it was made from: postings of
// another digester's (a storage encrypted or decrypted since) match
// nothing and are to be made again.
func (p *Postings) Version() byte { return p.version }

// Bytes is about how much memory it takes.
func (p *Postings) Bytes() int { return p.bytes }

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

// Filter says which memories a search may return: all the owner's active
// ones count towards its statistics.
type Filter struct {
	Session       string
	OnlySession   bool
	Kinds, Except []string
}

func (f *Filter) admits(d *pdoc) bool {
	if f.OnlySession && d.session != f.Session {
		return false
	}
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, d.kind) {
		return false
	}
	return !slices.Contains(f.Except, d.kind)
}

// searchSpace is a search's working space, reused: a large owner's would
// otherwise be most of what a search allocates.
type searchSpace struct {
	score   []float64
	matched []uint8
	touched []int32
}

var spacePool = sync.Pool{New: func() any { return new(searchSpace) }}

// Search ranks the owner's active memories that hold the scorer's terms
// (from NewScorer with this owner's terms; its statistics are set here),
// and returns the best size that f admits, best first (newer first on
// ties), as Records.Top does.
func (p *Postings) Search(s *Scorer, f Filter, now time.Time, size int) []Hit {
	if size <= 0 {
		return nil
	}
	nowNano := now.UnixNano()
	active := func(d int32) bool {
		doc := &p.docs[d]
		return doc.live && (doc.expires == 0 || nowNano < doc.expires)
	}
	var counts Counts
	counts.Docs = uint64(p.live)
	for _, d := range p.expiring {
		if p.docs[d].live && !active(d) {
			counts.Docs--
		}
	}
	// The postings of each query term, by field, and the owner's document
	// frequencies of them.
	n := len(s.Matcher.Terms)
	var lists [2][32]*plist
	for _, h := range s.hashes {
		i := bits.TrailingZeros32(h.bit)
		for fld := range 2 {
			li, ok := p.index[uint64(h.hash)<<1|uint64(fld)]
			if !ok {
				continue
			}
			l := &p.lists[li]
			lists[fld][i] = l
			for _, post := range l.posts {
				if active(int32(post >> 8)) {
					counts.DF[fld][i]++
				}
			}
		}
	}
	s.UseCounts(&counts)

	sp := spacePool.Get().(*searchSpace)
	defer spacePool.Put(sp)
	if len(sp.score) < len(p.docs) {
		sp.score, sp.matched = make([]float64, len(p.docs)), make([]uint8, len(p.docs))
	}
	sp.touched = sp.touched[:0]
	for fld := range 2 {
		for i := range n {
			l := lists[fld][i]
			if l == nil {
				continue
			}
			w := s.clause[fld][i]
			for _, post := range l.posts {
				d := int32(post >> 8)
				if !active(d) {
					continue
				}
				if sp.matched[d] == 0 {
					sp.touched = append(sp.touched, d)
				}
				sp.score[d] += w * tfPart(uint16(post&0xff))
				sp.matched[d]++
			}
		}
	}
	// The best size, kept in order as they come: a common word touches
	// most of a large owner's memories, and sorting them all would cost
	// more than scoring them.
	better := func(a, b Hit) bool { return a.Score > b.Score || (a.Score == b.Score && a.ID > b.ID) }
	top := make([]Hit, 0, size)
	for _, d := range sp.touched {
		if f.admits(&p.docs[d]) {
			h := Hit{ID: p.docs[d].id, Score: sp.score[d] * float64(sp.matched[d]) / float64(s.clauses)}
			if len(top) < size || better(h, top[len(top)-1]) {
				at, _ := slices.BinarySearchFunc(top, h, func(e, t Hit) int {
					if better(e, t) {
						return -1
					}
					return 1
				})
				if len(top) == size {
					top = top[:size-1]
				}
				top = slices.Insert(top, at, h)
			}
		}
		sp.score[d], sp.matched[d] = 0, 0
	}
	return top
}
