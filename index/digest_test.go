package index

import (
	"encoding/binary"
	"maps"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"
)

// digestTexts are texts whose words the analyzer splits, joins, drops or
// stems in every way a digest has to follow.
var digestTexts = []string{
	"Caroline runs in new shoes every morning.",
	"CAFÉ in ZÜRICH since 2023; she went RUNNING.",
	"e.g. don't 3.14 1,000 a:b 10:30 foo_bar john's x.y.z end.Start",
	"I'm you're it's isn't JOHN'S dogs' rock'n'roll o'clock",
	"café-bar naïve 2023rd ab12cd email@x.com http://a.b/c https://example.com/path?q=1&r=2",
	"well—then… ‘quoted’ “dq” x' 'lead trail' ''",
	"résumé’s can't won't shouldn't Zürich’s café: runner's RUNS, ran; Carolines",
	"i i'm m s t d ll re ve don a an the and",
	"shoes—running… Caroline—café 2023! shoes,shoes;SHOES résumé-shoes",
	strings.Repeat("supercalifragilisticexpialidocious", 4) + " shoes",
	"naïvecafé café 1.2.3 v2.0 $4.99 50% 3rd-party co-op U.S.A. Ph.D.",
	"User: I went hiking with my father near the lake.\nAssistant: That sounds lovely! Did you see any birds?",
	"Straße ΣΟΦΙΑ Москва москва Ελλάδα",
	"tab\tseparated\nlines\r\nand  double  spaces",
	"",
}

// bleveEn is Bleve's English analyzer, which digests and the index's
// analyzer reproduce.
func bleveEn(t testing.TB) analysis.Analyzer {
	t.Helper()
	a, err := registry.NewCache().AnalyzerNamed(en.AnalyzerName)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// analyzed is what Bleve's English analyzer makes of text: term hashes,
// counted.
func analyzed(t *testing.T, text string) map[uint32]int {
	t.Helper()
	out := map[uint32]int{}
	for _, tok := range bleveEn(t).Analyze([]byte(text)) {
		out[termHash(string(tok.Term))]++
	}
	return out
}

// fieldsOf reads a digest back into its two fields.
func fieldsOf(t *testing.T, d []byte) [2]map[uint32]int {
	t.Helper()
	if d[0] != DigestVersion {
		t.Fatalf("digest version %d", d[0])
	}
	d = d[1:]
	var out [2]map[uint32]int
	for f := range out {
		n, size := binary.Uvarint(d)
		d = d[size:]
		out[f] = map[uint32]int{}
		prev := uint32(0)
		for k := range int(n) {
			h := binary.LittleEndian.Uint32(d[4*k:])
			if h <= prev {
				t.Fatalf("hashes not ascending: %d after %d", h, prev)
			}
			prev = h
			out[f][h] = int(d[4*int(n)+k])
		}
		d = d[5*n:]
	}
	if len(d) != 0 {
		t.Fatalf("%d bytes after the fields", len(d))
	}
	return out
}

func TestDigestAgreesWithTheAnalyzer(t *testing.T) {
	for i, text := range digestTexts {
		context := digestTexts[(i+1)%len(digestTexts)]
		got := fieldsOf(t, Digest(text, context))
		for f, s := range [2]string{text, context} {
			if want := analyzed(t, s); !maps.Equal(got[f], want) {
				var terms []string
				for _, tok := range bleveEn(t).Analyze([]byte(s)) {
					terms = append(terms, string(tok.Term))
				}
				var mine []string
				var buf []byte
				words(s, &buf, func(w []byte) { mine = append(mine, string(w)) })
				t.Errorf("field %d of %q: digest %v, analyzer %v\n analyzer terms %q\n words %q", f, s, got[f], want, terms, mine)
			}
		}
	}
}

func TestDigestCountsSaturate(t *testing.T) {
	got := fieldsOf(t, Digest(strings.Repeat("shoe ", 300), ""))
	if got[0][termHash("shoe")] != 255 || len(got[1]) != 0 {
		t.Errorf("300 shoes: %v", got)
	}
}

// TestMatchDigestAgreesWithMatch: matching a digest finds the terms and
// counts that matching the text finds.
func TestMatchDigestAgreesWithMatch(t *testing.T) {
	x, err := Open(t.TempDir(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, q := range []string{
		"Where did Caroline's running shoes go? Café résumé, Zürich 2023",
		"Can you remind me about the hiking trip with my father at the lake?",
		"shoes shoes birds",
		"the and of", // no terms
	} {
		sc := x.NewScorer("o", x.Terms(q))
		for i, text := range digestTexts {
			context := digestTexts[(i+3)%len(digestTexts)]
			var byText, byDigest Match
			want := sc.Match(text, context, &byText)
			got, ok := sc.MatchDigest(Digest(text, context), &byDigest)
			if !ok || got != want || byDigest != byText {
				t.Errorf("query %q, text %q, context %q: digest %v %v %+v, text %v %+v", q, text, context, got, ok, byDigest, want, byText)
			}
		}
	}
}

func TestMatchDigestRefusesDamage(t *testing.T) {
	x, err := Open(t.TempDir(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	sc := x.NewScorer("o", x.Terms("running shoes"))
	d := Digest("running shoes", "shoes")
	var m Match
	if found, ok := sc.MatchDigest(d, &m); !found || !ok {
		t.Fatalf("intact digest: found %v ok %v", found, ok)
	}
	for i := range d {
		if _, ok := sc.MatchDigest(d[:i], &m); ok {
			t.Errorf("a digest cut at %d of %d bytes was read", i, len(d))
		}
	}
	if _, ok := sc.MatchDigest(append([]byte{9}, d[1:]...), &m); ok {
		t.Error("a digest of an unknown version was read")
	}
	if _, ok := sc.MatchDigest(append(d, 0), &m); ok {
		t.Error("a digest with trailing bytes was read")
	}
}

func BenchmarkDigest(b *testing.B) {
	content := "User: I went hiking with my father near the lake and we talked about guitars and camping trips.\n" +
		"Assistant: That sounds like a lovely weekend. Did you bring the new tent, or borrow one from your neighbour again?"
	context := strings.Repeat("We planned the route over coffee in the morning and packed sandwiches. ", 4)
	b.SetBytes(int64(len(content) + len(context)))
	b.ReportAllocs()
	for b.Loop() {
		Digest(content, context)
	}
}

func BenchmarkMatchDigest(b *testing.B) {
	x, err := Open(b.TempDir(), 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	content := "User: I went hiking with my father near the lake and we talked about guitars and camping trips.\n" +
		"Assistant: That sounds like a lovely weekend. Did you bring the new tent, or borrow one from your neighbour again?"
	context := strings.Repeat("We planned the route over coffee in the morning and packed sandwiches. ", 4)
	d := Digest(content, context)
	sc := x.NewScorer("o", x.Terms("Can you remind me about the guitar and the camping trip with my father?"))
	var m Match
	b.ReportAllocs()
	for b.Loop() {
		sc.MatchDigest(d, &m)
	}
}

// TestKeyedDigest: a keyed digest matches as the plain one does, holds none
// of the plain term hashes, and is read by nothing but a scorer with its
// key.
func TestKeyedDigest(t *testing.T) {
	x, err := Open(t.TempDir(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	key := []byte("0123456789abcdef0123456789abcdef")
	x.UseDigestKey(key)
	q := "Where did Caroline's running shoes go? Café résumé, Zürich 2023"
	sc := x.NewScorer("o", x.Terms(q))
	for i, text := range digestTexts {
		context := digestTexts[(i+3)%len(digestTexts)]
		keyed := x.Digester().Digest(text, context)
		if keyed[0] != KeyedDigestVersion || CurrentDigest(keyed) {
			t.Fatalf("keyed digest version %#x", keyed[0])
		}
		var byText, byDigest Match
		want := sc.Match(text, context, &byText)
		got, ok := sc.MatchDigest(keyed, &byDigest)
		if !ok || got != want || byDigest != byText {
			t.Errorf("text %q: keyed digest %v %v %+v, text %v %+v", text, got, ok, byDigest, want, byText)
		}
		plain := fieldsOf(t, Digest(text, context))
		for f, hashes := range fieldsOf(t, append([]byte{DigestVersion}, keyed[1:]...)) {
			for h := range hashes {
				if _, clear := plain[f][h]; clear && len(plain[f]) > 0 {
					t.Errorf("text %q: keyed digest holds the plain hash %#x", text, h)
				}
			}
		}
		if _, ok := sc.MatchDigest(Digest(text, context), &byDigest); ok {
			t.Error("a keyed scorer read a plain digest")
		}
	}
	other := NewDigester([]byte("fedcba9876543210fedcba9876543210"))
	if string(other.Digest("marzipan", "")) == string(x.Digester().Digest("marzipan", "")) {
		t.Error("two keys make the same digest")
	}
}
