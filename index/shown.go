package index

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// What the block shows of each memory, kept beside its postings: a search
// ranks from the postings and renders from here, and reads a record only
// for what the postings cannot answer (see Shown). A text is kept as its
// words' numbers in a table every owner shares (wordTable): a word of a
// few letters and its space take two bytes or so instead of six or seven.
// It lives only in memory, like the rest of the postings: an encrypted
// storage's texts are in the clear in the process (as every memory a
// search reads is) and never on its disk.

// maxShownBytes is the longest content kept: a longer one (a transcript
// turn, a pasted document) is read from its record when it is returned,
// as before. Facts, the profile's and most of what a block shows, fit;
// keeping turns too (2 KiB) cost 91 bytes a memory and took Caddy's
// resident memory at 1M from about 500 to 640 MiB for 4% of a recall's
// CPU (docs/performance.md).
const maxShownBytes = 160

// maxWordBytes is the longest word the table numbers: longer ones (ids,
// links, noise) are kept as they are, so the table grows with a language's
// words, not with every string a user pastes.
const maxWordBytes = 24

// wordTable numbers the words of the kept texts. One writer numbers words
// (under Postings.wmu); readers decode without a lock, from the table as
// it was last published (words): a text is put in the postings after its
// words are published, and its words are only ever appended to.
type wordTable struct {
	ids   map[uint64]uint32 // xxhash of a word → its number (from 1); writer only
	own   wordList          // writer only
	words atomic.Pointer[wordList]
}

// wordList is the words numbered: word n is arena[at[n-1]:at[n]].
type wordList struct {
	at    []uint32
	arena []byte
}

func (l *wordList) word(n uint32) []byte { return l.arena[l.at[n-1]:l.at[n]] }

// number returns word's number, numbering it if new; 0 when it is kept as
// it is (too long, or its hash is another word's). Writer only.
func (w *wordTable) number(word []byte) uint32 {
	if len(word) > maxWordBytes {
		return 0
	}
	h := xxhash.Sum64(word)
	if n, ok := w.ids[h]; ok {
		if string(w.own.word(n)) == string(word) {
			return n
		}
		return 0
	}
	if w.ids == nil {
		w.ids, w.own.at = map[uint64]uint32{}, []uint32{0}
	}
	// Appending writes past what readers read: the bytes they may be
	// reading are never written again.
	w.own.arena = append(w.own.arena, word...)
	w.own.at = append(w.own.at, uint32(len(w.own.arena)))
	n := uint32(len(w.own.at) - 1)
	l := w.own
	w.words.Store(&l)
	w.ids[h] = n
	return n
}

// bytes is about how much memory the table takes.
func (w *wordTable) bytes() int {
	l := w.words.Load()
	if l == nil {
		return 0
	}
	return cap(l.arena) + 4*cap(l.at) + 24*len(l.at)
}

// Separators after a word in an encoded text.
const (
	sepEnd = iota
	sepSpace
	sepLine
)

// appendShown appends text's encoding: uvarint(its length), then for each
// word (split at spaces and line breaks, empty ones included, so that
// decoding gives text back byte for byte) uvarint(number << 2 | separator
// after it), and for a word kept as it is, number 0, then uvarint(length)
// and its bytes. Writer only.
func (w *wordTable) appendShown(dst []byte, text []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(text)))
	start := 0
	for i := 0; i <= len(text); i++ {
		sep := uint64(sepEnd)
		if i < len(text) {
			switch text[i] {
			case ' ':
				sep = sepSpace
			case '\n':
				sep = sepLine
			default:
				continue
			}
		}
		word := text[start:i]
		n := w.number(word)
		dst = binary.AppendUvarint(dst, uint64(n)<<2|sep)
		if n == 0 {
			dst = binary.AppendUvarint(dst, uint64(len(word)))
			dst = append(dst, word...)
		}
		start = i + 1
	}
	return dst
}

// appendText appends the text enc encodes (see appendShown).
func (w *wordTable) appendText(dst, enc []byte) []byte {
	_, pos := binary.Uvarint(enc)
	l := w.words.Load()
	if pos <= 0 {
		return dst
	}
	for pos < len(enc) {
		v := uint64(enc[pos])
		pos++
		if v >= 0x80 {
			v, pos = uvarintAt(enc, pos-1)
		}
		if n := uint32(v >> 2); n != 0 {
			dst = append(dst, l.word(n)...)
		} else {
			l, size := binary.Uvarint(enc[pos:])
			pos += size
			dst = append(dst, enc[pos:pos+int(l)]...)
			pos += int(l)
		}
		switch v & 3 {
		case sepSpace:
			dst = append(dst, ' ')
		case sepLine:
			dst = append(dst, '\n')
		}
	}
	return dst
}

// Shown is what the postings keep of a hit for the block (see Text).
type Shown struct {
	enc    []byte // appendShown's; the owner's arena, never written again
	words  *wordTable
	kept   bool
	framed bool
}

// Text is the memory's content as it was last put, and whether it was
// said in a story or a role-play (Meta["framed"]); ok is false when the
// postings did not keep it (too long): read the record then.
func (s Shown) Text() (content string, framed, ok bool) {
	if !s.kept {
		return "", false, false
	}
	n, _ := binary.Uvarint(s.enc)
	b := s.words.appendText(make([]byte, 0, n), s.enc)
	return unsafe.String(unsafe.SliceData(b), len(b)), s.framed, true // b is not written again
}

// shownScratch is what Put encodes a text into, before it is appended to
// the owner's.
var shownScratch = sync.Pool{New: func() any { return new([]byte) }}

// encodeShown encodes what a's memory shows, in a buffer of the pool's (nil
// when it is not kept); the caller holds Postings.wmu, and gives the
// buffer back (setShown).
func (o *Owner) encodeShown(a *Attrs) *[]byte {
	if a.Content == nil || len(a.Content) > maxShownBytes {
		return nil
	}
	buf := shownScratch.Get().(*[]byte)
	*buf = o.p.words.appendShown((*buf)[:0], a.Content)
	if len(*buf) > 1<<16-1 {
		shownScratch.Put(buf)
		return nil
	}
	return buf
}

// setShown keeps enc (from encodeShown) as slot's text, and gives the
// buffer back.
func (o *Owner) setShown(slot int32, enc *[]byte, a *Attrs) {
	if enc == nil {
		o.dropShown(slot)
		return
	}
	defer shownScratch.Put(enc)
	if o.flags[slot]&flagShown != 0 && string(o.shownOf(slot)) == string(*enc) {
		o.setFramed(slot, a.Framed)
		return
	}
	o.dropShown(slot)
	o.shownAt[slot], o.shownLen[slot] = uint32(len(o.shown)), uint16(len(*enc))
	o.shown = append(o.shown, *enc...)
	o.flags[slot] |= flagShown
	o.setFramed(slot, a.Framed)
}

func (o *Owner) setFramed(slot int32, framed bool) {
	if framed {
		o.flags[slot] |= flagFramed
	} else {
		o.flags[slot] &^= flagFramed
	}
}

// dropShown lets slot's text go.
func (o *Owner) dropShown(slot int32) {
	if o.flags[slot]&flagShown != 0 {
		o.shownGarbage += int(o.shownLen[slot])
		o.flags[slot] &^= flagShown
	}
}

// shownOf is slot's encoded text; the caller knows it is kept.
func (o *Owner) shownOf(slot int32) []byte {
	at := o.shownAt[slot]
	return o.shown[at : at+uint32(o.shownLen[slot]) : at+uint32(o.shownLen[slot])]
}

// shownFor is what a search hands out of slot's text. Its bytes are never
// written again: a rewritten text is appended, and repacking (packShown)
// makes a new array.
func (o *Owner) shownFor(slot int32) Shown {
	if o.flags[slot]&flagShown == 0 {
		return Shown{}
	}
	return Shown{enc: o.shownOf(slot), words: &o.p.words, kept: true, framed: o.flags[slot]&flagFramed != 0}
}

// packShown copies the kept texts into a new array without the replaced
// ones, when they take more than half of it; remap, when not nil, numbers
// the slots anew (compact), n of them.
func (o *Owner) packShown(remap []int32, n int32) {
	if remap == nil && o.shownGarbage <= len(o.shown)/2 {
		return
	}
	shown := make([]byte, 0, len(o.shown)-o.shownGarbage)
	at, ln := o.shownAt, o.shownLen
	if remap != nil {
		at, ln = make([]uint32, n), make([]uint16, n)
	}
	for slot := range o.shownAt {
		to := int32(slot)
		if remap != nil {
			if to = remap[slot]; to < 0 {
				continue
			}
		}
		if o.flags[slot]&flagShown == 0 {
			at[to], ln[to] = 0, 0
			continue
		}
		enc := o.shownOf(int32(slot))
		at[to], ln[to] = uint32(len(shown)), uint16(len(enc))
		shown = append(shown, enc...)
	}
	o.shown, o.shownAt, o.shownLen, o.shownGarbage = shown, at, ln, 0
}
