// Package recall is the read path: it plans and executes a search of an
// owner's memories and the recall the proxy injects, in one place. A
// search reads an owner's memories from its postings in memory, its
// records, or the index (sources.go), by meaning too when embedding recall
// is on, and ranks what it finds (search.go); a recall adds the owner's
// profile (profile.go), leaves out what a later fact contradicts or what
// the user only asked (contradict.go, asked.go), and renders the block
// (recall.go). It writes nothing: the engine keeps the store, the index,
// the postings and the vectors up to date, and hands them in (Config).
package recall

import (
	"context"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/embed"
	"github.com/caddy-memory/memory/internal/ownercache"
	"github.com/caddy-memory/memory/store"
)

// DefaultLocalSearchMax is the most memories an owner may have for a
// search to read its records instead of querying the index. Reading costs
// about 1 µs a memory; a Bleve query costs in proportion to the postings of
// the question's words in the whole shard, which holds other owners too:
// the records are cheaper up to a few hundred memories in a large store.
const DefaultLocalSearchMax = 256

// Config is what a Searcher reads: the narrow inputs of the read path.
type Config struct {
	Store *store.DB
	Index *index.Index
	// Postings are every owner's postings in memory (nil: none).
	Postings Postings
	// Embedding returns recall by meaning while it is on, nil while it is
	// off (nil: always off).
	Embedding func() Embedding
	// LocalSearchMax is the most memories an owner may have to be searched
	// from its records (0: none is), asked at each search.
	LocalSearchMax func() int
	// Clock tells the time.
	Clock func() time.Time
}

// Postings are every owner's postings in memory (index.Postings), as the
// engine builds them and follows the store into them.
type Postings interface {
	// Current returns owner's postings when they hold it and have applied
	// every change of its that tx has, nil otherwise: the search reads the
	// records or the index then. (A snapshot older than the postings finds
	// them newer than itself, which is no harm: a memory it does not have
	// is passed over when the hits are read.)
	Current(tx *store.Tx, owner string) *index.Owner
}

// Embedding is recall by meaning, while it is on.
type Embedding interface {
	// Embed returns the question's vector, or nil when it did not come in
	// time (the embedding's to count and log): the search is lexical then.
	Embed(ctx context.Context, question string) []float32
	// Vectors returns owner's vectors as of tx.
	Vectors(tx *store.Tx, owner string) (*Vectors, error)
	// MinSimilarity is the cosine similarity at which a memory found by
	// meaning counts as relevant.
	MinSimilarity() float64
}

// Vectors are an owner's vectors, each with the hash of the text it was
// made from (embed.TextHash): a memory whose text changed since is not
// found by meaning.
type Vectors struct {
	embed.Set
	Hashes map[uint64]uint64
}

// Searcher finds an owner's memories for a question: it plans each search
// (an owner's records, its postings in memory, or the index; by meaning
// too with embedding recall on) and ranks what it finds, and it makes the
// block a recall injects, the owner's profile first. It holds what
// searches keep in memory between requests: the owners' profiles, and
// which turns only asked something. It is safe for concurrent use.
type Searcher struct {
	cfg      Config
	profiles *ownercache.Cache[*profile] // owners' standing facts (profile.go)
	asked    askedCache                  // turns in which the user only asked something
}

// New makes a Searcher over cfg's inputs.
func New(cfg Config) *Searcher {
	return &Searcher{cfg: cfg, profiles: newProfileCache()}
}

func (s *Searcher) now() time.Time { return s.cfg.Clock() }

// embedding is recall by meaning as it is on now, nil while it is off.
func (s *Searcher) embedding() Embedding {
	if s.cfg.Embedding == nil {
		return nil
	}
	return s.cfg.Embedding()
}

// Outgrown reports whether owner has more memories than a search reads
// from its records (localSearchMax): the owners the index holds, and
// searches go through.
func Outgrown(tx *store.Tx, owner string, localSearchMax int) (bool, error) {
	n, err := tx.CountAtMost(owner, localSearchMax)
	return n > localSearchMax, err
}

func (s *Searcher) outgrown(tx *store.Tx, owner string) (bool, error) {
	return Outgrown(tx, owner, s.cfg.LocalSearchMax())
}
