package store

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caddy-memory/memory/internal/norm"
)

// Memory is one remembered thing about an owner: an extracted fact, or a
// transcript of one conversational turn.
type Memory struct {
	ID      uint64 `json:"id"`
	Owner   string `json:"owner"`
	Session string `json:"session,omitempty"`
	// Kind says what the memory is: "turn" for a transcript, or the kind of
	// fact ("identity", "preference", "habit", "decision", "note", ...).
	Kind string `json:"kind"`
	// Key is the stable upsert key: a newer value for the same key supersedes
	// the older one, which moves to History.
	Key     string `json:"key"`
	Content string `json:"content"`
	// Context is text around the memory that helps find it (a transcript
	// turn's neighbours); it is searched with less weight, never injected.
	Context   string            `json:"context,omitempty"`
	Ref       string            `json:"ref,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
	ExpiresAt *time.Time        `json:"expires_at,omitempty"`
	DeletedAt *time.Time        `json:"deleted_at,omitempty"`
	// Mentions counts how often the same content was stated again.
	Mentions int       `json:"mentions"`
	Version  int       `json:"version"`
	Seq      uint64    `json:"seq"`
	History  []Version `json:"history,omitempty"`
	// Source is where the memory came from: "rules" (learned from proxied
	// traffic or an ingested transcript), "llm" (distilled by a model),
	// "api", "import" or "tool" (saved by the model through its memory
	// tool). Empty for memories stored before sources were recorded.
	Source string `json:"source,omitempty"`
	// Importance is how much the memory matters, 1 to 10, when its learner
	// said (0: unknown); a mild ranking prior.
	Importance int `json:"importance,omitempty"`
	// Pinned memories are never merged away, evicted or pruned.
	Pinned bool `json:"pinned,omitempty"`
	// DeleteReason says why a deleted memory was deleted, when it was not
	// by hand: "salience" (evicted as it faded), "merged into N",
	// "retention".
	DeleteReason string `json:"delete_reason,omitempty"`
	// Uses, LastUsed and Salience are how the memory has been used and
	// how much it still matters (see Usage); filled when the memory is
	// listed or exported, not stored in its record.
	Uses     int        `json:"uses"`
	LastUsed *time.Time `json:"last_used,omitempty"`
	Salience float64    `json:"salience"`
	// Digest is what a search reads of the memory's text without decoding
	// it (see Peek.Terms): opaque to the store, made by the index from
	// Content and Context. Whoever changes either sets it anew; nil means
	// none, and the text is read instead. Only Edit reads it back: a search
	// reads it through Peek, and nothing else needs a copy of it.
	Digest []byte `json:"-"`
}

// Sources of memories (Memory.Source).
const (
	SourceRules  = "rules"
	SourceLLM    = "llm"
	SourceAPI    = "api"
	SourceImport = "import"
	SourceTool   = "tool"
)

// MaxContent is the most a memory's text may hold, in bytes, however it
// is made: the REST API, MCP, the model's save_memory, an import. One limit,
// so that whatever a store holds can be exported and imported again: the
// learner's own transcript turns reach about 8 KB, and memories made through
// the API before this limit was shared went up to 16 KiB. What a memory
// costs a prompt is bounded elsewhere: the block shows each memory in at
// most block.MaxItemTokens.
const MaxContent = 16 << 10

// CheckContent refuses content over MaxContent, in the words every way of
// making a memory answers with.
func CheckContent(content string) error {
	if len(content) > MaxContent {
		return fmt.Errorf("content is %d bytes; a memory holds at most %d: keep one fact or passage per memory", len(content), MaxContent)
	}
	return nil
}

// Version is a superseded value of a memory: what it said from At until
// it stopped being true (Until, when known).
type Version struct {
	Content string    `json:"content"`
	Ref     string    `json:"ref,omitempty"`
	Session string    `json:"session,omitempty"`
	At      time.Time `json:"at"`
	Until   time.Time `json:"until,omitzero"`
}

// MaxHistory bounds the superseded versions kept per memory, so a key that
// changes every turn cannot grow a record without limit.
const MaxHistory = 20

// Active reports whether the memory may be retrieved at time now.
func (m *Memory) Active(now time.Time) bool {
	return m.DeletedAt == nil && (m.ExpiresAt == nil || now.Before(*m.ExpiresAt))
}

// Put describes a memory to create or update.
type Put struct {
	Session string
	Kind    string
	// Key is the stable upsert key. Empty derives one from the kind and the
	// normalised content, so restating the same thing updates one memory.
	Key     string
	Content string
	// Context is searchable text around the memory (see Memory.Context).
	Context   string
	Ref       string
	Meta      map[string]string
	Time      time.Time // when it was said; zero means now
	ExpiresAt *time.Time
	// Digest is the search digest of Content and Context (see
	// Memory.Digest).
	Digest []byte
	// Source and Importance are the memory's (see Memory); a restatement
	// (the same content again) keeps the memory's own.
	Source     string
	Importance int
	// Pinned pins the memory; an upsert never unpins one.
	Pinned bool
}

// Op says what an upsert did.
type Op string

// Upsert outcomes.
const (
	Created    Op = "created"
	Updated    Op = "updated"
	Superseded Op = "superseded"
)

// Tx is a transaction on the store. Write methods fail on a read-only Tx.
type Tx struct {
	tx  *kvTx
	now time.Time
	c   *crypt // nil: a plaintext store
	// arena holds the values opened in this transaction (see open).
	arena []byte
	db    *DB
	// skipped counts the damaged records passed over (see skip).
	skipped int
}

// Skipped is how many damaged records the transaction's listings passed
// over (see ErrRecordDamaged).
func (t *Tx) Skipped() int { return t.skipped }

// skip reports whether err is a damaged record's, to be passed over, and
// counts it.
func (t *Tx) skip(err error) bool {
	if !errors.Is(err, ErrRecordDamaged) {
		return false
	}
	t.skipped++
	if t.db != nil {
		t.db.skipped.Add(1)
	}
	return true
}

// Update runs fn in one read-write transaction: all of its changes, and their
// change-log entries, commit (and fsync) together or not at all.
func (s *DB) Update(fn func(*Tx) error) error {
	return s.update(func(tx *kvTx) error { return fn(s.newTx(tx)) })
}

// View runs fn in a read-only snapshot.
func (s *DB) View(fn func(*Tx) error) error {
	return s.view(func(tx *kvTx) error { return fn(s.newTx(tx)) })
}

// DeriveKey is the key used for a Put without one: the kind and the
// normalised content, so restating the same thing updates one memory.
func DeriveKey(kind, content string) string {
	return "content:" + norm.Short(kind+"\x00"+norm.Normalize(content), 12)
}

// Upsert creates the memory or, when the owner already has one with the same
// key, updates it: the same content counts as another mention; different
// content supersedes the old value, which is kept in History.
func (t *Tx) Upsert(owner string, p Put) (*Memory, Op, error) {
	if owner == "" {
		return nil, "", fmt.Errorf("%w: empty owner", ErrInvalid)
	}
	p.Content = strings.TrimSpace(p.Content)
	if p.Content == "" {
		return nil, "", fmt.Errorf("%w: empty content", ErrInvalid)
	}
	if p.Kind == "" {
		p.Kind = "note"
	}
	if p.Key == "" {
		p.Key = DeriveKey(p.Kind, p.Content)
	}
	at := p.Time.UTC()
	if p.Time.IsZero() {
		at = t.now
	}
	ob, err := t.ownerBucket(owner, true)
	if err != nil {
		return nil, "", err
	}
	mem, keys := ob.Bucket(bucketMem), ob.Bucket(bucketKeys)

	var m *Memory
	op := Created
	if idb := keys.Get(t.name(labelKey, p.Key)); idb != nil {
		var err error
		if m, err = t.getMemory(owner, ob, decodeU64(idb)); errors.Is(err, ErrNotFound) {
			m = nil
		} else if err != nil {
			return nil, "", err
		}
	}
	if m == nil {
		id, err := nextID(t.tx.Bucket(bucketIDs))
		if err != nil {
			return nil, "", err
		}
		m = &Memory{ID: id, Owner: owner, Key: p.Key, CreatedAt: at, Mentions: 1}
		ids := t.tx.Bucket(bucketIDs)
		ids.setFill(appendFill)
		if err := ids.Put(encodeU64(id), []byte(owner)); err != nil {
			return nil, "", err
		}
		if err := keys.Put(t.name(labelKey, p.Key), encodeU64(id)); err != nil {
			return nil, "", err
		}
	} else {
		switch {
		case m.DeletedAt == nil && norm.Same(m.Content, p.Content):
			op = Updated
			m.Mentions++
		default:
			// A changed value, or a deleted memory stated again: the old value
			// becomes history, the new one is current.
			op = Superseded
			if m.DeletedAt != nil {
				op = Created
			}
			m.History = append(m.History, Version{Content: m.Content, Ref: m.Ref, Session: m.Session, At: m.UpdatedAt, Until: at})
			if len(m.History) > MaxHistory {
				m.History = m.History[len(m.History)-MaxHistory:]
			}
			m.Version++
			m.DeletedAt = nil
		}
	}
	m.Kind = p.Kind
	m.Content, m.Context, m.Digest = p.Content, p.Context, p.Digest
	m.Session = p.Session
	if op != Updated || m.Source == "" {
		m.Source, m.Importance = p.Source, p.Importance
	} else {
		m.Importance = max(m.Importance, p.Importance)
	}
	m.Pinned = m.Pinned || p.Pinned
	if op != Updated {
		m.DeleteReason = ""
	}
	if p.Ref != "" || op != Updated {
		m.Ref = p.Ref
	}
	if p.Meta != nil {
		m.Meta = p.Meta
	}
	// The expiry belongs to the statement: a new value, or a memory stated
	// again after it expired, is current until the new statement says.
	switch {
	case p.ExpiresAt != nil:
		e := p.ExpiresAt.UTC()
		m.ExpiresAt = &e
	case op != Updated || (m.ExpiresAt != nil && !t.now.Before(*m.ExpiresAt)):
		m.ExpiresAt = nil
	}
	if at.After(m.UpdatedAt) || op != Updated {
		m.UpdatedAt = at
	}
	if err := t.put(mem, m); err != nil {
		return nil, "", err
	}
	return m, op, nil
}

// nextID allocates a memory id.
func nextID(ids *kvBucket) (uint64, error) {
	if ids.Sequence() >= MaxID {
		return 0, fmt.Errorf("memory ids are exhausted (the largest is %d); export, and import into a new storage", uint64(MaxID))
	}
	return ids.NextSequence()
}

// Edit applies fn to an existing memory of owner and records the change.
func (t *Tx) Edit(owner string, id uint64, fn func(*Memory) error) (*Memory, error) {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return nil, err
	}
	m, err := t.getMemory(owner, ob, id)
	if err != nil {
		return nil, err
	}
	if m.Digest, err = t.digestOf(owner, ob, id); err != nil {
		return nil, err
	}
	if err := fn(m); err != nil {
		return nil, err
	}
	m.ID, m.Owner = id, owner
	return m, t.put(ob.Bucket(bucketMem), m)
}

// SetDigest replaces the search digest of one memory of owner and nothing
// else, not even its change sequence: the digest is derived from the text,
// and nothing the index holds changes.
func (t *Tx) SetDigest(owner string, id uint64, digest []byte) error {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return err
	}
	m, err := t.getMemory(owner, ob, id)
	if err != nil {
		return err
	}
	m.Digest = digest
	return ob.Bucket(bucketMem).Put(encodeU64(id), t.seal(labelMemory, owner, encodeU64(id), encodeMemory(m)))
}

// Delete soft-deletes a memory: it stays in the file (and in exports) but is
// never retrieved again.
func (t *Tx) Delete(owner string, id uint64) (*Memory, error) {
	return t.Edit(owner, id, func(m *Memory) error {
		if m.DeletedAt == nil {
			now := t.now
			m.DeletedAt = &now
		}
		return nil
	})
}

// Purge removes a memory and its history for good.
func (t *Tx) Purge(owner string, id uint64) error {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return err
	}
	m, err := t.getMemory(owner, ob, id)
	if err != nil {
		return err
	}
	keys := ob.Bucket(bucketKeys)
	if v := keys.Get(t.name(labelKey, m.Key)); v != nil && decodeU64(v) == id {
		if err := keys.Delete(t.name(labelKey, m.Key)); err != nil {
			return err
		}
	}
	if err := ob.Bucket(bucketMem).Delete(encodeU64(id)); err != nil {
		return err
	}
	for _, name := range [][]byte{bucketVectors, bucketUsage} {
		if b := ob.Bucket(name); b != nil {
			if err := b.Delete(encodeU64(id)); err != nil {
				return err
			}
		}
	}
	if err := t.tx.Bucket(bucketIDs).Delete(encodeU64(id)); err != nil {
		return err
	}
	seq, err := t.logChange(owner, id)
	if err != nil {
		return err
	}
	return t.factWritten(ob.Bucket(bucketMem), m.Kind, seq)
}

// Get loads one memory of owner.
func (t *Tx) Get(owner string, id uint64) (*Memory, error) {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return nil, err
	}
	return t.getMemory(owner, ob, id)
}

// OwnerOf returns the owner id a memory id belongs to.
func (t *Tx) OwnerOf(id uint64) (string, error) {
	v := t.tx.Bucket(bucketIDs).Get(encodeU64(id))
	if v == nil {
		return "", ErrNotFound
	}
	return string(v), nil
}

// ForEach calls fn for every memory of owner (deleted ones included), in
// id order; a damaged record is passed over (see PeekAll).
func (t *Tx) ForEach(owner string, fn func(*Memory) error) error {
	return t.PeekAll(owner, func(p *Peek) error {
		m, err := p.Memory()
		if err != nil {
			return err
		}
		return fn(m)
	})
}

// Owners calls fn with every owner id that has a partition.
func (t *Tx) Owners(fn func(owner string) error) error {
	return t.tx.Bucket(bucketOwners).ForEachBucket(func(k []byte) error { return fn(string(k)) })
}

func (t *Tx) ownerBucket(owner string, create bool) (*kvBucket, error) {
	owners := t.tx.Bucket(bucketOwners)
	if ob := owners.Bucket([]byte(owner)); ob != nil {
		return ob, nil
	}
	if !create {
		return nil, ErrNotFound
	}
	ob, err := owners.CreateBucket([]byte(owner))
	if err != nil {
		return nil, err
	}
	if _, err := ob.CreateBucket(bucketMem); err != nil {
		return nil, err
	}
	if _, err := ob.CreateBucket(bucketKeys); err != nil {
		return nil, err
	}
	if _, err := ob.CreateBucket(bucketRefs); err != nil {
		return nil, err
	}
	return ob, nil
}

// appendFill is the fill of pages in buckets whose keys only grow (ids,
// change and job sequences, an owner's records by id). bbolt splits pages
// at half full by default, which for appended keys leaves every page half
// empty and the file nearly twice the size.
const appendFill = 0.9

// put writes m with a fresh change sequence number.
func (t *Tx) put(mem *kvBucket, m *Memory) error {
	seq, err := t.logChange(m.Owner, m.ID)
	if err != nil {
		return err
	}
	m.Seq = seq
	if err := t.factWritten(mem, m.Kind, seq); err != nil {
		return err
	}
	mem.setFill(appendFill)
	return mem.Put(encodeU64(m.ID), t.seal(labelMemory, m.Owner, encodeU64(m.ID), encodeMemory(m)))
}

// kindTurn is the kind of transcript memories, the bulk of what is written.
const kindTurn = "turn"

// factWritten records, as the sequence of the owner's memory bucket, the
// change seq of a write to a memory that is not a transcript turn (see
// FactsRevision).
func (t *Tx) factWritten(mem *kvBucket, kind string, seq uint64) error {
	if kind == kindTurn {
		return nil
	}
	return mem.SetSequence(seq)
}

// FactsRevision is the change sequence of the latest write to one of the
// owner's memories other than a transcript turn (0 for none recorded):
// what is derived from an owner's facts stays current while it does not
// move, however many turns are learned meanwhile.
func (t *Tx) FactsRevision(owner string) uint64 {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return 0
	}
	return ob.Bucket(bucketMem).Sequence()
}

// digestOf copies the digest of record id.
func (t *Tx) digestOf(owner string, ob *kvBucket, id uint64) ([]byte, error) {
	raw, err := t.record(owner, ob, id)
	if err != nil {
		return nil, err
	}
	var p Peek
	if err := p.read(raw); err != nil {
		return nil, fmt.Errorf("decoding memory %d: %w", id, err)
	}
	return bytes.Clone(p.Terms()), nil
}

// record reads the record of memory id of owner, opened.
func (t *Tx) record(owner string, ob *kvBucket, id uint64) ([]byte, error) {
	raw := ob.Bucket(bucketMem).Get(encodeU64(id))
	if raw == nil {
		return nil, ErrNotFound
	}
	raw, err := t.open(labelMemory, owner, encodeU64(id), raw)
	if err != nil {
		return nil, fmt.Errorf("reading memory %d: %w", id, err)
	}
	return raw, nil
}

func (t *Tx) getMemory(owner string, ob *kvBucket, id uint64) (*Memory, error) {
	raw, err := t.record(owner, ob, id)
	if err != nil {
		return nil, err
	}
	m := new(Memory)
	if err := decodeMemory(raw, m); err != nil {
		return nil, fmt.Errorf("decoding memory %d: %w", id, err)
	}
	return m, nil
}

// maxRefLen bounds a response id kept for conversation lookups.
const maxRefLen = 256

// SetConversation records that the provider's response ref belongs to a
// conversation, so a later request continuing from that response (the
// responses API's previous_response_id) joins the same conversation.
func (t *Tx) SetConversation(owner, ref, conversation string) error {
	if ref == "" || conversation == "" || len(ref) > maxRefLen {
		return nil
	}
	ob, err := t.ownerBucket(owner, true)
	if err != nil {
		return err
	}
	refs := ob.Bucket(bucketRefs)
	if refs == nil { // a partition from before refs existed
		if refs, err = ob.CreateBucket(bucketRefs); err != nil {
			return err
		}
	}
	name := t.name(labelRef, ref)
	return refs.Put(name, t.seal(labelRef, owner, name, refValue(t.c, ref, conversation)))
}

// refValue is what the refs bucket holds for ref: the conversation, after
// the ref itself in an encrypted store, whose bucket key is a hash of it.
func refValue(c *crypt, ref, conversation string) []byte {
	if c == nil {
		return []byte(conversation)
	}
	return appendString([]byte(nil), ref+"\x00"+conversation)
}

// parseRef reads what refValue wrote.
func parseRef(c *crypt, name, v []byte) (ref, conversation string) {
	if c == nil {
		return string(name), string(v)
	}
	d := decoder{b: v}
	ref, conversation, _ = strings.Cut(d.string(), "\x00")
	return ref, conversation
}

// Conversation returns the conversation a response ref belongs to, or "".
func (s *DB) Conversation(owner, ref string) string {
	var c string
	_ = s.View(func(t *Tx) error {
		if ob := t.tx.Bucket(bucketOwners).Bucket([]byte(owner)); ob != nil {
			if refs := ob.Bucket(bucketRefs); refs != nil {
				name := t.name(labelRef, ref)
				v, err := t.open(labelRef, owner, name, refs.Get(name))
				if err != nil || v == nil {
					return err
				}
				_, c = parseRef(t.c, name, v)
			}
		}
		return nil
	})
	return c
}

// PutVector stores a memory's embedding (opaque bytes) in its owner's
// partition. Forgetting the owner or purging the memory removes it.
func (t *Tx) PutVector(owner string, id uint64, v []byte) error {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return err
	}
	vb, err := ob.CreateBucketIfNotExists(bucketVectors)
	if err != nil {
		return err
	}
	return vb.Put(encodeU64(id), t.seal(labelVector, owner, encodeU64(id), v))
}

// Vector returns a memory's stored embedding, or nil.
func (t *Tx) Vector(owner string, id uint64) []byte {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return nil
	}
	if vb := ob.Bucket(bucketVectors); vb != nil {
		if v, err := t.open(labelVector, owner, encodeU64(id), vb.Get(encodeU64(id))); err == nil && v != nil {
			return append([]byte(nil), v...)
		}
	}
	return nil
}

// Vectors calls fn with each stored embedding of owner. The bytes are valid
// only during the call.
func (t *Tx) Vectors(owner string, fn func(id uint64, v []byte) error) error {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return nil
	}
	vb := ob.Bucket(bucketVectors)
	if vb == nil {
		return nil
	}
	return vb.ForEach(func(k, v []byte) error {
		v, err := t.open(labelVector, owner, k, v)
		if err != nil {
			return err
		}
		return fn(decodeU64(k), v)
	})
}
