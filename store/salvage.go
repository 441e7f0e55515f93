package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-memory/memory/internal/seal"
)

// SalvageReport is what Salvage copied and what it could not.
type SalvageReport struct {
	// Path is the store file, now the salvaged one; DamagedAt where the
	// damaged file was kept.
	Path      string `json:"path"`
	DamagedAt string `json:"damaged_at"`
	// Records copied, Owners they belong to.
	Records int64 `json:"records"`
	Owners  int   `json:"owners"`
	// Rescued are records read from pages that a damaged page above them
	// cut off (their owner confirmed by the file's index of ids).
	Rescued int64 `json:"rescued"`
	// Lost: memories the file's index of ids names that could not be read
	// (at least: the index may be damaged too). BadRecords: records whose
	// bytes were reached but do not decode.
	Lost       int64 `json:"lost"`
	BadRecords int64 `json:"bad_records"`
	// DamagedPages could not be read; Problems are the first of them.
	DamagedPages int           `json:"damaged_pages"`
	Problems     []string      `json:"problems,omitempty"`
	Took         time.Duration `json:"took_ns"`
}

// ErrNothingToSalvage: the file has no meta page that reads, so nothing
// in it can be found.
var ErrNothingToSalvage = errors.New("nothing can be salvaged")

// Salvage copies every record of the store file at path that can still be
// read into a new file, which then takes its place; the damaged file is
// kept beside it (memory.db.damaged-<time>). Records a damaged page cut
// off from the tree are looked for in the pages no tree reaches, and kept
// when the file's index of ids names the same owner (so a deleted or
// forgotten memory left in a free page never comes back). What is derived
// is made anew from the records: the key of each memory, the index of ids.
// The change log is left empty (its position kept): the search index must
// be rebuilt from the store, as a missing one is at the next start. keys
// open an encrypted store (nil for a plaintext one). The file must not be
// in use: its lock is taken, or ErrLocked.
func Salvage(ctx context.Context, path string, keys *seal.Ring) (*SalvageReport, error) {
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := lockFile(f, time.Second); err != nil {
		return nil, fmt.Errorf("%w: %s is in use, usually by a running Caddy: stop it first", ErrLocked, path)
	}
	pf, err := pageFileOf(f)
	if err != nil && pf == nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNothingToSalvage, path, err)
	}
	tmp := path + ".salvage"
	_ = os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, boltOptions(time.Second))
	if err != nil {
		return nil, err
	}
	sv := &salvager{r: &SalvageReport{Path: path}, meta: metaReader{path: path, keys: keys},
		dst: dst, ids: map[uint64]string{}, found: map[uint64]string{}, seqs: map[string]uint64{}, changed: map[uint64]change{}}
	w := newWalker(pf, sv)
	sv.w = w
	w.run()
	if err == nil && sv.meta.err == nil {
		err = sv.flush()
	}
	if err == nil && sv.meta.err == nil && sv.r.DamagedPages > 0 {
		err = sv.rescue(ctx, pf)
	}
	if err == nil && sv.meta.err == nil {
		err = sv.finish()
	}
	if sv.meta.err != nil {
		err = sv.meta.err // the key is missing or wrong
	}
	if err == nil {
		err = writeFreelist(dst)
	}
	sv.rollback() // a batch left open by an error holds the writer lock Close waits for
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("salvaging %s (it is unchanged): %w", path, err)
	}
	if rep, err := Check(ctx, tmp, CheckOptions{Records: true, Keys: keys}); err != nil || !rep.OK() {
		os.Remove(tmp)
		return nil, fmt.Errorf("salvaging %s (it is unchanged): the new file does not check: %v %v", path, err, rep.Problems)
	}
	sv.r.DamagedAt = fmt.Sprintf("%s.damaged-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(path, sv.r.DamagedAt); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("the damaged file is at %s and the salvaged one at %s: rename it to %s (%w)", sv.r.DamagedAt, tmp, path, err)
	}
	syncDir(filepath.Dir(path))
	sv.r.Took = time.Since(start)
	return sv.r, nil
}

// salvageBatch is how many pairs one transaction of the new file holds.
const salvageBatch = 20_000

// salvager writes what a walk of the damaged file finds into the new one.
type salvager struct {
	r    *SalvageReport
	w    *walker
	meta metaReader
	dst  *bolt.DB
	tx   *bolt.Tx
	n    int
	err  error
	// ids is the damaged file's index of ids (id → owner); found are the
	// records copied (id → owner).
	ids   map[uint64]string
	found map[uint64]string
	// seqs are the sequences of the buckets met, by path.
	seqs map[string]uint64
	// changed is the latest change the log records of each memory: a
	// copy found in a free page that is older is a superseded version (or
	// one purged or forgotten since: those log a change too).
	changed map[uint64]change
	maxID   uint64
}

func (sv *salvager) bucket(path [][]byte, seq uint64) {
	sv.seqs[string(bytes.Join(path, []byte{0}))] = seq
}

func (sv *salvager) pair(path [][]byte, k, v []byte) {
	sv.meta.pair(path, k, v)
	if sv.err != nil || sv.meta.err != nil {
		sv.w.stop()
		return
	}
	switch {
	case len(path) == 1 && bytes.Equal(path[0], bucketIDs):
		sv.ids[decodeU64(k)] = string(v)
		return
	case len(path) == 1 && bytes.Equal(path[0], bucketChanges):
		if len(v) >= 8 {
			id, seq := decodeU64(v[len(v)-8:]), decodeU64(k)
			if c, ok := sv.changed[id]; !ok || seq > c.seq {
				sv.changed[id] = change{seq: seq, owner: string(v[:len(v)-8])}
			}
		}
		return // left empty: the index is rebuilt from the records
	case len(path) == 3 && bytes.Equal(path[0], bucketOwners):
		switch {
		case bytes.Equal(path[2], bucketKeys):
			return // made anew from the records
		case bytes.Equal(path[2], bucketMem):
			sv.record(path[1], k, v, false)
			return
		case bytes.Equal(path[2], bucketVectors):
			if sv.found[decodeU64(k)] != string(path[1]) {
				return // of a memory not copied
			}
		}
	}
	sv.put(path, k, v)
}

func (sv *salvager) damaged(path [][]byte, err error) {
	sv.r.DamagedPages++
	if len(sv.r.Problems) < maxProblems {
		sv.r.Problems = append(sv.r.Problems, fmt.Sprintf("%s: %v", pathString(path), err))
	}
}

// record copies a memory record of owner found under key k, with its key;
// false when it does not read.
func (sv *salvager) record(owner, k, v []byte, rescued bool) bool {
	m, err := sv.meta.record(owner, k, v)
	if err != nil {
		if sv.meta.err == nil && !rescued {
			sv.r.BadRecords++
		}
		return false
	}
	if _, dup := sv.found[m.ID]; dup {
		return false
	}
	path := [][]byte{bucketOwners, owner, bucketMem}
	sv.put(path, k, v)
	if m.Key != "" {
		sv.put([][]byte{bucketOwners, owner, bucketKeys}, sv.meta.crypt.name(labelKey, m.Key), encodeU64(m.ID))
	}
	sv.found[m.ID] = string(owner)
	sv.maxID = max(sv.maxID, m.ID)
	sv.r.Records++
	if rescued {
		sv.r.Rescued++
	}
	return true
}

// put writes a pair into the new file, at the bucket path (made as
// needed; an owner's partition always has its records, keys and refs).
func (sv *salvager) put(path [][]byte, k, v []byte) {
	if sv.err != nil {
		return
	}
	b, err := sv.bucketAt(path)
	if err == nil {
		err = b.Put(bytes.Clone(k), bytes.Clone(v))
	}
	if err != nil {
		sv.err = err
		return
	}
	if sv.n++; sv.n >= salvageBatch {
		sv.err = sv.flush()
	}
}

// bucketAt is the new file's bucket at path, in the open transaction.
func (sv *salvager) bucketAt(path [][]byte) (*bolt.Bucket, error) {
	if sv.tx == nil {
		tx, err := sv.dst.Begin(true)
		if err != nil {
			return nil, err
		}
		sv.tx = tx
	}
	b, err := sv.tx.CreateBucketIfNotExists(path[0])
	for i := 1; err == nil && i < len(path); i++ {
		b, err = b.CreateBucketIfNotExists(path[i])
		if err == nil && i == 1 && bytes.Equal(path[0], bucketOwners) {
			for _, sub := range [][]byte{bucketMem, bucketKeys, bucketRefs} {
				if _, err = b.CreateBucketIfNotExists(sub); err != nil {
					break
				}
			}
		}
	}
	return b, err
}

// flush commits the open transaction.
func (sv *salvager) flush() error {
	if sv.err != nil {
		return sv.err // Salvage rolls the open batch back
	}
	if sv.tx == nil {
		return nil
	}
	err := sv.tx.Commit()
	sv.tx, sv.n = nil, 0
	return err
}

// rollback drops the open transaction, if any: the salvage has failed.
func (sv *salvager) rollback() {
	if sv.tx != nil {
		_ = sv.tx.Rollback()
		sv.tx, sv.n = nil, 0
	}
}

// change is a memory's latest entry in the change log.
type change struct {
	seq   uint64
	owner string
}

// rescue looks in the pages no tree reached for records a damaged page
// cut off: a leaf's pairs whose key is a memory id, that read as their
// owner's record, and were not copied already. The owner is the one the
// file's index of ids names, and the copy no older than the latest change
// the log records of it; or, the id missing from the index (damaged
// too), the log's latest change of it is this very version. Of several
// copies of one (older versions left in free pages), the newest.
func (sv *salvager) rescue(ctx context.Context, pf *pageFile) error {
	type copyOf struct {
		owner string
		k, v  []byte
		seq   uint64
	}
	best := map[uint64]copyOf{}
	for id := uint64(2); id < pf.meta.highWater; id++ {
		if sv.w.isSeen(id) {
			continue
		}
		if id%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		pg, err := pf.page(id)
		if err != nil || pg.flags != flagLeaf {
			continue
		}
		elems, err := leafElems(id, pg.data, pg.count)
		if err != nil {
			continue
		}
		for _, e := range elems {
			if e.bucket || len(e.key) != 8 {
				continue
			}
			mid := decodeU64(e.key)
			last := sv.changed[mid]
			owner, listed := sv.ids[mid]
			if !listed {
				owner = last.owner
			}
			if _, done := sv.found[mid]; done || owner == "" {
				continue
			}
			m, err := sv.meta.record([]byte(owner), e.key, e.value)
			if err != nil || m.Seq < last.seq || !listed && m.Seq != last.seq {
				continue
			}
			if c, ok := best[mid]; !ok || m.Seq > c.seq {
				best[mid] = copyOf{owner: owner, k: bytes.Clone(e.key), v: bytes.Clone(e.value), seq: m.Seq}
			}
		}
	}
	for _, c := range best {
		sv.record([]byte(c.owner), c.k, c.v, true)
	}
	return sv.flush()
}

// finish writes the index of ids of the records copied, and the sequences
// of the buckets met (the next id above every id copied), and counts what
// was lost.
func (sv *salvager) finish() error {
	for id, owner := range sv.found {
		sv.put([][]byte{bucketIDs}, encodeU64(id), []byte(owner))
	}
	for id := range sv.ids {
		if _, ok := sv.found[id]; !ok {
			sv.r.Lost++
		}
	}
	if err := sv.flush(); err != nil {
		return err
	}
	owners := map[string]bool{}
	for _, o := range sv.found {
		owners[o] = true
	}
	sv.r.Owners = len(owners)
	return sv.dst.Update(func(tx *bolt.Tx) error {
		for _, name := range rootBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		for key, seq := range sv.seqs {
			b := bucketPath(tx, bytes.Split([]byte(key), []byte{0}))
			if b == nil {
				continue // met, but nothing in it copied
			}
			if key == string(bucketIDs) {
				seq = max(seq, sv.maxID)
			}
			if err := b.SetSequence(max(seq, b.Sequence())); err != nil {
				return err
			}
		}
		return nil
	})
}

// bucketPath is the bucket at path in tx, or nil.
func bucketPath(tx *bolt.Tx, path [][]byte) *bolt.Bucket {
	b := tx.Bucket(path[0])
	for _, name := range path[1:] {
		if b == nil {
			return nil
		}
		b = b.Bucket(name)
	}
	return b
}
