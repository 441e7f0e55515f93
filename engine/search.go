package engine

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"
	"unicode"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/embed"
	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/norm"
	"github.com/caddy-memory/memory/store"
)

// DefaultMinScore is the relevance floor the proxy uses unless configured:
// a request gets memories when one covers at least 35% of its question
// (see index.Coverage and relevanceWeights). Measured on the LoCoMo dev
// split, it costs 0.004 of recall@5 against no floor, while questions from
// other conversations inject something in 6.5% of cases instead of 91%.
const DefaultMinScore = 0.35

// SearchRequest asks for an owner's memories relevant to a text.
type SearchRequest struct {
	Owner string // stored owner id
	// Session with OnlySession restricts the search to one session.
	Session     string
	OnlySession bool
	Query       string
	Limit       int
	// MinScore drops memories whose coverage of the query (0 to 1: the
	// IDF-weighted share of its terms they hold) is below it.
	MinScore float64
	// ExcludeTurn leaves out the memories learned from this turn (see
	// TurnKey): its transcript and its facts. A request never needs to be
	// told what it says itself, and a tool-call loop re-sending the same turn
	// then gets the same block each time.
	ExcludeTurn string
}

// Result is a retrieved memory.
type Result struct {
	Memory *store.Memory
	Score  float64 // text relevance (fused with vector similarity when embeddings are on)
	Rank   float64 // relevance with priors; results are sorted by it
	// Similarity is the cosine similarity to the question, when the memory
	// was found by meaning.
	Similarity float32
}

// candidatesPerResult is how many index hits are read per result wanted:
// some are dropped as expired, deleted or near-duplicate.
const candidatesPerResult = 3

// Search returns the owner's most relevant active memories, best first. It
// is the retrieval the proxy injects from and the API answers with.
func (e *Engine) Search(ctx context.Context, r SearchRequest) ([]Result, error) {
	if r.Limit <= 0 {
		r.Limit = 10
	}
	size := r.Limit * candidatesPerResult
	// With embeddings on, the question is embedded first (within the
	// query timeout; the vector ranking joins only if it arrives in time).
	em := e.embedding()
	var qvec chan []float32
	if em != nil && strings.TrimSpace(r.Query) != "" {
		qvec = make(chan []float32, 1)
		go func() {
			ctx, cancel := context.WithTimeout(ctx, em.cfg.QueryTimeout)
			defer cancel()
			v, err := em.cfg.Client.Embed(ctx, []string{r.Query})
			if err != nil || len(v) != 1 {
				e.cfg.Observer.EmbeddingFailed()
				if c := e.log().Check(zap.DebugLevel, "embedding the question failed; lexical recall only"); c != nil {
					c.Write(zap.Error(err))
				}
				qvec <- nil
				return
			}
			qvec <- v[0]
		}()
	}
	now := time.Now()
	terms := e.index.Terms(r.Query)
	var qv []float32
	if qvec != nil {
		qv = <-qvec
	}
	// One read transaction for the whole search: a small owner's records
	// are ranked from the store's own bytes and only the memories returned
	// are decoded (decoding all 30 candidates was a sixth of a search's CPU
	// at a million memories, and most of what it allocated). The question's
	// embedding is awaited before: no transaction waits on the network.
	var out []Result
	err := e.store.View(func(tx *store.Tx) error {
		var err error
		out, err = e.searchIn(ctx, tx, r, terms, size, qv, em, now)
		return err
	})
	return out, err
}

// searchIn is Search inside its read transaction, with the question's
// terms and, if embeddings are on and it arrived, its vector qv.
func (e *Engine) searchIn(ctx context.Context, tx *store.Tx, r SearchRequest, terms []string, size int, qv []float32, em *embedder, now time.Time) ([]Result, error) {
	local, ok, err := e.searchLocal(tx, r, terms, size, now)
	if err != nil {
		return nil, err
	}
	defer local.release()
	hits := local.hits
	if !ok {
		hits, err = e.index.Search(ctx, index.Query{
			Owner: r.Owner, Session: r.Session, OnlySession: r.OnlySession,
			Text: r.Query, Terms: terms, Size: size,
		})
		if err != nil {
			return nil, err
		}
	}
	var similar map[uint64]float32
	var vectors *vectorSet
	if qv != nil {
		if vectors, err = e.vectorsOf(tx, em, r.Owner); err != nil {
			return nil, err
		}
		top := vectors.Top(qv, size)
		similar = make(map[uint64]float32, len(top))
		for _, s := range top {
			similar[s.ID] = s.Similarity
		}
		hits = fuse(hits, top)
	}
	if len(hits) == 0 {
		return nil, nil
	}

	score := make(map[uint64]float64, len(hits))
	cands := make([]index.Candidate, 0, len(hits))
	// Memories found in the index (or only by meaning) are read whole; a
	// small owner's, already read, are ranked by their records' Brief and
	// decoded only when returned.
	mems := make(map[uint64]*store.Memory)
	for _, h := range hits {
		var b store.Brief
		var m *store.Memory
		p := local.peeks[h.ID]
		if p != nil {
			if b, err = p.Brief(); err != nil {
				return nil, err
			}
		} else {
			m, err = tx.Get(r.Owner, h.ID)
			if errors.Is(err, store.ErrNotFound) {
				continue // purged after it was indexed
			}
			if err != nil {
				return nil, err
			}
			// The index is derived data: trust only what the owner's own
			// partition says.
			if m.Owner != r.Owner || !m.Active(now) || (r.OnlySession && m.Session != r.Session) {
				continue
			}
			b = store.BriefOf(m)
		}
		if r.ExcludeTurn != "" && b.FromTurn(r.ExcludeTurn) {
			continue
		}
		if _, ok := similar[h.ID]; ok {
			if m == nil {
				if m, err = p.Memory(); err != nil {
					return nil, err
				}
			}
			if vectors.hashes[h.ID] != embed.TextHash(m.Content) {
				delete(similar, h.ID) // a vector of text the memory no longer has
			}
		}
		if p == nil {
			mems[h.ID] = m
		}
		score[h.ID] = h.Score
		cands = append(cands, index.Candidate{ID: h.ID, Score: h.Score, Kind: b.Kind, Updated: b.Updated, Mentions: b.Mentions})
	}
	var f *floor
	if r.MinScore > 0 {
		if f, err = e.newFloor(ctx, r.Owner, r.Query, terms, cands, mems, local); err != nil {
			return nil, err
		}
	}
	index.Rank(cands, now)
	out := make([]Result, 0, r.Limit)
	seen := make(map[uint64]bool, len(cands))
	relevant := f == nil
	for _, c := range cands {
		// The relevance floor, checked in rank order, only as far as needed:
		// the request is about something remembered when one memory covers
		// MinScore of it (or, found by meaning, is similar enough); then
		// memories that cover less but still some of it (a reply that answers
		// the question without its words) come along.
		covers := false
		if f != nil {
			cov := f.coverage(c.ID)
			sim, bySense := similar[c.ID]
			switch {
			case cov >= r.MinScore || (bySense && float64(sim) >= em.cfg.MinSimilarity):
				covers = true
			case cov < r.MinScore*companionFloor && !(bySense && float64(sim) >= em.cfg.MinSimilarity*companionFloor):
				continue
			}
		}
		m := mems[c.ID]
		if m == nil {
			var err error
			if m, err = local.peeks[c.ID].Memory(); err != nil {
				return nil, err
			}
		}
		// Restatements after the floor: hashing the text of every candidate,
		// most of which the floor drops, was 14% of a search's CPU.
		h := norm.Hash(m.Content)
		if seen[h] {
			continue
		}
		seen[h] = true
		relevant = relevant || covers
		out = append(out, Result{Memory: m, Score: score[c.ID], Rank: c.Rank, Similarity: similar[m.ID]})
		if len(out) == r.Limit {
			break
		}
	}
	if !relevant {
		return nil, nil
	}
	return out, nil
}

// rrfK is the constant of reciprocal-rank fusion: a memory's fused score is
// the sum over the rankings it is in of 1/(rrfK + its rank).
const rrfK = 60

// fuse merges the lexical and the vector ranking by reciprocal rank. The
// fused score replaces BM25 as the relevance the priors then adjust.
func fuse(lexical []index.Hit, vector []embed.Scored) []index.Hit {
	fused := make(map[uint64]float64, len(lexical)+len(vector))
	for i, h := range lexical {
		fused[h.ID] += 1 / float64(rrfK+i+1)
	}
	for i, v := range vector {
		fused[v.ID] += 1 / float64(rrfK+i+1)
	}
	out := make([]index.Hit, 0, len(fused))
	for id, sc := range fused {
		out = append(out, index.Hit{ID: id, Score: sc})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID > out[j].ID
	})
	return out
}

// companionFloor is the share of MinScore a memory needs once another
// memory has cleared MinScore itself.
var companionFloor = 0.5

// ConversationOf returns the conversation a provider response id belongs to,
// for requests that continue from a response rather than resend history.
func (e *Engine) ConversationOf(owner, ref string) string {
	return e.store.Conversation(owner, ref)
}

// unknownNameWeight is how much a name the owner never mentioned weighs in
// the relevance floor, against the heaviest term of the query.
const unknownNameWeight = 2.0

// floor holds what the relevance floor of one search needs: each
// candidate's matched terms and the terms' weights.
type floor struct {
	weights          []float64
	content, context map[uint64]uint32
}

func (f *floor) coverage(id uint64) float64 {
	return index.Coverage(f.weights, f.content[id], f.context[id])
}

// newFloor weighs the query's terms for the relevance floor. A word the
// owner has used weighs its IDF. A word the owner never used says nothing
// either way ("suggest a snack" asked of someone whose memories are about
// allergies) and weighs nothing, with one exception: a question about
// someone or something never mentioned, asked in the third person ("What
// did John buy?"), is not about what this owner's memories hold, however many
// ordinary words it shares with them, so such a name (a capitalised word
// inside the question) weighs double the heaviest word. Said in the first
// person ("I live in Oslo", "what should I cook for John?") a new name is
// only context.
//
// "Used" is judged from the candidates: a memory containing a query word
// matches the query, so the words of the candidates are, in practice, the
// query words the owner has used. Only names found in no candidate are
// looked up in the owner's whole index.
func (e *Engine) newFloor(ctx context.Context, owner, query string, terms []string, cands []index.Candidate, mems map[uint64]*store.Memory, local localResult) (*floor, error) {
	sc := local.scorer
	if sc == nil {
		sc = e.index.NewScorer(owner, terms)
	}
	f := &floor{content: make(map[uint64]uint32, len(cands)), context: make(map[uint64]uint32, len(cands))}
	var used uint32
	for _, c := range cands {
		// A small owner's candidates were matched when its records were read;
		// the others are decoded (mems).
		m, ok := local.found[c.ID]
		if !ok {
			mem := mems[c.ID]
			m.Content, m.Context = sc.Matcher.Match(mem.Content), sc.Matcher.Match(mem.Context)
		}
		f.content[c.ID], f.context[c.ID] = m.Content, m.Context
		used |= m.Content | m.Context
	}
	names := map[string]bool{}
	for _, name := range thirdPersonNames(query) {
		for _, t := range e.index.Terms(name) {
			names[t] = true
		}
	}
	var unknown uint32 // names among the unused terms
	for i, t := range sc.Matcher.Terms {
		if used&(1<<i) == 0 && names[t] {
			unknown |= 1 << i
		}
	}
	// The heaviest term is needed, and so every term's weight, only when
	// there is a name to weigh against it.
	weigh := used
	if unknown != 0 {
		weigh = sc.All()
	}
	w, err := sc.Weights(weigh)
	if err != nil {
		return nil, err
	}
	heaviest := 0.0
	for _, x := range w {
		heaviest = max(heaviest, x)
	}
	for i, t := range sc.Matcher.Terms {
		if used&(1<<i) != 0 {
			continue
		}
		w[i] = 0
		if unknown&(1<<i) == 0 {
			continue
		}
		// A small owner's whole partition was read: a name is known when
		// any memory holds it. A larger owner's index is asked.
		has := local.has&(1<<i) != 0
		if local.scorer == nil {
			if has, err = e.index.OwnerHas(ctx, owner, t); err != nil {
				return nil, err
			}
		}
		if !has {
			w[i] = heaviest * unknownNameWeight
		}
	}
	f.weights = w
	return f, nil
}

// thirdPersonNames are the capitalised words of a text that do not start
// a sentence (people, places, products), when the text speaks of others:
// none when it is in the first person.
func thirdPersonNames(text string) []string {
	var out []string
	start := true
	for _, w := range strings.Fields(text) {
		word := strings.Trim(w, `"'()[]{},;:!?.`)
		if firstPerson[strings.ToLower(word)] {
			return nil
		}
		if !start && word != "" && unicode.IsUpper([]rune(word)[0]) {
			out = append(out, word)
		}
		start = strings.HasSuffix(w, ".") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, "!")
	}
	return out
}

var firstPerson = map[string]bool{
	"i": true, "i'm": true, "i've": true, "i'd": true, "i'll": true, "me": true, "my": true,
	"mine": true, "myself": true, "we": true, "we're": true, "we've": true, "us": true, "our": true, "ours": true,
}
