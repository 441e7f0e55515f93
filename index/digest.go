package index

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// A digest is the terms the index holds for a memory, kept in the memory's
// record (store.Peek.Terms) so that searching a small owner compares term
// hashes instead of reading text: matching text word by word would be most
// of a search, comparing sorted hashes is a fraction of that, and the
// records are then decoded only for the best candidates.
//
// Layout: DigestVersion, then for the content and the context field: a
// uvarint n, n distinct term hashes (little-endian uint32, ascending), and n
// counts (one byte each, saturating at 255).
//
// DigestVersion is a digest's first byte: its layout (high four bits) and
// the analyzer that made its terms (AnalyzerVersion). A digest made by
// another analyzer is never compared with this one's terms: it is read as
// no digest, and the text is matched instead until the engine makes the
// digest again.
const DigestVersion = 0<<4 | AnalyzerVersion

// KeyedDigestVersion is the first byte of a keyed digest (an encrypted
// storage's; see Digester): layout 1, the same as layout 0 with each term
// hash passed through a keyed permutation.
const KeyedDigestVersion = 1<<4 | AnalyzerVersion

// CurrentDigest reports whether d was made by this version's Digest: false
// for none, another analyzer's or another layout's.
func CurrentDigest(d []byte) bool { return len(d) > 0 && d[0] == DigestVersion }

// Digest analyses a memory's content and context as the index does (see
// words) into a digest. It is safe for concurrent use.
func Digest(content, context string) []byte { return plainDigester.Digest(content, context) }

// A Digester makes the digests of one storage. An encrypted storage's are
// keyed: a term's hash alone would tell anyone who can hash a dictionary
// which words a memory holds; keyed, it tells nothing without the key. The
// key is the storage's (store.DB.DigestKey), and one storage's digests are
// all made with it.
type Digester struct {
	block cipher.Block // nil: unkeyed
}

var plainDigester = &Digester{}

// NewDigester makes a digester keyed with key (at least 16 bytes), or an
// unkeyed one for a nil key.
func NewDigester(key []byte) *Digester {
	if key == nil {
		return plainDigester
	}
	block, err := aes.NewCipher(key[:16])
	if err != nil {
		panic("index: digest key: " + err.Error()) // 16 bytes are always a key
	}
	return &Digester{block: block}
}

// Version is the first byte of the digests g makes.
func (g *Digester) Version() byte {
	if g.block == nil {
		return DigestVersion
	}
	return KeyedDigestVersion
}

// Current reports whether d was made by g (or a digester with g's key):
// false for none, another analyzer's or layout's, or unkeyed when g is keyed.
func (g *Digester) Current(d []byte) bool { return len(d) > 0 && d[0] == g.Version() }

// Digest is the digest of a memory's content and context (see Digest).
func (g *Digester) Digest(content, context string) []byte {
	out := make([]byte, 1, 1+2*binary.MaxVarintLen32+5*(len(content)+len(context))/6)
	out[0] = g.Version()
	var hashes []uint32
	var word []byte
	for _, text := range [2]string{content, context} {
		hashes = hashes[:0]
		stems.each(text, &word, func(_ int32, h uint32, _ []byte) { hashes = append(hashes, g.hash(h)) })
		out = appendField(out, hashes)
	}
	return out
}

// hash is the digest hash of a term whose plain hash is h: h itself, or
// for a keyed digester h encrypted as one AES block, cut to 32 bits (two
// terms then share a hash about as rarely as plain hashes do).
func (g *Digester) hash(h uint32) uint32 {
	if g.block == nil {
		return h
	}
	var b [aes.BlockSize]byte
	binary.LittleEndian.PutUint32(b[:], h)
	g.block.Encrypt(b[:], b[:])
	if k := binary.LittleEndian.Uint32(b[:]); k != 0 {
		return k
	}
	return 1
}

// appendField sorts hashes and appends them, once each, with their counts.
func appendField(out []byte, hashes []uint32) []byte {
	slices.Sort(hashes)
	n := 0
	for i, h := range hashes {
		if i == 0 || h != hashes[i-1] {
			n++
		}
	}
	out = binary.AppendUvarint(out, uint64(n))
	counts := len(out) + 4*n
	out = slices.Grow(out, 5*n)[:counts+n]
	k := -1
	for i, h := range hashes {
		if i == 0 || h != hashes[i-1] {
			k++
			binary.LittleEndian.PutUint32(out[len(out)-5*n+4*k:], h)
			out[counts+k] = 0
		}
		if out[counts+k] < 255 {
			out[counts+k]++
		}
	}
	return out
}

// termHash is the hash of a term in digests. A digest stores no text, so a
// query term whose hash equals that of another term in a memory would
// match it; with 32 bits that is about one search in a hundred thousand,
// and only reorders that owner's own memories.
func termHash(term string) uint32 {
	h := uint32(xxhash.Sum64String(term))
	if h == 0 {
		h = 1 // 0 marks a word that is no term (stemCache)
	}
	return h
}

// Word classes of UAX #29 word segmentation, as far as Bleve's unicode
// tokenizer needs them for the languages a memory is likely written in.
const (
	wbOther = iota
	wbLetter
	wbDigit
	wbExtendNumLet // '_': joins anything
	wbIdeo         // Han and Hiragana: a word of one character
)

func wordClass(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		switch c := byte(r); {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			return wbLetter
		case '0' <= c && c <= '9':
			return wbDigit
		case c == '_':
			return wbExtendNumLet
		}
		return wbOther
	case unicode.In(r, unicode.Han, unicode.Hiragana):
		return wbIdeo
	case unicode.IsLetter(r):
		return wbLetter
	case unicode.IsDigit(r):
		return wbDigit
	case unicode.Is(unicode.Pc, r):
		return wbExtendNumLet
	}
	return wbOther
}

// midLetter and midNum are the characters a word continues across when a
// letter (midLetter) or a digit (midNum) is on both sides: "e.g", "o'clock",
// "3.14", "1,000".
func midLetter(r rune) bool {
	switch r {
	case '.', '\'', ':', '·', '‘', '’', '․', '﹒', '＇', '．', '\u0387', '\u05f4', '\u2027', '\ufe13', '\ufe55', '\uff1a':
		return true
	}
	return false
}

func midNum(r rune) bool {
	switch r {
	case '.', '\'', ',', ';', '‘', '’', '․', '﹒', '＇', '．', '\u037e', '\u0589', '\u060c', '\u060d', '\u066c', '\u07f8', '\u2044', '\ufe10', '\ufe14', '\ufe50', '\ufe54', '\uff0c', '\uff1b':
		return true
	}
	return false
}

// words calls fn with each word of text as the index's analyzer sees it
// before stop words and stemming: split as Bleve's unicode tokenizer does
// (UAX #29), the possessive 's dropped, lowercased. The word is in *buf,
// valid until fn returns.
func words(text string, buf *[]byte, fn func([]byte)) {
	for i := 0; i < len(text); {
		r, size := decodeRune(text[i:])
		class := wordClass(r)
		if class == wbOther {
			i += size
			continue
		}
		w := appendLower((*buf)[:0], r)
		i += size
		prev := class
		for class != wbIdeo && i < len(text) {
			r, size = decodeRune(text[i:])
			next := wordClass(r)
			switch {
			case next == wbLetter || next == wbDigit || next == wbExtendNumLet:
				w, prev = appendLower(w, r), next
				i += size
				continue
			case r >= 0x300 && unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc):
				w = utf8.AppendRune(w, r) // a combining mark belongs to its letter
				i += size
				continue
			case prev == wbLetter && midLetter(r), prev == wbDigit && midNum(r):
				if i+size < len(text) {
					after, _ := decodeRune(text[i+size:])
					if wordClass(after) == prev {
						w = utf8.AppendRune(w, r)
						i += size
						continue
					}
				}
			}
			break
		}
		*buf = w
		fn(possessive(w))
	}
}

func decodeRune(s string) (rune, int) {
	if c := s[0]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s)
}

func appendLower(w []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(w, byte(r))
	}
	return utf8.AppendRune(w, unicode.ToLower(r))
}

// possessive drops a final 's, as Bleve's possessive_en filter does.
func possessive(w []byte) []byte {
	if n := len(w); n > 1 && w[n-1] == 's' {
		if w[n-2] == '\'' {
			return w[:n-2]
		}
		if r, size := utf8.DecodeLastRune(w[:n-1]); r == '’' || r == '＇' {
			return w[:n-1-size]
		}
	}
	return w
}
