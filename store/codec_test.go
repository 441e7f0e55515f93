package store

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestCodecRoundTrip(t *testing.T) {
	exp := time.Date(2027, 1, 2, 3, 4, 5, 6, time.UTC)
	del := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, m := range []*Memory{
		{ID: 1, Owner: "o", Kind: "note", Key: "k", Content: "c", Mentions: 1, CreatedAt: time.Unix(1, 2).UTC(), UpdatedAt: time.Unix(3, 4).UTC()},
		{ID: 1 << 60, Owner: "owner", Session: "s", Kind: "turn", Key: "turn:x", Content: "User: héllo ✓\nAssistant: hi",
			Context: "before", Ref: "chatcmpl-1", Meta: map[string]string{"a": "b", "": ""}, CreatedAt: time.Unix(1700000000, 5).UTC(),
			UpdatedAt: time.Unix(1700000001, 0).UTC(), ExpiresAt: &exp, DeletedAt: &del, Mentions: 3, Version: 2, Seq: 99,
			History: []Version{{Content: "old", Ref: "r", Session: "s0", At: time.Unix(5, 0).UTC()}, {Content: "older"}}},
	} {
		var got Memory
		if err := decodeMemory(encodeMemory(m), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, m) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, *m)
		}
	}
}

// TestCodecReadsV1Records: a record written by the previous version (its
// bytes, taken from that version's encoder) decodes, whole and peeked.
func TestCodecReadsV1Records(t *testing.T) {
	raw, _ := hex.DecodeString("012a056f776e6572027331047475726e067475726e3a7823557365723a2049206c6f76652068696b696e670a417373697374616e743a204e696365066265666f72650a63686174636d706c2d3101047475726e027431018a80d0e2c6bfce972f0180a8a69ccebfce972f018cc8c9a3a9b1eaf6310203026301036f6c6401720273300180c8afa025")
	exp := time.Date(2027, 1, 2, 3, 4, 5, 6, time.UTC)
	want := &Memory{ID: 42, Owner: "owner", Session: "s1", Kind: "turn", Key: "turn:x", Content: "User: I love hiking\nAssistant: Nice",
		Context: "before", Ref: "chatcmpl-1", Meta: map[string]string{"turn": "t1"}, CreatedAt: time.Unix(1700000000, 5).UTC(),
		UpdatedAt: time.Unix(1700000001, 0).UTC(), ExpiresAt: &exp, Mentions: 3, Version: 2, Seq: 99,
		History: []Version{{Content: "old", Ref: "r", Session: "s0", At: time.Unix(5, 0).UTC()}}}
	var got Memory
	if err := decodeMemory(raw, &got); err != nil || !reflect.DeepEqual(&got, want) {
		t.Fatalf("v1 record: %v\n got %+v\nwant %+v", err, got, *want)
	}
	var p Peek
	if err := p.read(raw); err != nil {
		t.Fatal(err)
	}
	if p.ID != 42 || !p.InSession("s1") || p.InSession("s0") || p.Terms() != nil ||
		!p.Active(exp.Add(-time.Second)) || p.Active(exp) {
		t.Errorf("peek of a v1 record: %+v", p)
	}
	if m, err := p.Memory(); err != nil || !reflect.DeepEqual(m, want) {
		t.Errorf("peeked v1 record decoded: %v %+v", err, m)
	}
}

// TestPeek: the head of a record says what the record says, and its digest
// is what it was written with.
func TestPeek(t *testing.T) {
	exp := time.Date(2027, 1, 2, 3, 4, 5, 6, time.UTC)
	del := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		m      *Memory
		digest []byte
		active bool
	}{
		{&Memory{ID: 5, Owner: "o", Session: "s", Content: "c"}, []byte{1, 2, 3}, true},
		{&Memory{ID: 6, Owner: "o", Content: "c", ExpiresAt: &exp}, nil, true},
		{&Memory{ID: 7, Owner: "o", Content: "c", ExpiresAt: &del}, nil, false},
		{&Memory{ID: 8, Owner: "o", Content: "c", DeletedAt: &del}, []byte{9}, false},
		{&Memory{ID: 9, Owner: "o", Content: "c", ExpiresAt: &time.Time{}}, nil, false},
	} {
		c.m.Digest = c.digest
		raw := encodeMemory(c.m)
		var p Peek
		if err := p.read(raw); err != nil {
			t.Fatal(err)
		}
		if p.ID != c.m.ID || !p.InSession(c.m.Session) || p.Active(now) != c.active || !bytes.Equal(p.Terms(), c.digest) ||
			(p.Terms() == nil) != (c.digest == nil) {
			t.Errorf("peek of %+v with digest %v: %+v", *c.m, c.digest, p)
		}
		want := *c.m
		want.Digest = nil // read through the Peek, not decoded with the record
		if m, err := p.Memory(); err != nil || !reflect.DeepEqual(m, &want) {
			t.Errorf("peeked record decoded: %v\n got %+v\nwant %+v", err, m, want)
		}
	}
}

// TestPeekBrief: what a search ranks and filters by, read without decoding
// the record, is what the decoded record says, for records of this version
// and of earlier ones; a damaged record is an error, not a wrong Brief.
func TestPeekBrief(t *testing.T) {
	at := time.Unix(1700000001, 5).UTC()
	v1, _ := hex.DecodeString("012a056f776e6572027331047475726e067475726e3a7823557365723a2049206c6f76652068696b696e670a417373697374616e743a204e696365066265666f72650a63686174636d706c2d3101047475726e027431018a80d0e2c6bfce972f0180a8a69ccebfce972f018cc8c9a3a9b1eaf6310203026301036f6c6401720273300180c8afa025")
	json1, _ := json.Marshal(&Memory{ID: 3, Owner: "o", Kind: "habit", Key: "habit:run", Content: "runs daily", UpdatedAt: at, Mentions: 4})
	records := [][]byte{
		encodeMemory(&Memory{ID: 1, Owner: "o", Kind: "turn", Key: "turn:c:1:ab", Content: "User: hi", Context: "before",
			Meta: map[string]string{"position": "1", "conversation": "c"}, UpdatedAt: at, Mentions: 1, Digest: []byte{1, 0, 0}}),
		encodeMemory(&Memory{ID: 2, Owner: "o", Kind: "preference", Key: "preference:tea", Content: "likes tea",
			Meta: map[string]string{"turn": "turn:c:1:ab"}, UpdatedAt: at, Mentions: 2, History: []Version{{Content: "likes coffee"}}}),
		v1, json1,
	}
	for i, raw := range records {
		var p Peek
		if err := p.read(raw); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		b, err := p.Brief()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		var m Memory
		if err := decodeMemory(raw, &m); err != nil {
			t.Fatal(err)
		}
		if b.Kind != m.Kind || !b.FromTurn(m.Key) || (m.Meta["turn"] != "" && !b.FromTurn(m.Meta["turn"])) || b.FromTurn("turn:other") ||
			!b.Updated.Equal(m.UpdatedAt) || b.Mentions != m.Mentions {
			t.Errorf("record %d: brief %+v, record kind %q key %q turn %q updated %v mentions %d",
				i, b, m.Kind, m.Key, m.Meta["turn"], m.UpdatedAt, m.Mentions)
		}
	}
	raw := records[1]
	var whole Peek
	_ = whole.read(raw)
	want, _ := whole.Brief()
	errs := 0
	for cut := len(raw) - 1; cut > 0; cut-- {
		var p Peek
		if p.read(raw[:cut]) != nil {
			continue // the head itself is cut
		}
		// What follows mentions (version, seq, history) is not read.
		b, err := p.Brief()
		if err != nil {
			errs++
		} else if b.Kind != want.Kind || !bytes.Equal(b.key, want.key) || !bytes.Equal(b.turn, want.turn) || b.Mentions != want.Mentions || !b.Updated.Equal(want.Updated) {
			t.Fatalf("a record cut at %d of %d bytes gave a wrong Brief: %+v", cut, len(raw), b)
		}
	}
	if errs == 0 {
		t.Error("no cut record was refused")
	}
}

func TestCodecReadsJSONRecords(t *testing.T) {
	m := &Memory{ID: 7, Owner: "o", Kind: "note", Key: "k", Content: "from an earlier version", CreatedAt: time.Unix(9, 0).UTC()}
	raw, _ := json.Marshal(m)
	var got Memory
	if err := decodeMemory(raw, &got); err != nil || got.Content != m.Content || got.ID != 7 {
		t.Errorf("JSON record: %+v %v", got, err)
	}
}

func TestCodecRefusesDamage(t *testing.T) {
	b := encodeMemory(&Memory{ID: 1, Owner: "o", Content: "some content", History: []Version{{Content: "x"}}, Digest: []byte("digest")})
	for i := 0; i < len(b); i++ {
		var m Memory
		if err := decodeMemory(b[:i], &m); err == nil {
			t.Fatalf("a record cut at %d of %d bytes decoded", i, len(b))
		}
	}
	var m Memory
	if err := decodeMemory(append([]byte{9}, b[1:]...), &m); err == nil {
		t.Error("an unknown version decoded")
	}
}

func BenchmarkDecode(b *testing.B) {
	raw := encodeMemory(&Memory{ID: 123456, Owner: "0123456789abcdef0123456789abcdef", Session: "c-0123456789abcdef", Kind: "turn",
		Key: "turn:c-0123456789abcdef:3:abcdef123456", Content: string(make([]byte, 400)), Context: string(make([]byte, 800)),
		Ref: "chatcmpl-abc", Meta: map[string]string{"conversation": "c-0123456789abcdef", "position": "3"},
		CreatedAt: time.Now(), UpdatedAt: time.Now(), Mentions: 1, Seq: 99, Digest: make([]byte, 400)})
	b.ReportAllocs()
	for b.Loop() {
		var m Memory
		if err := decodeMemory(raw, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCodecReadsV2Records: a record written by the version before sources
// and pinning (its bytes, from that version's encoder) decodes whole and
// peeked, with its digest, and no source, importance or pin.
func TestCodecReadsV2Records(t *testing.T) {
	raw, _ := hex.DecodeString("022a027331018cc8c9a3a9b1eaf6310203010203056f776e65720a707265666572656e63650e707265666572656e63653a7465610e55736572206c696b657320746561066265666f72650a63686174636d706c2d3101047475726e027431018a80d0e2c6bfce972f0180a8a69ccebfce972f030263011155736572206c696b657320636f6666656501720273300180c8afa025")
	exp := time.Date(2027, 1, 2, 3, 4, 5, 6, time.UTC)
	want := &Memory{ID: 42, Owner: "owner", Session: "s1", Kind: "preference", Key: "preference:tea", Content: "User likes tea",
		Context: "before", Ref: "chatcmpl-1", Meta: map[string]string{"turn": "t1"}, CreatedAt: time.Unix(1700000000, 5).UTC(),
		UpdatedAt: time.Unix(1700000001, 0).UTC(), ExpiresAt: &exp, Mentions: 3, Version: 2, Seq: 99,
		History: []Version{{Content: "User likes coffee", Ref: "r", Session: "s0", At: time.Unix(5, 0).UTC()}}}
	var got Memory
	if err := decodeMemory(raw, &got); err != nil || !reflect.DeepEqual(&got, want) {
		t.Fatalf("v2 record: %v\n got %+v\nwant %+v", err, got, *want)
	}
	var p Peek
	if err := p.read(raw); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.Terms(), []byte{1, 2, 3}) || p.Pinned || p.Importance != 0 {
		t.Errorf("peek of a v2 record: %+v", p)
	}
	if b, err := p.Brief(); err != nil || b.Kind != "preference" || b.Mentions != 3 || !b.FromTurn("t1") {
		t.Errorf("brief of a v2 record: %+v %v", b, err)
	}
}

// TestCodecV3Fields: source, importance, pinning and when a version stopped
// being true survive a round trip, are seen by a peek, and tagged fields a
// later version adds are skipped.
func TestCodecV3Fields(t *testing.T) {
	m := &Memory{ID: 7, Owner: "o", Kind: "relationship", Key: "fact:x", Content: "The user's sister Zofia lives in Krakow.",
		Source: "llm", Importance: 7, Pinned: true, Mentions: 1, Digest: []byte{9},
		History: []Version{{Content: "The user's sister lives in Warsaw.", At: time.Unix(100, 0).UTC(), Until: time.Unix(200, 0).UTC()}}}
	raw := encodeMemory(m)
	var got Memory
	if err := decodeMemory(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := *m
	want.Digest = nil
	if !reflect.DeepEqual(&got, &want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	var p Peek
	if err := p.read(raw); err != nil || !p.Pinned || p.Importance != 7 {
		t.Errorf("peek: %+v %v", p, err)
	}
	if b, _ := p.Brief(); b.Importance != 7 {
		t.Errorf("brief importance %d", b.Importance)
	}
	// A later version's record: one more tagged field at the end.
	later := append(raw[:len(raw)-1:len(raw)-1], 1, 5, 3, 'a', 'b', 'c')
	var l Memory
	if err := decodeMemory(later, &l); err != nil || l.Source != "llm" || l.Content != m.Content {
		t.Errorf("a record with a field from a later version: %v %+v", err, l)
	}
}
