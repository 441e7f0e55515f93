package store

import (
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

func TestCodecReadsJSONRecords(t *testing.T) {
	m := &Memory{ID: 7, Owner: "o", Kind: "note", Key: "k", Content: "from an earlier version", CreatedAt: time.Unix(9, 0).UTC()}
	raw, _ := json.Marshal(m)
	var got Memory
	if err := decodeMemory(raw, &got); err != nil || got.Content != m.Content || got.ID != 7 {
		t.Errorf("JSON record: %+v %v", got, err)
	}
}

func TestCodecRefusesDamage(t *testing.T) {
	b := encodeMemory(&Memory{ID: 1, Owner: "o", Content: "some content", History: []Version{{Content: "x"}}})
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
		CreatedAt: time.Now(), UpdatedAt: time.Now(), Mentions: 1, Seq: 99})
	b.ReportAllocs()
	for b.Loop() {
		var m Memory
		if err := decodeMemory(raw, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNormalHash: texts hash alike exactly when they normalise alike.
func TestNormalHash(t *testing.T) {
	texts := []string{
		"User lives in Lisbon.", "user  lives in lisbon", "User lives in Lisbon!!", " User, lives — in LISBON ",
		"User lives in Lisboa.", "User livesin Lisbon.", "Zürich café", "ZÜRICH CAFÉ.", "", "...", "a b", "ab",
	}
	for _, a := range texts {
		for _, b := range texts {
			if same := Normalize(a) == Normalize(b); (NormalHash(a) == NormalHash(b)) != same {
				t.Errorf("%q and %q: normalised alike %v, hashed alike %v", a, b, same, !same)
			}
		}
	}
	if got := Normalize(" User, lives — in LISBON "); got != "user lives in lisbon" {
		t.Errorf("Normalize = %q", got)
	}
}
