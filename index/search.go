package index

import (
	"context"
	"fmt"
	"sort"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
)

// contextWeight is how much a query term found only around a memory counts
// against one found in it.
var contextWeight = 0.5

// MaxQueryTerms caps the distinct terms a search uses: a pasted page of text
// must not turn into a query over thousands of postings lists.
const MaxQueryTerms = 16

// Query is a search for one owner's memories.
type Query struct {
	Owner string
	// Session, when set, restricts the search to memories of that session.
	Session     string
	OnlySession bool
	Text        string
	// Terms are Text analysed by Terms, for a caller that has them
	// already; when nil, Search analyses Text.
	Terms []string
	Size  int
	// Kinds, when set, restricts the search to memories of these kinds;
	// ExcludeKinds leaves memories of these kinds out.
	Kinds, ExcludeKinds []string
}

// Hit is a matching memory and its BM25 score.
type Hit struct {
	ID    uint64
	Score float64
}

// fillers are conversational words that carry no topic: "can you tell me
// what I had for dinner today" should search for "dinner", not for "tell"
// and "today". They are dropped from queries only; memories keep them.
// Preference verbs ("like", "love", "want") are not fillers: "what do I
// like" has nothing else to search for.
var fillers = []string{
	"please", "thank", "thanks", "hi", "hello", "hey", "ok", "okay", "yes", "yeah", "no",
	"tell", "say", "said", "know", "think", "need", "help", "let", "remember",
	"get", "got", "make", "give", "show", "explain", "describe", "write", "go", "going",
	"good", "great", "nice", "thing", "something", "anything", "everything", "stuff",
	"can", "could", "would", "should", "will", "also", "just", "really", "maybe", "still",
	"now", "today", "well", "right", "sure", "much", "many", "lot", "way", "kind", "sort",
	"question", "answer", "ask", "mean", "actually", "pretty", "quite", "bit",
}

// Terms analyses text as the index analyses memory content and returns its
// distinct terms, without filler words, keeping the longest MaxQueryTerms
// when there are more.
func (x *Index) Terms(text string) []string {
	a := x.mapping.AnalyzerNamed(contentAnalyzer)
	if a == nil {
		return nil
	}
	x.fillerOnce.Do(func() {
		x.fillers = make(map[string]bool)
		for _, f := range fillers {
			for _, tok := range a.Analyze([]byte(f)) {
				x.fillers[string(tok.Term)] = true
			}
		}
	})
	seen := make(map[string]bool)
	var terms []string
	for _, tok := range a.Analyze([]byte(text)) {
		t := string(tok.Term)
		if t == "" || seen[t] || x.fillers[t] {
			continue
		}
		seen[t] = true
		terms = append(terms, t)
	}
	if len(terms) > MaxQueryTerms {
		// Longer terms are rarer and say more about the topic.
		sort.SliceStable(terms, func(i, j int) bool { return len(terms[i]) > len(terms[j]) })
		terms = terms[:MaxQueryTerms]
	}
	return terms
}

// Search returns the owner's memories that share terms with q.Text, best
// first. Every query is a conjunction with the owner (or owner+session) term,
// built from term queries, never from a query string, so neither the text nor
// the caller can reach another owner's documents. A shard being rebuilt
// answers with no hits, a damaged one with ErrDamaged.
func (x *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	terms := q.Terms
	if terms == nil {
		terms = x.Terms(q.Text)
	}
	if len(terms) == 0 || q.Owner == "" {
		return nil, nil
	}
	var scope *query.TermQuery
	if q.OnlySession {
		scope = bleve.NewTermQuery(ownerSession(q.Owner, q.Session))
		scope.SetField("os")
	} else {
		scope = bleve.NewTermQuery(q.Owner)
		scope.SetField("owner")
	}
	text := make([]query.Query, 0, 2*len(terms))
	for _, t := range terms {
		tq := bleve.NewTermQuery(t)
		tq.SetField("content")
		cq := bleve.NewTermQuery(t)
		cq.SetField("context")
		cq.SetBoost(contextWeight)
		text = append(text, tq, cq)
	}
	size := q.Size
	if size <= 0 {
		size = 10
	}
	must := []query.Query{scope, bleve.NewDisjunctionQuery(text...)}
	if len(q.Kinds) > 0 {
		kinds := make([]query.Query, len(q.Kinds))
		for i, k := range q.Kinds {
			kq := bleve.NewTermQuery(k)
			kq.SetField("kind")
			kinds[i] = kq
		}
		must = append(must, bleve.NewDisjunctionQuery(kinds...))
	}
	var q0 query.Query = bleve.NewConjunctionQuery(must...)
	if len(q.ExcludeKinds) > 0 {
		not := make([]query.Query, len(q.ExcludeKinds))
		for i, k := range q.ExcludeKinds {
			kq := bleve.NewTermQuery(k)
			kq.SetField("kind")
			not[i] = kq
		}
		q0 = query.NewBooleanQuery(must, nil, not)
	}
	req := bleve.NewSearchRequestOptions(q0, size, 0, false)
	return use(ctx, x, q.Owner, func(idx bleve.Index) ([]Hit, error) { return hitsOf(ctx, idx, req) })
}

// hitsOf runs req on idx and returns the memories it finds.
func hitsOf(ctx context.Context, idx bleve.Index, req *bleve.SearchRequest) ([]Hit, error) {
	res, err := idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		id, err := hitID(h)
		if err != nil {
			return nil, err
		}
		hits = append(hits, Hit{ID: id, Score: h.Score})
	}
	return hits, nil
}

// hitID is the memory a hit is. Every document is indexed under its
// memory's id: one that does not read is damage (the stored fields of a
// segment), which would otherwise make searches find nothing, silently.
func hitID(h *search.DocumentMatch) (uint64, error) {
	id, err := parseDocID(h.ID)
	if err != nil {
		return 0, fmt.Errorf("a document's id %q does not read", h.ID)
	}
	return id, nil
}

// idfPrior is a number of background documents, without any of the
// terms, counted into every IDF: over the few memories of a new owner, raw
// IDF swings wildly (a word in 1 of 3 memories outweighs one in 3 of 3
// sevenfold); with the prior it weighs about a third more, as it would in a
// large store.
const idfPrior = 100

// OwnerHas reports whether any of owner's memories contains term in its
// content.
func (x *Index) OwnerHas(ctx context.Context, owner, term string) (bool, error) {
	own := bleve.NewTermQuery(owner)
	own.SetField("owner")
	tq := bleve.NewTermQuery(term)
	tq.SetField("content")
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(own, tq), 0, 0, false)
	req.Score = "none"
	res, err := use(ctx, x, owner, func(idx bleve.Index) (*bleve.SearchResult, error) {
		return idx.SearchInContext(ctx, req)
	})
	if err != nil || res == nil {
		return false, err
	}
	return res.Total > 0, nil
}

// shardFor read-locks the index and owner's shard, so neither Close nor a
// rebuild's swap happens under the caller; unlock releases both.
func (x *Index) shardFor(owner string) (s *shard, unlock func(), err error) {
	x.closeMu.RLock()
	if x.closed {
		x.closeMu.RUnlock()
		return nil, nil, ErrClosed
	}
	s = x.shards[x.ShardOf(owner)]
	x.acquire(s)
	return s, func() { s.mu.RUnlock(); x.closeMu.RUnlock() }, nil
}

// OwnerKind returns up to size of owner's memories of one kind, in no
// particular order.
func (x *Index) OwnerKind(ctx context.Context, owner, kind string, size int) ([]uint64, error) {
	own := bleve.NewTermQuery(owner)
	own.SetField("owner")
	kq := bleve.NewTermQuery(kind)
	kq.SetField("kind")
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(own, kq), size, 0, false)
	req.Score = "none"
	hits, err := use(ctx, x, owner, func(idx bleve.Index) ([]Hit, error) { return hitsOf(ctx, idx, req) })
	ids := make([]uint64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids, err
}
