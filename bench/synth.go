package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

// common are everyday English words; with a long tail of rarer generated
// words they make text whose term statistics look like conversation.
var common = strings.Fields(`time year people way day man thing woman life child world school state family
student group country problem hand part place case week company system program question work government
number night point home water room mother area money story fact month lot right study book eye job word
business issue side kind head house service friend father power hour game line end member law car city
community name president team minute idea kid body information back parent face others level office door
health person art war history party result change morning reason research girl guy moment air teacher
force education foot boy age policy music market sense nation plan college interest death experience
effect use class control care field development role effort rate heart drug show leader light voice wife
police mind price report decision son view relationship town road arm difference value building action
model season society tax director position player record paper space ground form event official matter
center couple site project activity star table need court oil situation cost industry figure street image
phone data picture practice piece land product doctor wall patient worker news test movie north love
support technology step baby computer type attention film tree source organization hair window evidence
population truth song energy rock garden coffee trip beach bike dog cat dinner recipe guitar pottery hike
camping painting concert flight hotel budget salary rent apartment vacation birthday wedding exam course`)

// vocab draws words: common ones often, rare ones seldom (Zipf).
type vocab struct {
	rng  *rand.Rand
	zipf *rand.Zipf
}

func newVocab(seed uint64) *vocab {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return &vocab{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, 40_000)}
}

func (v *vocab) word() string {
	i := v.zipf.Uint64()
	if i < uint64(len(common)) {
		return common[i]
	}
	return fmt.Sprintf("w%x", i) // the long tail
}

func (v *vocab) words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = v.word()
	}
	return out
}

// memory makes one synthetic memory: mostly transcript turns (with the
// context a proxied turn gets), some short facts.
func (v *vocab) memory(owner int, i int, at time.Time) store.Put {
	if v.rng.IntN(10) < 3 {
		w := v.words(4)
		return store.Put{Kind: "preference", Key: fmt.Sprintf("preference:%s", w[0]),
			Content: "User likes " + strings.Join(w, " ") + ".", Time: at}
	}
	user := strings.Join(v.words(12+v.rng.IntN(12)), " ")
	answer := strings.Join(v.words(20+v.rng.IntN(20)), " ")
	return store.Put{Kind: "turn", Key: fmt.Sprintf("turn:bench:%d:%d", owner, i), Time: at,
		Content: "User: " + user + "\nAssistant: " + answer,
		Context: strings.Join(v.words(40), " "), Meta: map[string]string{"conversation": fmt.Sprintf("c-%d", owner)}}
}

// ownerKey is the raw owner value (an API key) of synthetic owner i.
func ownerKey(i int) string { return fmt.Sprintf("sk-bench-%05d", i) }

// mix is how memories are spread over owners.
type mix string

const (
	// uniform gives every owner the same number of memories.
	uniform mix = "uniform"
	// heavy is a deployment's shape: most owners hold a few dozen memories,
	// a tenth of a percent of them (those who chat daily for a year) hold
	// 10,000 to 50,000, and a percent in between hold 500 to 5,000. The
	// large take 30% of the memories, the middle 30%, the small the rest.
	heavy mix = "heavy"
)

// sizes returns how many memories each of owners holds, n in all.
func (m mix) sizes(n, owners int) []int {
	sz := make([]int, owners)
	if m != heavy {
		for i := range n {
			sz[i%owners]++
		}
		return sz
	}
	o, left := 0, n
	// tier gives owners from o on sizes lo, lo+step, ..., hi, again and
	// again, until budget is spent (the last takes what is left).
	tier := func(budget, lo, hi, step, most int) {
		for k := 0; budget > 0 && o < owners-1 && k < most; k++ {
			s := min(lo+(k*step)%(hi-lo+step), budget)
			sz[o], budget, left, o = s, budget-s, left-s, o+1
		}
	}
	tier(n*3/10, 10_000, 50_000, 10_000, max(1, owners/1000))
	tier(n*3/10, 500, 5_000, 500, max(1, owners/100))
	for i := o; i < owners; i++ {
		sz[i] = left / (owners - o)
	}
	for i := o; i < o+left%(owners-o); i++ {
		sz[i]++
	}
	return sz
}

// preload writes n memories over owners, sized by m, through the engine,
// in large transactions (unless write is false: a storage preloaded
// before). It returns the words of each owner's memories, for realistic
// questions, and each owner's size.
func preload(e *engine.Engine, n, owners int, m mix, seed uint64, write bool) (map[int][]string, []int, error) {
	v := newVocab(seed)
	sizes := m.sizes(n, owners)
	words := make(map[int][]string, owners)
	base := time.Now().Add(-365 * 24 * time.Hour)
	// Texts come from a pool made beforehand: drawing a hundred Zipf words
	// per memory would be much of an ingest's CPU, measuring the generator
	// rather than the engine. Each memory still gets its own
	// owner, key and time; the pool's size is a prime, so an owner's
	// memories (every owners-th) are distinct texts.
	pool := make([]store.Put, min(n, 20_011))
	for i := range pool {
		pool[i] = v.memory(0, i, base)
	}
	// Memories are made owner by owner in rounds, as they would have
	// been learned: round r gives one memory to every owner holding more
	// than r.
	order := func(yield func(i, o int) bool) {
		i := 0
		for r := 0; i < n; r++ {
			for o, s := range sizes {
				if s > r {
					if !yield(i, o) {
						return
					}
					i++
				}
			}
		}
	}
	if !write {
		for i, o := range order {
			if len(words[o]) < 64 {
				words[o] = append(words[o], strings.Fields(pool[i%len(pool)].Content)[1:4]...)
			}
		}
		return words, sizes, nil
	}
	const perTx = 5000
	batch := make([]engine.OwnedPut, 0, perTx)
	flush := func() error {
		_, err := e.Remember(context.Background(), batch...)
		batch = batch[:0]
		return err
	}
	for i, o := range order {
		p := pool[i%len(pool)]
		p.Time = base.Add(time.Duration(i) * time.Second)
		switch p.Kind {
		case "turn":
			p.Key = fmt.Sprintf("turn:bench:%d:%d", o, i)
			p.Meta = map[string]string{"conversation": fmt.Sprintf("c-%d", o)}
		case "preference":
			// A key of its own: the pool's keys repeat, and a large owner's
			// facts would supersede each other down to a few.
			p.Key = fmt.Sprintf("preference:%d", i)
		}
		if len(words[o]) < 64 {
			words[o] = append(words[o], strings.Fields(p.Content)[1:4]...)
		}
		batch = append(batch, engine.OwnedPut{Owner: e.OwnerID(ownerKey(o)), Put: p})
		if len(batch) == perTx {
			if err := flush(); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return nil, nil, err
		}
	}
	return words, sizes, nil
}

// question makes a question about an owner's memories: a few of their
// words among everyday ones.
func (v *vocab) question(words []string) string {
	q := []string{"Can you remind me about the"}
	for range 2 {
		if len(words) > 0 {
			q = append(q, words[v.rng.IntN(len(words))])
		}
	}
	q = append(q, v.words(3)...)
	return strings.Join(q, " ") + "?"
}
