package store

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Forgotten counts what ForgetOwner removed.
type Forgotten struct {
	Memories int `json:"memories"`
	History  int `json:"history"`
	Jobs     int `json:"jobs"`
}

// ForgetOwner removes everything the store holds for an owner: memories
// (transcripts and facts), their history, conversation references and
// pending jobs. Each memory's removal is logged, so the index drops it too.
// The bytes stay in the file's free pages until Compact.
func (t *Tx) ForgetOwner(owner string) (Forgotten, error) {
	var f Forgotten
	var err error
	if f.Jobs, err = t.deleteJobsOf(owner); err != nil {
		return f, err
	}
	if err := t.deleteSessionsOf(owner); err != nil {
		return f, err
	}
	owners := t.tx.Bucket(bucketOwners)
	ob := owners.Bucket([]byte(owner))
	if ob == nil {
		return f, nil
	}
	var ids []uint64
	err = ob.Bucket(bucketMem).ForEach(func(k, v []byte) error {
		var m Memory
		if v, err := t.open(labelMemory, owner, k, v); err == nil && decodeMemory(v, &m) == nil {
			f.History += len(m.History)
		}
		ids = append(ids, decodeU64(k))
		return nil
	})
	if err != nil {
		return f, err
	}
	for _, id := range ids {
		if err := t.tx.Bucket(bucketIDs).Delete(encodeU64(id)); err != nil {
			return f, err
		}
		if _, err := t.logChange(owner, id); err != nil {
			return f, err
		}
	}
	f.Memories = len(ids)
	return f, owners.DeleteBucket([]byte(owner))
}

// Scan calls fn with the owner's memories whose id is above after, in id
// order, until fn returns false.
func (t *Tx) Scan(owner string, after uint64, fn func(*Memory) (bool, error)) error {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return nil // no partition, no memories
	}
	c := ob.Bucket(bucketMem).Cursor()
	for k, v := c.Seek(encodeU64(after + 1)); k != nil; k, v = c.Next() {
		v, err := t.open(labelMemory, owner, k, v)
		m := new(Memory)
		if err == nil {
			err = decodeMemory(v, m)
		}
		if t.skip(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading memory %d: %w", decodeU64(k), err)
		}
		more, err := fn(m)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// OwnersFrom calls fn with the owner ids at or after from, in order, until
// fn returns false.
func (t *Tx) OwnersFrom(from string, fn func(owner string) (bool, error)) error {
	c := t.tx.Bucket(bucketOwners).Cursor()
	for k, v := c.Seek([]byte(from)); k != nil; k, v = c.Next() {
		if v != nil {
			continue // not a bucket
		}
		more, err := fn(string(k))
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// Counts summarises memories.
type Counts struct {
	Total   int            `json:"total"`
	Deleted int            `json:"deleted"`
	Expired int            `json:"expired"`
	ByKind  map[string]int `json:"by_kind"`
}

// Count counts an owner's memories; active ones by kind.
func (t *Tx) Count(owner string) (Counts, error) {
	c := Counts{ByKind: map[string]int{}}
	err := t.Scan(owner, 0, func(m *Memory) (bool, error) {
		switch {
		case m.DeletedAt != nil:
			c.Deleted++
		case !m.Active(t.now):
			c.Expired++
		default:
			c.Total++
			c.ByKind[m.Kind]++
		}
		return true, nil
	})
	return c, err
}

// MaxID is the largest memory id: ids stay exact in JSON numbers, which
// JavaScript reads as doubles.
const MaxID = 1<<53 - 1

// ImportOp says what Import did.
type ImportOp string

// Import outcomes.
const (
	Imported   ImportOp = "imported"   // a new memory for the owner
	Replaced   ImportOp = "replaced"   // an existing memory of the owner, overwritten
	Renumbered ImportOp = "renumbered" // a trusted import whose id was above MaxID: it got a new one
)

// Import writes a memory as exported (history, times, mentions and all) for
// owner. Importing the same memory twice leaves one memory: it joins the
// owner's memory with the same key, or with the same id if that memory was
// there before the import began (its id at most since, what LastID said
// then). Otherwise it is a new memory: with the id it had when keepID is
// set and the id is free (a trusted restore), else with a new id, so that
// an import can neither push the shared numbering towards its end nor learn,
// from the answer, which ids other owners hold. A memory numbered since is
// never joined by id: ids are one numbering for every owner, so a line
// whose id another owner held got a new one, and a later line that had that
// number in the store it was exported from is another memory.
func (t *Tx) Import(owner string, m *Memory, keepID bool, since uint64) (ImportOp, error) {
	if owner == "" {
		return "", fmt.Errorf("%w: empty owner", ErrInvalid)
	}
	m.Content = strings.TrimSpace(m.Content)
	if m.Content == "" {
		return "", fmt.Errorf("%w: empty content", ErrInvalid)
	}
	if m.Kind == "" {
		m.Kind = "note"
	}
	if m.Key == "" {
		m.Key = DeriveKey(m.Kind, m.Content)
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = t.now
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	if m.Mentions < 1 {
		m.Mentions = 1
	}
	if len(m.History) > MaxHistory {
		m.History = m.History[len(m.History)-MaxHistory:]
	}
	ob, err := t.ownerBucket(owner, true)
	if err != nil {
		return "", err
	}
	ids := t.tx.Bucket(bucketIDs)
	op := Imported
	holder := ids.Get(encodeU64(m.ID))
	switch k := ob.Bucket(bucketKeys).Get(t.name(labelKey, m.Key)); {
	case k != nil && decodeU64(k) != m.ID:
		m.ID, op = decodeU64(k), Replaced // the owner's memory for this key
	case m.ID != 0 && m.ID <= since && string(holder) == owner:
		op = Replaced
	case !keepID || holder != nil:
		m.ID = 0
	case m.ID > MaxID:
		m.ID, op = 0, Renumbered
	}
	if m.ID == 0 {
		if m.ID, err = nextID(ids); err != nil {
			return "", err
		}
	} else if m.ID > ids.Sequence() {
		// Later memories must not be numbered onto imported ones.
		if err := ids.SetSequence(m.ID); err != nil {
			return "", err
		}
	}
	if op == Replaced {
		// The old record's key may differ; free it.
		if old, err := t.getMemory(owner, ob, m.ID); err == nil && old.Key != m.Key {
			if v := ob.Bucket(bucketKeys).Get(t.name(labelKey, old.Key)); v != nil && decodeU64(v) == m.ID {
				if err := ob.Bucket(bucketKeys).Delete(t.name(labelKey, old.Key)); err != nil {
					return "", err
				}
			}
		}
	}
	m.Owner = owner
	if err := ids.Put(encodeU64(m.ID), []byte(owner)); err != nil {
		return "", err
	}
	if err := ob.Bucket(bucketKeys).Put(t.name(labelKey, m.Key), encodeU64(m.ID)); err != nil {
		return "", err
	}
	return op, t.put(ob.Bucket(bucketMem), m)
}

// LastID is the last memory id numbered, by anyone: what an import
// began after (see Import).
func (t *Tx) LastID() uint64 { return t.tx.Bucket(bucketIDs).Sequence() }

// Now is the transaction's clock.
func (t *Tx) Now() time.Time { return t.now }

// Stats is the store as a whole.
type Stats struct {
	Owners      int `json:"owners"`
	Memories    int `json:"memories"`
	PendingJobs int `json:"pending_jobs"`
	// HeldTurns wait in this instance's file for the shared database to
	// answer (held.go).
	HeldTurns int `json:"held_turns"`
	// PendingSessions are sessions waiting to be distilled by a model.
	PendingSessions int    `json:"pending_sessions"`
	LastSeq         uint64 `json:"last_seq"`
	FileBytes       int64  `json:"file_bytes"`
}

// Stats counts owners and memories (all of them, deleted included) by
// walking the file: it costs about a second per million memories.
func (s *DB) Stats() (Stats, error) {
	var st Stats
	err := s.view(func(tx *kvTx) error {
		st.FileBytes = tx.tx.Size()
		if fi, err := os.Stat(s.path); err == nil {
			st.FileBytes = fi.Size() // with the room bbolt has grown it by
		}
		st.LastSeq = tx.Bucket(bucketChanges).Sequence()
		st.PendingJobs = tx.Bucket(bucketJobs).Stats().KeyN
		if b := tx.Bucket(bucketHeld); b != nil {
			st.HeldTurns = b.Stats().KeyN
		}
		if b := tx.Bucket(bucketSessions); b != nil {
			st.PendingSessions = b.Stats().KeyN
		}
		return tx.Bucket(bucketOwners).ForEachBucket(func(k []byte) error {
			st.Owners++
			st.Memories += tx.Bucket(bucketOwners).Bucket(k).Bucket(bucketMem).Stats().KeyN
			return nil
		})
	})
	return st, err
}
