package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// An owner with few memories is best searched without the index: reading
// its records and scoring each costs a microsecond or two per memory, while
// a Bleve query costs in proportion to the postings of the query's words in
// the whole shard (the owner's term narrows the result, not the work): at a
// million memories over 64 shards, milliseconds for an owner with a hundred.

// Scorer scores an owner's memories against a query as Search ranks them:
// Bleve's BM25 (k1 = BM25_k1, b = 0, tf as the square root of the count),
// with the statistics of the owner's shard, the context field at
// contextWeight, and the disjunction's coordination factor. Its scores are
// Search's up to one factor common to the whole query (the query norm), so
// rankings, and the priors applied to them, agree with an index search.
//
// It reads the shard's statistics only for the terms it is asked about:
// most of a query's words occur in none of a small owner's memories, and
// looking a word up in every segment of a shard is most of what a search of
// a small owner costs.
type Scorer struct {
	Matcher *Matcher
	x       *Index
	owner   string
	docs    uint64
	df      [2][]uint64 // per field (content, context), per term
	clause  [2][]float64
	// order is the clauses (field << 5 | term), heaviest first: every
	// score is summed in it (Score, the postings' walk), so a memory
	// scores the same to the last bit whichever way it is searched.
	order   []uint8
	loaded  [2]uint32
	clauses int
	// hashes are the terms' digest hashes, ascending, with their bits.
	hashes   []termBit
	digester *Digester
}

type termBit struct {
	hash uint32
	bit  uint32
}

// Match is what one memory holds of a query.
type Match struct {
	Content, Context uint32 // the terms found, bit i for Matcher.Terms[i]
	count            [2][32]uint16
}

// NewScorer prepares a scorer for owner and terms (from Terms).
func (x *Index) NewScorer(owner string, terms []string) *Scorer {
	m := NewMatcher(terms)
	n := len(m.Terms)
	g := x.Digester()
	hashes := make([]termBit, n)
	for i, t := range m.Terms {
		hashes[i] = termBit{g.hash(termHash(t)), 1 << i}
	}
	slices.SortFunc(hashes, func(a, b termBit) int { return cmp.Compare(a.hash, b.hash) })
	return &Scorer{Matcher: m, x: x, owner: owner, df: [2][]uint64{make([]uint64, n), make([]uint64, n)},
		clause: [2][]float64{make([]float64, n), make([]float64, n)}, clauses: 2 * n, hashes: hashes, digester: g}
}

// Match finds the query's terms in a memory's content and context, and
// reports whether there are any.
func (s *Scorer) Match(content, context string, m *Match) bool {
	*m = Match{}
	m.Content = s.Matcher.Count(content, &m.count[0])
	m.Context = s.Matcher.Count(context, &m.count[1])
	return m.Content|m.Context != 0
}

// MatchDigest is Match on a memory's digest (see Digest) instead of its
// text. ok is false for a digest it cannot read (another analyzer's or
// layout's, or damaged): match the text instead.
func (s *Scorer) MatchDigest(d []byte, m *Match) (found, ok bool) {
	*m = Match{}
	if !s.digester.Current(d) {
		return false, false
	}
	d = d[1:]
	for f := range 2 {
		n, size := binary.Uvarint(d)
		if size <= 0 || n > uint64(len(d)-size)/5 {
			return false, false
		}
		d = d[size:]
		hashes, counts := d[:4*n], d[4*n:5*n]
		d = d[5*n:]
		// Both lists ascend: each query term is looked for, by bisection,
		// after the one before it (a query has a few terms, a memory dozens).
		var set uint32
		lo := 0
		for _, q := range s.hashes {
			hi := int(n)
			for lo < hi {
				mid := int(uint(lo+hi) >> 1)
				if binary.LittleEndian.Uint32(hashes[4*mid:]) < q.hash {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			if lo == int(n) {
				break
			}
			if binary.LittleEndian.Uint32(hashes[4*lo:]) == q.hash {
				set |= q.bit
				m.count[f][bits.TrailingZeros32(q.bit)] = uint16(counts[lo])
				// lo stays: the next query term may share the hash.
			}
		}
		if f == 0 {
			m.Content = set
		} else {
			m.Context = set
		}
	}
	if len(d) != 0 {
		*m = Match{}
		return false, false
	}
	return m.Content|m.Context != 0, true
}

// Score is the BM25 score of a match. Load the statistics of its terms
// first.
func (s *Scorer) Score(m *Match) float64 {
	score, matched := 0.0, 0
	sets := [2]uint32{m.Content, m.Context}
	for _, k := range s.order {
		f, i := k>>5, k&31
		if sets[f]&(1<<i) != 0 {
			score += s.clause[f][i] * tfPart(m.count[f][i])
			matched++
		}
	}
	return score * float64(matched) / float64(s.clauses)
}

// tfPart is BM25's term-frequency factor (with b = 0) of a term found c
// times: tf·k1/(tf+k1), tf being √c.
func tfPart(c uint16) float64 {
	if int(c) < len(tfParts) {
		return tfParts[c]
	}
	return bm25TF(c)
}

// tfParts holds tfPart of the small counts, nearly all of them.
var tfParts = func() (t [64]float64) {
	for c := 1; c < len(t); c++ {
		t[c] = bm25TF(uint16(c))
	}
	return t
}()

func bm25TF(c uint16) float64 {
	tf := math.Sqrt(float64(c))
	return tf * search.BM25_k1 / (tf + search.BM25_k1)
}

// weigh sets each loaded term's clause weight: a clause scores
// idf·tf-part times its query weight, boost·idf.
func (s *Scorer) weigh() {
	for f, boost := range [2]float64{1, contextWeight} {
		for i := range s.Matcher.Terms {
			if s.loaded[f]&(1<<i) != 0 {
				idf := bm25IDF(s.docs, s.df[f][i])
				s.clause[f][i] = boost * idf * idf
			}
		}
	}
	s.order = s.order[:0]
	for f := range 2 {
		for i := range s.Matcher.Terms {
			s.order = append(s.order, uint8(f<<5|i))
		}
	}
	slices.SortStableFunc(s.order, func(a, b uint8) int { return cmp.Compare(s.clause[b>>5][b&31], s.clause[a>>5][a&31]) })
}

// Weights returns the IDF in the shard's content field, smoothed with
// idfPrior, of each term in the set (bit i for Matcher.Terms[i]), and 0
// for the others: how much finding the term says. Terms the shard has never
// seen weigh the most.
func (s *Scorer) Weights(terms uint32) ([]float64, error) {
	if err := s.Load(terms, 0); err != nil {
		return nil, err
	}
	w := make([]float64, len(s.Matcher.Terms))
	for i, df := range s.df[0] {
		if terms&(1<<i) != 0 {
			w[i] = math.Log(1 + (float64(s.docs+idfPrior)-float64(df)+0.5)/(float64(df)+0.5))
		}
	}
	return w, nil
}

// Counts is what an owner's own memories say of a query's terms: how many
// active memories there are, and how many hold each term, by field.
type Counts struct {
	Docs uint64
	DF   [2][32]uint64
}

// Add counts one active memory and the terms it holds.
func (c *Counts) Add(m *Match) {
	c.Docs++
	for f, set := range [2]uint32{m.Content, m.Context} {
		for ; set != 0; set &= set - 1 {
			c.DF[f][bits.TrailingZeros32(set)]++
		}
	}
}

// UseCounts makes the scorer weigh every term by the owner's own counts
// instead of its shard's statistics, and loads nothing from the index.
func (s *Scorer) UseCounts(c *Counts) {
	s.docs = c.Docs
	for f := range s.df {
		copy(s.df[f], c.DF[f][:])
	}
	s.loaded = [2]uint32{s.All(), s.All()}
	s.weigh()
}

// All is the set of all the query's terms.
func (s *Scorer) All() uint32 { return uint32(1)<<len(s.Matcher.Terms) - 1 }

// Load looks up the document frequencies of the terms in inContent and
// inContext (bit sets over Matcher.Terms) that are not loaded yet: from the
// shard's cache, and what it lacks from one snapshot of the shard.
func (s *Scorer) Load(inContent, inContext uint32) error {
	want := [2]uint32{inContent &^ s.loaded[0], inContext &^ s.loaded[1]}
	if want[0]|want[1] == 0 {
		return nil
	}
	_, err := use(context.Background(), s.x, s.owner, func(idx bleve.Index) (struct{}, error) {
		return struct{}{}, s.load(idx, want)
	})
	if err != nil && !errors.Is(err, ErrDamaged) {
		return err
	}
	if s.loaded[0]&want[0] != want[0] || s.loaded[1]&want[1] != want[1] {
		// A shard being rebuilt, or damaged: as in a new shard, every term
		// is unseen.
		s.docs = 0
		s.loaded[0] |= want[0]
		s.loaded[1] |= want[1]
		s.weigh()
	}
	return nil
}

func (s *Scorer) load(idx bleve.Index, want [2]uint32) error {
	docs, err := idx.DocCount()
	if err != nil {
		return err
	}
	sh := s.x.shards[s.x.ShardOf(s.owner)]
	miss := sh.dfs.get(docs, s.Matcher.Terms, want, &s.df)
	s.docs = docs
	if miss[0]|miss[1] != 0 {
		if err := s.read(idx, miss); err != nil {
			return err
		}
		sh.dfs.put(s.Matcher.Terms, miss, &s.df)
	}
	s.loaded[0] |= want[0]
	s.loaded[1] |= want[1]
	s.weigh()
	return nil
}

// read looks the terms up in one snapshot of sh, counting the live
// documents holding each term in every segment's dictionary: what
// TermFieldReader.Count answers, without the postings iterators it also
// prepares (a third of the cost).
func (s *Scorer) read(idx bleve.Index, terms [2]uint32) error {
	ix, err := idx.Advanced()
	if err != nil {
		return err
	}
	r, err := ix.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok { // every shard is created with scorch
		return errors.New("not a scorch index")
	}
	for f, field := range fieldNames {
		if terms[f] == 0 {
			continue
		}
		for i := range s.Matcher.Terms {
			if terms[f]&(1<<i) != 0 {
				s.df[f][i] = 0
			}
		}
		var pl segment.PostingsList
		for _, seg := range snap.Segments() {
			dict, err := seg.Segment().Dictionary(field)
			if err != nil {
				return err
			}
			for i, t := range s.Matcher.Terms {
				if terms[f]&(1<<i) == 0 {
					continue
				}
				if pl, err = dict.PostingsList([]byte(t), seg.Deleted(), pl); err != nil {
					return err
				}
				s.df[f][i] += pl.Count()
			}
		}
	}
	return nil
}

var fieldNames = [2]string{"content", "context"}

// Looking a term up in every segment of a shard was most of what a search
// of a small owner cost, and the same words are looked up again and again.
// IDF barely moves while a shard grows by a few percent, so the frequencies
// are kept until the shard's document count has drifted by dfDrift, or for
// dfTTL at most (a shard whose count stays put while memories are replaced).
// The TTL is long because a shard sees only a few searches a second, and
// conversation has a long tail of words: a short one would miss most.
const (
	dfTTL   = 5 * time.Minute
	dfDrift = 0.05
	dfMax   = 4096 // terms of both fields: at most ~250 KB a shard
)

// dfCache holds document frequencies of one shard, by field and term.
type dfCache struct {
	mu   sync.Mutex
	at   time.Time
	docs uint64
	df   [2]map[string]dfEntry
}

type dfEntry struct {
	df   uint64
	used bool // read since the last eviction
}

// get copies the cached frequencies of the wanted terms into df and
// returns the terms it lacks. It starts over when the shard, now of docs
// documents, has changed too much since the cache began.
func (c *dfCache) get(docs uint64, terms []string, want [2]uint32, df *[2][]uint64) (miss [2]uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	drift := math.Abs(float64(docs)-float64(c.docs)) > dfDrift*float64(c.docs)
	if c.df[0] == nil || drift || time.Since(c.at) > dfTTL {
		c.at, c.docs = time.Now(), docs
		c.df = [2]map[string]dfEntry{{}, {}}
	}
	for f := range want {
		for i, t := range terms {
			if want[f]&(1<<i) == 0 {
				continue
			}
			if e, ok := c.df[f][t]; ok {
				df[f][i] = e.df
				if !e.used {
					c.df[f][t] = dfEntry{e.df, true}
				}
			} else {
				miss[f] |= 1 << i
			}
		}
	}
	return miss
}

// put caches the frequencies of the given terms. A full cache first drops
// the terms not read since it was last full (a second chance: the common
// words of a shard's queries stay).
func (c *dfCache) put(terms []string, which [2]uint32, df *[2][]uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.df[0])+len(c.df[1]) >= dfMax {
		for _, m := range c.df {
			for t, e := range m {
				if e.used {
					m[t] = dfEntry{e.df, false}
				} else {
					delete(m, t)
				}
			}
		}
		if len(c.df[0])+len(c.df[1]) >= dfMax*3/4 { // all read: make room anyway
			c.df = [2]map[string]dfEntry{{}, {}}
		}
	}
	for f := range which {
		for i, t := range terms {
			if which[f]&(1<<i) != 0 {
				c.df[f][t] = dfEntry{df: df[f][i]}
			}
		}
	}
}

func bm25IDF(docs, df uint64) float64 {
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}
