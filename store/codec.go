package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"
)

// Records are stored in a compact binary form: decoding JSON would be the
// largest cost of a search, done for each of its candidates. Records
// written as JSON or as codecV1 by earlier versions still decode; export and
// import stay JSON.
//
// codecV2 puts first what a search reads of every memory of an owner (see
// Peek): the id, session, expiry, deletion and the search digest, so the
// rest is decoded only for the memories it keeps. codecV3 adds to that head
// the flags (pinned) and the importance, to each version of the history the
// time it stopped being true, and at the end the source and a list of
// tagged fields that later versions can add to without a new codec (an
// older reader skips tags it does not know).

const (
	codecV1 = 0x01
	codecV2 = 0x02
	codecV3 = 0x03
)

// Flags of a codecV3 record.
const flagPinned = 1

// ErrRecordDamaged is what reading a memory record whose bytes do not
// decode (or, sealed, do not open) fails with. Listing, searching and
// exporting pass over such a record and count it (Tx.Skipped): one bad
// record is one bad record.
var ErrRecordDamaged = errors.New("memory record is damaged")

var errCorrupt = ErrRecordDamaged

// encodeMemory writes m as a codecV3 record.
func encodeMemory(m *Memory) []byte {
	digest := m.Digest
	b := make([]byte, 0, 100+len(m.Content)+len(m.Context)+len(m.Key)+len(digest)+len(m.Source))
	b = append(b, codecV3)
	b = binary.AppendUvarint(b, m.ID)
	b = appendString(b, m.Session)
	b = appendTimePtr(b, m.ExpiresAt)
	b = appendTimePtr(b, m.DeletedAt)
	b = append(binary.AppendUvarint(b, uint64(len(digest))), digest...)
	var flags byte
	if m.Pinned {
		flags |= flagPinned
	}
	b = append(b, flags, byte(min(max(m.Importance, 0), 255)))
	for _, s := range []string{m.Owner, m.Kind, m.Key, m.Content, m.Context, m.Ref} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Meta)))
	for k, v := range m.Meta {
		b = appendString(appendString(b, k), v)
	}
	b = appendTime(b, m.CreatedAt)
	b = appendTime(b, m.UpdatedAt)
	b = binary.AppendUvarint(b, uint64(max(m.Mentions, 0)))
	b = binary.AppendUvarint(b, uint64(max(m.Version, 0)))
	b = binary.AppendUvarint(b, m.Seq)
	b = binary.AppendUvarint(b, uint64(len(m.History)))
	for _, h := range m.History {
		b = appendString(appendString(appendString(b, h.Content), h.Ref), h.Session)
		b = appendTime(appendTime(b, h.At), h.Until)
	}
	b = appendString(b, m.Source)
	if m.DeleteReason == "" {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, 1)
	return appendString(binary.AppendUvarint(b, tagDeleteReason), m.DeleteReason)
}

// Tags of codecV3's tagged fields.
const tagDeleteReason = 1

func decodeMemory(b []byte, m *Memory) error {
	if len(b) > 0 && b[0] == '{' {
		return json.Unmarshal(b, m) // written by an earlier version
	}
	d := decoder{b: b}
	switch d.byte() {
	case codecV1:
		m.ID = d.uvarint()
		for _, s := range []*string{&m.Owner, &m.Session, &m.Kind, &m.Key, &m.Content, &m.Context, &m.Ref} {
			*s = d.string()
		}
	case codecV2, codecV3:
		p := Peek{v3: b[0] == codecV3}
		if err := p.head(&d); err != nil {
			return err
		}
		m.ID, m.Session, m.ExpiresAt, m.DeletedAt = p.ID, string(p.session), p.expiresAt(), p.deletedAt()
		m.Pinned, m.Importance = p.Pinned, p.Importance
		for _, s := range []*string{&m.Owner, &m.Kind, &m.Key, &m.Content, &m.Context, &m.Ref} {
			*s = d.string()
		}
	default:
		return errCorrupt
	}
	v1, v3 := b[0] == codecV1, b[0] == codecV3
	if n := d.count(); n > 0 {
		m.Meta = make(map[string]string, n)
		for range n {
			k := d.string()
			m.Meta[k] = d.string()
		}
	}
	m.CreatedAt, m.UpdatedAt = d.time(), d.time()
	if v1 {
		m.ExpiresAt, m.DeletedAt = d.timePtr(), d.timePtr()
	}
	m.Mentions, m.Version = int(d.uvarint()), int(d.uvarint())
	m.Seq = d.uvarint()
	if n := d.count(); n > 0 {
		m.History = make([]Version, n)
		for i := range m.History {
			h := &m.History[i]
			h.Content, h.Ref, h.Session = d.string(), d.string(), d.string()
			h.At = d.time()
			if v3 {
				h.Until = d.time()
			}
		}
	}
	if v3 {
		m.Source = d.string()
		for n := d.count(); n > 0 && !d.err; n-- {
			switch tag, v := d.uvarint(), d.bytes(); tag {
			case tagDeleteReason:
				m.DeleteReason = string(v)
			} // other tags are fields of a later version
		}
	}
	if d.err || len(d.b) != 0 {
		return errCorrupt
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), t.UnixNano())
}

func appendTimePtr(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, 2)
	}
	return appendTime(b, *t)
}

// decoder reads a record; any overrun sets err and yields zero values.
type decoder struct {
	b   []byte
	err bool
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.err = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length that must fit in what is left.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = true
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	n := d.count()
	if d.err {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// bytes reads a string without copying it.
func (d *decoder) bytes() []byte {
	n := d.count()
	if d.err {
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

// optTime reads what appendTimePtr wrote, without allocating.
func (d *decoder) optTime() optTime {
	if len(d.b) > 0 && d.b[0] == 2 {
		d.b = d.b[1:]
		return optTime{}
	}
	return optTime{true, d.time()}
}

func (d *decoder) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		v, n := binary.Varint(d.b)
		if n <= 0 {
			d.err = true
			return time.Time{}
		}
		d.b = d.b[n:]
		return time.Unix(0, v).UTC()
	}
	d.err = true
	return time.Time{}
}

func (d *decoder) timePtr() *time.Time {
	if len(d.b) > 0 && d.b[0] == 2 {
		d.b = d.b[1:]
		return nil
	}
	t := d.time()
	return &t
}
