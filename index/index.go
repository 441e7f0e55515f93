// Package index owns search and ranking: the Bleve full-text index derived
// from the store (the mapping and analyzer, K on-disk scorch shards chosen by
// a hash of the owner, applying changes in batches that record the last
// change sequence they include, which owners a shard holds, closing shards
// no one has used for a while and reopening them on use, owner-filtered
// search, rebuilding a shard from documents the caller streams in), the
// term digests records carry, ranking a small owner from its records, the
// priors, the relevance floor and fusion with vector recall. It never opens
// the store itself.
//
// It is public, not internal, because it is one of the units the design
// names (DESIGN.md). A user of it may rely on the index being derived
// data: everything it holds is rebuilt from the store, and an index
// directory may be deleted at any time; how it ranks and what its search
// calls take serve this module's own packages and change with it.
package index

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Internal keys each shard stores beside its documents, in the same batch.
var (
	keyApplied = []byte("applied_seq")
	keyMapping = []byte("mapping_version")
)

// Doc is a memory as the index sees it. Delete removes the document.
type Doc struct {
	ID      uint64
	Owner   string
	Session string
	Kind    string
	Content string
	// Context is searchable text around the memory, weighted less.
	Context string
	Delete  bool
	// Enrol records that the index holds Owner from now on: the same batch
	// carries all of the owner's active memories, and every later change
	// of the owner is applied. ID and the text are ignored.
	Enrol bool
}

// State of a shard.
type State int

// Shard states.
const (
	Ready      State = iota
	Rebuilding       // being rebuilt from the store; searches see nothing yet
	Damaged          // its files failed as they were read (damage.go)
)

// parallelApply is the batch size from which shards are indexed in parallel.
const parallelApply = 1000

// ErrClosed is returned after Close.
var ErrClosed = errors.New("index closed")

type shard struct {
	wmu   sync.Mutex   // serialises batches, so applied only moves forward
	mu    sync.RWMutex // guards idx, state, applied, parked and docs against a rebuild swap or a park
	idx   bleve.Index
	state State
	// parked: idx is closed until the next use reopens it (park.go); docs
	// is its document count when it was parked (nothing changes it meanwhile).
	parked  bool
	docs    uint64
	used    atomic.Int64  // when it was last used (UnixNano of the index's clock)
	applied atomic.Uint64 // last change sequence durably in this shard
	path    string
	i       int // its number
	dfs     dfCache
	// held caches the owners known to be enrolled; a rebuild replaces it.
	heldMu  sync.Mutex
	held    map[string]bool // false: known not to be enrolled
	notHeld int             // of held, those false
}

// Index is a set of K shards in one directory.
type Index struct {
	dir     string
	timeout time.Duration
	mapping mapping.IndexMapping
	shards  []*shard
	closed  bool
	closeMu sync.RWMutex

	fillerOnce sync.Once
	fillers    map[string]bool // analysed forms of the query filler words
	bridgeOnce sync.Once
	bridge     bridge // analysed words of the domains of everyday life (bridge.go)

	digester  atomic.Pointer[Digester]
	onDamaged atomic.Pointer[func(shard int, err error)]

	now func() time.Time // when a shard is used, and how long ago (park.go)
}

// Digester makes and reads the digests of this index's storage.
func (x *Index) Digester() *Digester {
	if g := x.digester.Load(); g != nil {
		return g
	}
	return plainDigester
}

// UseDigestKey keys the digests from now on (nil: unkeyed); see Digester.
func (x *Index) UseDigestKey(key []byte) { x.digester.Store(NewDigester(key)) }

// Open opens, or creates, the K shards under dir. A shard that is missing, will
// not open, or was built with another mapping is recreated empty, with nothing
// applied; the caller refills it from its change log or with Rebuild.
func Open(dir string, k int, lockTimeout time.Duration) (*Index, error) {
	if k < 1 {
		return nil, fmt.Errorf("index shards must be at least 1, got %d", k)
	}
	if lockTimeout <= 0 {
		lockTimeout = time.Second
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating index directory: %w", err)
	}
	// Absolute: the keys of the index hooks are found by path (hooks.go).
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	x := &Index{dir: dir, timeout: lockTimeout, mapping: newMapping(), shards: make([]*shard, k), now: time.Now}
	for i := range x.shards {
		s := &shard{path: filepath.Join(dir, fmt.Sprintf("shard-%03d", i)), i: i}
		s.used.Store(x.now().UnixNano())
		x.shards[i] = s
		if err := x.openShard(s); err != nil {
			x.Close()
			return nil, err
		}
	}
	return x, nil
}

// openShard opens s, recreating it empty when it is absent or unusable.
func (x *Index) openShard(s *shard) error {
	cfg := x.runtimeConfig()
	err := checkSegments(s.path)
	var idx bleve.Index
	if err == nil {
		idx, err = bleve.OpenUsing(s.path, cfg)
	}
	if err == nil {
		v, _ := idx.GetInternal(keyMapping)
		// A shard in the clear in an encrypted storage (written before the
		// storage was encrypted) starts again, sealed.
		ids, err := writerIDs(idx)
		if string(v) == shardVersion() && err == nil && x.sealing(ids) != sealedWrong {
			a, _ := idx.GetInternal(keyApplied)
			s.idx, s.state = idx, Ready
			s.applied.Store(decodeSeq(a))
			return nil
		}
		idx.Close()
	} else if isLockTimeout(err) {
		return fmt.Errorf("index shard %s is held by another process (usually another running Caddy on the same storage): %w", s.path, err)
	}
	// Missing, corrupt, or another mapping: the store is the source of truth,
	// so start the shard again.
	if err := os.RemoveAll(s.path); err != nil {
		return fmt.Errorf("removing unusable index shard %s: %w", s.path, err)
	}
	idx, err = x.create(s.path)
	if err != nil {
		return err
	}
	s.idx, s.state = idx, Ready
	s.applied.Store(0)
	return nil
}

func (x *Index) create(path string) (bleve.Index, error) {
	idx, err := bleve.NewUsing(path, x.mapping, scorch.Name, scorch.Name,
		x.runtimeConfig())
	if err != nil {
		return nil, fmt.Errorf("creating index shard %s: %w", path, err)
	}
	if err := idx.SetInternal(keyMapping, []byte(shardVersion())); err != nil {
		idx.Close()
		return nil, err
	}
	return idx, nil
}

// runtimeConfig is how every shard is opened: with a lock timeout, so a
// second opener gets an error instead of waiting forever, and a merge policy
// for a steady stream of small batches.
func (x *Index) runtimeConfig() map[string]interface{} {
	return map[string]interface{}{
		"bolt_timeout": x.timeout.String(),
		// Scorch's floor of 2000 documents puts every segment of a shard
		// under that size in one tier, so each merge of the new small
		// segments would re-merge the whole shard, and merges in every
		// shard at once stall requests. With a floor of 100, new segments
		// merge among themselves; searches see a few more segments.
		"scorchMergePlanOptions": map[string]interface{}{"FloorSegmentSize": 100},
	}
}

// isLockTimeout recognises bbolt's lock timeout, which some bleve paths
// return wrapped with %v rather than %w.
func isLockTimeout(err error) bool {
	return errors.Is(err, bolterrors.ErrTimeout) || strings.HasSuffix(err.Error(), bolterrors.ErrTimeout.Error())
}

// K is the number of shards.
func (x *Index) K() int { return len(x.shards) }

// ShardOf is the shard that holds owner's memories.
func (x *Index) ShardOf(owner string) int { return Shard(owner, len(x.shards)) }

// Shard is the shard of k that holds owner's memories.
func Shard(owner string, k int) int {
	h := fnv.New32a()
	h.Write([]byte(owner))
	return int(h.Sum32() % uint32(k))
}

// Applied is the last change sequence shard i holds, and its state.
func (x *Index) Applied(i int) (uint64, State) {
	s := x.shards[i]
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.applied.Load(), s.state
}

// SetState marks shard i as Rebuilding (searches see nothing) or Ready.
// A Damaged shard is Ready again only once rebuilt.
func (x *Index) SetState(i int, st State) {
	s := x.shards[i]
	s.mu.Lock()
	if s.state != Damaged {
		s.state = st
	}
	s.mu.Unlock()
}

// Apply indexes or deletes docs and records seq as applied in every shard it
// touches, atomically with the documents. Docs for a rebuilding shard are
// skipped: the rebuild reads the store after them, or replays them.
func (x *Index) Apply(docs []Doc, seq uint64) error {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.closed {
		return ErrClosed
	}
	byShard := make(map[int][]Doc)
	for _, d := range docs {
		i := x.ShardOf(d.Owner)
		byShard[i] = append(byShard[i], d)
	}
	// Shards are independent indexes: a large catch-up (ingest, replay) is
	// batched in parallel, one worker per core. The steady trickle of
	// proxied turns uses one worker, so a core stays free for requests.
	workers := 1
	if len(docs) >= parallelApply {
		workers = runtime.GOMAXPROCS(0)
	}
	work := make(chan int, len(byShard))
	for i := range byShard {
		work <- i
	}
	close(work)
	errs := make(chan error, len(byShard))
	var wg sync.WaitGroup
	for range min(workers, len(byShard)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				errs <- x.applyShard(x.shards[i], byShard[i], seq)
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

func (x *Index) applyShard(s *shard, docs []Doc, seq uint64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	x.acquire(s)
	idx := s.idx
	err := x.applyLocked(s, docs, seq)
	s.mu.RUnlock()
	if err != nil && !errors.Is(err, errNotIndexable) {
		return x.checked(context.Background(), s, idx, fmt.Errorf("writing index shard %s: %w", s.path, err))
	}
	return err
}

// errNotIndexable: a document the mapping refuses, which says nothing of
// the shard's files.
var errNotIndexable = errors.New("not indexable")

// applyLocked is applyShard with s.wmu and s.mu (for reading) held.
func (x *Index) applyLocked(s *shard, docs []Doc, seq uint64) error {
	if s.state != Ready || s.idx == nil || seq <= s.applied.Load() {
		return nil
	}
	b := s.idx.NewBatch()
	var enrolled []string
	for _, d := range docs {
		switch {
		case d.Enrol:
			enrolled = enrol(b, d.Owner, enrolled)
		case d.Delete:
			b.Delete(docID(d.ID))
		default:
			if err := b.Index(docID(d.ID), fields(d)); err != nil {
				return fmt.Errorf("%w: memory %d: %w", errNotIndexable, d.ID, err)
			}
		}
	}
	b.SetInternal(keyApplied, encodeSeq(seq))
	if err := s.idx.Batch(b); err != nil {
		return err
	}
	s.applied.Store(seq)
	s.setHeld(enrolled, false)
	return nil
}

// MarkApplied records seq as applied in shard i without changing documents;
// used before the change log is trimmed, for shards no recent change touched.
func (x *Index) MarkApplied(i int, seq uint64) error {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.closed {
		return ErrClosed
	}
	return x.applyShard(x.shards[i], nil, seq)
}

// Rebuild replaces shard i with the documents feed produces, recorded as
// applied up to seq (the store snapshot feed reads from). The old shard
// serves searches until the swap; a shard in the Rebuilding or Damaged
// state is Ready again on success.
func (x *Index) Rebuild(i int, seq uint64, feed func(add func(Doc) error) error) error {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.closed {
		return ErrClosed
	}
	s := x.shards[i]
	tmp := s.path + ".rebuild"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	idx, err := x.create(tmp)
	if err != nil {
		return err
	}
	const batchSize = 1000
	b := idx.NewBatch()
	flush := func(final bool) error {
		if final {
			b.SetInternal(keyApplied, encodeSeq(seq))
		}
		if b.Size() == 0 && !final {
			return nil
		}
		err := idx.Batch(b)
		b.Reset()
		return err
	}
	var enrolled []string
	err = feed(func(d Doc) error {
		if d.Enrol {
			enrolled = enrol(b, d.Owner, enrolled)
			return nil
		}
		if d.Delete {
			return nil
		}
		if err := b.Index(docID(d.ID), fields(d)); err != nil {
			return err
		}
		if b.Size() >= batchSize {
			return flush(false)
		}
		return nil
	})
	if err == nil {
		err = flush(true)
	}
	if cerr := idx.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("rebuilding index shard %s: %w", s.path, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idx != nil {
		s.idx.Close()
		s.idx = nil
	}
	s.parked = false
	if err := os.RemoveAll(s.path); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return err
	}
	idx, err = bleve.OpenUsing(s.path, x.runtimeConfig())
	if err != nil {
		s.state = Damaged // no index to search until the next rebuild
		return fmt.Errorf("reopening rebuilt index shard %s: %w", s.path, err)
	}
	s.idx, s.state = idx, Ready
	s.applied.Store(seq)
	s.setHeld(enrolled, true)
	return nil
}

// DocCount is the number of documents in all shards (a parked shard's as
// it was parked: it is not reopened to count them).
func (x *Index) DocCount() uint64 {
	var n uint64
	for _, s := range x.shards {
		s.mu.RLock()
		switch {
		case s.parked:
			n += s.docs
		case s.idx != nil:
			c, _ := s.idx.DocCount()
			n += c
		}
		s.mu.RUnlock()
	}
	return n
}

// Close closes every shard. It waits for searches and batches in flight.
func (x *Index) Close() error {
	x.closeMu.Lock()
	defer x.closeMu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	var errs []error
	for _, s := range x.shards {
		if s == nil {
			continue
		}
		s.mu.Lock()
		if s.idx != nil {
			errs = append(errs, s.idx.Close())
			s.idx = nil
		}
		s.parked = false
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

func docID(id uint64) string { return strconv.FormatUint(id, 16) }

func parseDocID(s string) (uint64, error) { return strconv.ParseUint(s, 16, 64) }

func encodeSeq(seq uint64) []byte { return []byte(strconv.FormatUint(seq, 10)) }

func decodeSeq(b []byte) uint64 {
	v, _ := strconv.ParseUint(string(b), 10, 64)
	return v
}
