package store

import (
	"bytes"
	"encoding/binary"
	"time"
)

// bucketSessions holds the sessions waiting to be distilled by a model:
// owner id + 0 + session → SessionState. The turns themselves are the
// session's transcript memories; this says how far they were distilled.
var bucketSessions = []byte("distill")

// SessionState is a session with turns not yet distilled.
type SessionState struct {
	Owner, Session string
	// Last is when its latest turn was learned: it is distilled once it
	// has been quiet for a while.
	Last time.Time
	// Due says it is to be distilled without waiting (another session of
	// the owner began, an ingest ended, the server is stopping).
	Due bool
	// Through is the change sequence up to which its turns were distilled:
	// turns whose memory changed after it are sent next.
	Through uint64
}

// sessionKey is owner, 0, and the session's name (a keyed hash of it in an
// encrypted store, whose value then carries the name).
func (t *Tx) sessionKey(owner, session string) []byte {
	return append(append([]byte(owner), 0), t.name(labelSession, session)...)
}

func (t *Tx) encodeSession(k []byte, s SessionState) []byte {
	v := encodeSession(s)
	if t.c == nil {
		return v
	}
	return t.seal(labelSession, s.Owner, k, append(appendString(nil, s.Session), v...))
}

func (t *Tx) decodeSession(k, v []byte) (SessionState, bool) {
	owner, session, ok := bytes.Cut(k, []byte{0})
	if !ok {
		return SessionState{}, false
	}
	if t.c != nil {
		plain, err := t.open(labelSession, string(owner), k, v)
		if err != nil {
			return SessionState{}, false
		}
		d := decoder{b: plain}
		if session = d.bytes(); d.err {
			return SessionState{}, false
		}
		v = d.b
	}
	return decodeSession(owner, session, v)
}

func encodeSession(s SessionState) []byte {
	b := binary.AppendVarint(nil, s.Last.UnixNano())
	b = binary.AppendUvarint(b, s.Through)
	if s.Due {
		return append(b, 1)
	}
	return append(b, 0)
}

func decodeSession(owner, session, v []byte) (SessionState, bool) {
	last, n := binary.Varint(v)
	if n <= 0 {
		return SessionState{}, false
	}
	through, m := binary.Uvarint(v[n:])
	if m <= 0 || len(v) != n+m+1 {
		return SessionState{}, false
	}
	return SessionState{Owner: string(owner), Session: string(session), Last: time.Unix(0, last).UTC(),
		Through: through, Due: v[n+m] == 1}, true
}

// sessions is the bucket, made on first use (stores from before it).
func (t *Tx) sessions() (*kvBucket, error) {
	if b := t.tx.Bucket(bucketSessions); b != nil || !t.tx.Writable() {
		return b, nil
	}
	return t.tx.CreateBucket(bucketSessions)
}

// Session returns a session's state, if it waits to be distilled.
func (t *Tx) Session(owner, session string) (SessionState, bool) {
	b, _ := t.sessions()
	if b == nil {
		return SessionState{}, false
	}
	k := t.sessionKey(owner, session)
	v := b.Get(k)
	if v == nil {
		return SessionState{}, false
	}
	return t.decodeSession(k, v)
}

// PutSession records a session's state.
func (t *Tx) PutSession(s SessionState) error {
	b, err := t.sessions()
	if err != nil {
		return err
	}
	k := t.sessionKey(s.Owner, s.Session)
	return b.Put(k, t.encodeSession(k, s))
}

// DeleteSession drops a session: nothing of it waits any more.
func (t *Tx) DeleteSession(owner, session string) error {
	b, err := t.sessions()
	if err != nil || b == nil {
		return err
	}
	return b.Delete(t.sessionKey(owner, session))
}

// Sessions calls fn with every waiting session of owner, or of every owner
// for "".
func (t *Tx) Sessions(owner string, fn func(SessionState) error) error {
	b, _ := t.sessions()
	if b == nil {
		return nil
	}
	prefix := []byte(nil)
	if owner != "" {
		prefix = append([]byte(owner), 0)
	}
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if s, ok := t.decodeSession(k, v); ok {
			if err := fn(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteSessionsOf drops the owner's waiting sessions.
func (t *Tx) deleteSessionsOf(owner string) error {
	var doomed []SessionState
	if err := t.Sessions(owner, func(s SessionState) error { doomed = append(doomed, s); return nil }); err != nil {
		return err
	}
	for _, s := range doomed {
		if err := t.DeleteSession(s.Owner, s.Session); err != nil {
			return err
		}
	}
	return nil
}
