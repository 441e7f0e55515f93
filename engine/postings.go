package engine

import (
	"cmp"
	"container/list"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// Owners the index holds (more than LocalSearchMax memories) are searched
// from an inverted index of their own in memory (index.Postings), built
// from their records' digests in the background after their first search
// (until then, and while one is rebuilt, Bleve answers), and brought up to
// date from the change log at each search after: a Bleve search of a large
// owner costs what the question's words hold in its whole shard, this one
// what they hold in the owner's memories. Owners are admitted while the
// postings are within their budget, and make room only by going unsearched
// for postingsIdle: evicting one owner to build another, when more are
// searched than fit, would spend the CPU the postings save on rebuilding
// them (measured: a quarter of all CPU at 1M memories). An owner not
// admitted is searched through the index.

// DefaultPostingsBudget is the memory the postings of large owners may take
// by default: about 250 to 450 bytes a memory, so 600,000 to 1,000,000 of
// their memories.
const DefaultPostingsBudget = 256 << 20

// postingsIdle is how long an owner's postings stay unsearched before
// they may make room for another's.
const postingsIdle = 10 * time.Minute

// postingsCatchUp is the most changes (of all owners) read to bring an
// owner's postings up to date; further behind, they are built again.
const postingsCatchUp = 20_000

// postingsCache holds owners' postings, least recently searched first.
type postingsCache struct {
	mu     sync.Mutex
	owners map[string]*list.Element // of *ownerPostings
	lru    list.List
	bytes  int
	budget int
	// builds admits one build at a time: a build reads all of an owner's
	// records, and several at once would take the cores from requests.
	builds chan struct{}
	wg     sync.WaitGroup // builds running
}

// ownerPostings is one owner's postings and the change log position they
// are consistent with.
type ownerPostings struct {
	owner string
	// mu is held for reading while searched, for writing while brought
	// up to date.
	mu       sync.RWMutex
	p        *index.Postings
	seq      uint64
	bytes    int  // as last accounted in the cache
	building bool // a build of it is running
	used     atomic.Int64
	// refusedUntil: a build found the owner too large for the room left,
	// and is not tried again before then.
	refusedUntil time.Time
}

// newPostingsCacheFor makes the cache for a configured budget (see
// Config.PostingsBudget).
func newPostingsCacheFor(budget int) *postingsCache {
	return &postingsCache{owners: map[string]*list.Element{}, budget: budgetOf(budget), builds: make(chan struct{}, 1)}
}

// budgetOf is the bytes a configured budget allows.
func budgetOf(budget int) int {
	switch {
	case budget < 0:
		return 0
	case budget == 0:
		return DefaultPostingsBudget
	}
	return budget
}

// UseSearchCache sets the memory the postings of large owners may take
// (see Config.PostingsBudget); owners over a smaller budget keep theirs
// until they have gone unsearched for a while.
func (e *Engine) UseSearchCache(budget int) { e.searcher.useCache(budget) }

func (sr *searcher) useCache(budget int) {
	c := sr.postings
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget = budgetOf(budget)
	if c.budget == 0 { // off: what is held goes
		c.owners, c.bytes = map[string]*list.Element{}, 0
		c.lru.Init()
	}
}

// entry returns owner's entry, made if needed, as the most recent.
func (c *postingsCache) entry(owner string) *ownerPostings {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.owners[owner]; ok {
		c.lru.MoveToBack(el)
		return el.Value.(*ownerPostings)
	}
	o := &ownerPostings{owner: owner}
	c.owners[owner] = c.lru.PushBack(o)
	return o
}

// account records o's new size and, while the cache is over its budget,
// evicts the least recently searched owners idle for postingsIdle (never
// o).
func (c *postingsCache) account(o *ownerPostings, bytes int, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.owners[o.owner]; !ok || el.Value != o {
		return // evicted meanwhile
	}
	c.bytes += bytes - o.bytes
	o.bytes = bytes
	for el := c.lru.Front(); el != nil && c.bytes > c.budget; {
		next := el.Next()
		if v := el.Value.(*ownerPostings); v != o && now.UnixNano()-v.used.Load() > int64(postingsIdle) {
			c.bytes -= v.bytes
			delete(c.owners, v.owner)
			c.lru.Remove(el)
			// A search holding it finishes with it; the next one builds anew.
		}
		el = next
	}
}

// admits reports whether the cache has room for another owner's postings.
func (c *postingsCache) admits() bool { return c.room() > 0 }

// room is the bytes left in the budget.
func (c *postingsCache) room() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.budget - c.bytes
}

// forget drops owner's postings (its memories are gone).
func (c *postingsCache) forget(owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.owners[owner]; ok {
		c.bytes -= el.Value.(*ownerPostings).bytes
		delete(c.owners, owner)
		c.lru.Remove(el)
	}
}

// searchPostings ranks a large owner's memories from its postings, in the
// search's snapshot tx. ok is false when there are none (yet): search the
// index.
func (sr *searcher) searchPostings(tx *store.Tx, r SearchRequest, terms []string, size int, now time.Time) (hits []index.Hit, ok bool, err error) {
	o := sr.postings.entry(r.Owner)
	o.used.Store(now.UnixNano())
	f := index.Filter{Session: r.Session, OnlySession: r.OnlySession, Kinds: r.Kinds, Except: r.ExcludeKinds}
	version, last := sr.index.Digester().Version(), tx.LastSeq()
	// Most searches find them up to date: searches of one owner run
	// side by side. (A snapshot older than the postings finds them newer
	// than itself, which is no harm: a memory it does not have is passed
	// over when the hits are loaded.)
	o.mu.RLock()
	if o.p != nil && o.p.Version() == version && o.seq >= last {
		hits = o.p.Search(sr.index.NewScorer(r.Owner, terms), f, now, size)
		o.mu.RUnlock()
		return hits, true, nil
	}
	o.mu.RUnlock()

	o.mu.Lock()
	defer o.mu.Unlock()
	if o.p != nil && o.p.Version() != version {
		o.p = nil // made with the digests of before an encryption or decryption
	}
	if o.p != nil && o.seq < last {
		caught, err := sr.catchUp(tx, o, last, now)
		if err != nil {
			return nil, false, err
		}
		if !caught {
			o.p = nil
		}
	}
	switch {
	case o.p == nil && sr.postings.admits() && now.After(o.refusedUntil):
		sr.buildPostings(o)
	case o.p != nil && o.p.Dead() > o.p.Live():
		sr.buildPostings(o) // meanwhile, these serve
	}
	if o.p == nil {
		return nil, false, nil
	}
	sr.postings.account(o, o.p.Bytes(), now)
	return o.p.Search(sr.index.NewScorer(r.Owner, terms), f, now, size), true, nil
}

// catchUp applies to o's postings the owner's changes up to last, the end
// of the snapshot tx's log; false when the log no longer has them all, or
// they are too many to read: build them anew.
func (sr *searcher) catchUp(tx *store.Tx, o *ownerPostings, last uint64, now time.Time) (bool, error) {
	changes, oldest := tx.Changes(o.seq, postingsCatchUp)
	if oldest > o.seq+1 || (len(changes) == postingsCatchUp && changes[len(changes)-1].Seq < last) {
		return false, nil
	}
	for _, c := range changes {
		if c.Seq > last {
			break
		}
		if c.Owner != o.owner {
			continue
		}
		if err := sr.repost(tx, o.owner, o.p, c.ID, now); err != nil {
			return false, err
		}
	}
	o.seq = last
	return true, nil
}

// buildPostings builds o's postings in the background, unless a build is
// running. Call with o.mu held.
func (sr *searcher) buildPostings(o *ownerPostings) {
	if o.building {
		return
	}
	select {
	case sr.postings.builds <- struct{}{}:
	default:
		return // another owner's: the next search asks again
	}
	o.building = true
	sr.postings.wg.Add(1)
	go func() {
		defer sr.postings.wg.Done()
		p, seq, err := sr.readPostings(o.owner, sr.postings.room())
		<-sr.postings.builds
		o.mu.Lock()
		o.building = false
		switch {
		case errors.Is(err, errNoRoom):
			o.refusedUntil = sr.now().Add(postingsIdle)
		case err == nil && (o.p == nil || seq >= o.seq):
			o.p, o.seq = p, seq
		}
		o.mu.Unlock()
		switch {
		case errors.Is(err, errNoRoom):
		case err != nil:
			sr.log().Warn("building a large owner's postings failed; its searches use the index", zap.Error(err))
		default:
			sr.postings.account(o, p.Bytes(), sr.now())
		}
	}()
}

// errNoRoom: an owner's postings would not fit in the room left.
var errNoRoom = errors.New("no room for the owner's postings")

// minPostingBytes is the least a memory's postings take.
const minPostingBytes = 200

// readPostings makes owner's postings from its records, and the change log
// position they are consistent with; errNoRoom when the owner holds more
// memories than room bytes can take.
func (sr *searcher) readPostings(owner string, room int) (*index.Postings, uint64, error) {
	p := sr.index.NewPostings()
	g := sr.index.Digester()
	var seq uint64
	err := sr.store.View(func(tx *store.Tx) error {
		fit := room / minPostingBytes
		if n, err := tx.CountAtMost(owner, fit); err != nil || n > fit {
			return cmp.Or(err, errNoRoom)
		}
		seq = tx.LastSeq()
		now := sr.now()
		return tx.PeekAll(owner, func(pk *store.Peek) error {
			if !pk.Active(now) {
				return nil
			}
			b, err := pk.Brief()
			if err != nil {
				return err
			}
			if p.Put(pk.ID, pk.Terms(), b.Kind, pk.Session(), pk.Expires()) {
				return nil
			}
			m, err := pk.Memory() // a record without a current digest
			if err != nil {
				return err
			}
			p.Put(pk.ID, g.Digest(m.Content, m.Context), b.Kind, pk.Session(), pk.Expires())
			return nil
		})
	})
	p.Trim()
	return p, seq, err
}

// repost puts memory id of owner in p as the snapshot tx has it, or takes
// it out.
func (sr *searcher) repost(tx *store.Tx, owner string, p *index.Postings, id uint64, now time.Time) error {
	m, err := tx.Get(owner, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		p.Delete(id)
		return nil
	case err != nil:
		return err
	case !m.Active(now):
		p.Delete(id)
		return nil
	}
	// Get leaves the record's digest out (see store.Memory.Digest): made
	// again from the text.
	p.Put(id, sr.index.Digester().Digest(m.Content, m.Context), m.Kind, m.Session, m.ExpiresAt)
	return nil
}
