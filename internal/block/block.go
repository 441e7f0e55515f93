// Package block owns the memory block, the one piece of text the proxy adds
// to a request: rendering it under a token budget between markers that
// never change (the owner's standing facts first, then what the question
// found; and the section of what a conversation's cut turns said), stripping
// every block from a text so that nothing injected is learned again, and the
// token estimate every budget is measured with. The wire formats place it,
// recall renders it, learning strips it.
package block

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The markers around every injected block. They never change, so the
// extractor can strip a block the model quotes back, and so can anyone else
// reading logs.
const (
	Start = `<memory-context source="caddy-memory">`
	End   = `</memory-context>`
)

// A block's first line says what it holds (standing facts only when it
// holds some: with the profile off it holds none) and how to use it.
const (
	preambleStanding = "Memories of this user from earlier conversations, standing facts first. " + preambleUse
	preambleMemories = "Memories of this user from earlier conversations. " + preambleUse
	preambleUse      = "Use them when they help; the user's words here take precedence. Do not mention this block."
	// preambleEarlier leads a block that holds only what was cut from this
	// conversation (see Holding).
	preambleEarlier = "Use this when it helps; the user's words here take precedence. Do not mention this block."
)

// MaxItemTokens caps one item in the block, so a long transcript turn cannot
// take the whole budget.
const MaxItemTokens = 160

// Item is one memory to render.
type Item struct {
	Text string
	Time time.Time
}

// Render packs items, in the order given, into a block of at most maxTokens
// (estimated) and maxItems entries. Items that do not fit are skipped, so a
// smaller one further down may still get in. It returns the block, the
// indexes of the items it holds and their texts as shown (itemText); an
// empty block when none fit.
func Render(items []Item, maxTokens, maxItems int) (block string, kept []int, texts []string) {
	block, _, kept, texts = RenderWith(nil, 0, items, maxTokens, maxItems)
	return block, kept, texts
}

// Standing is a fact of the owner's profile, which leads the block: Rank
// orders them, lower first, and once one does not fit, none of a higher
// Rank is added (so a preference never takes the room of a constraint).
type Standing struct {
	Text string
	Rank int
	// shown and tokens are Text as the block shows it and its line's
	// tokens (see StandingOf); tokens is 0 until they are known.
	shown  string
	tokens int
}

// StandingOf is a standing fact with its line measured: a profile kept
// between requests measures its facts once, not at every block.
func StandingOf(text string, rank int) Standing {
	s := Standing{Text: text, Rank: rank}
	s.shown = itemText(Item{Text: text})
	s.tokens = EstimateTokens(renderLine(Item{}, s.shown))
	return s
}

// measured is s with its line measured.
func (s Standing) measured() Standing {
	if s.tokens == 0 {
		return StandingOf(s.Text, s.Rank)
	}
	return s
}

// RenderWith is Render with the owner's standing facts first, undated,
// within profileTokens of the block's maxTokens; maxItems bounds only the
// items after them. It returns the block, the indexes of the standing
// facts and of the items it holds, and all their texts as shown, standing
// facts first.
func RenderWith(standing []Standing, profileTokens int, items []Item, maxTokens, maxItems int) (block string, keptStanding, kept []int, texts []string) {
	var b strings.Builder
	b.WriteString(Start)
	b.WriteByte('\n')
	used := overhead
	keptStanding = StandingFits(standing, profileTokens, maxTokens)
	if len(keptStanding) > 0 {
		b.WriteString(preambleStanding)
	} else {
		b.WriteString(preambleMemories)
	}
	b.WriteByte('\n')
	for _, i := range keptStanding {
		s := standing[i].measured()
		b.WriteString(renderLine(Item{}, s.shown))
		used += s.tokens
		texts = append(texts, s.shown)
	}
	for i, it := range items {
		if maxItems > 0 && len(kept) >= maxItems {
			break
		}
		text := itemText(it)
		line := renderLine(it, text)
		t := EstimateTokens(line)
		if used+t > maxTokens {
			continue
		}
		b.WriteString(line)
		used += t
		kept, texts = append(kept, i), append(texts, text)
	}
	if len(kept) == 0 && len(keptStanding) == 0 {
		return "", nil, nil, nil
	}
	b.WriteString(End)
	return b.String(), keptStanding, kept, texts
}

// overhead is what a block costs without memories: its markers and
// longest preamble.
var overhead = EstimateTokens(Start+"\n"+preambleStanding+"\n") + EstimateTokens(End) + 1

// StandingFits are the indexes of the standing facts a block of maxTokens
// holds, within profileTokens: in order, skipping those that do not fit,
// and none of a higher Rank than one skipped.
func StandingFits(standing []Standing, profileTokens, maxTokens int) []int {
	room := maxTokens - overhead
	var kept []int
	used, cut := 0, -1
	for i, s := range standing {
		if cut >= 0 && s.Rank > cut {
			break
		}
		t := s.measured().tokens
		if used+t > min(profileTokens, room) {
			if cut < 0 {
				cut = s.Rank
			}
			continue
		}
		used += t
		kept = append(kept, i)
	}
	return kept
}

// itemText is an item's text as the block shows it: one line, truncated.
// A long text (a transcript turn holds up to 8,000 bytes) is made one line
// only as far as the block shows it: a prefix whose one line already holds
// more than MaxItemTokens truncates the same as the whole text's does,
// since the one line of a prefix is a prefix of the whole's.
func itemText(it Item) string {
	if n := itemPrefix; len(it.Text) > n {
		for n > 0 && !utf8.RuneStart(it.Text[n]) {
			n--
		}
		if line := oneLine(it.Text[:n]); EstimateTokens(line) > MaxItemTokens {
			return Truncate(line, MaxItemTokens)
		}
	}
	return Truncate(oneLine(it.Text), MaxItemTokens)
}

// itemPrefix is how much of a long text itemText reads first: half as
// much again as MaxItemTokens of ASCII take (a text whose white space
// shrinks it more is made one line whole).
const itemPrefix = 6 * MaxItemTokens

// renderLine is item it's line in the block, given its itemText.
func renderLine(it Item, text string) string {
	if it.Time.IsZero() {
		return "- " + text + "\n"
	}
	return "- [" + it.Time.UTC().Format("2006-01-02") + "] " + text + "\n"
}

// oneLine is s with every run of white space made one space, and none at
// either end: strings.Join(strings.Fields(s), " "), without building the
// list of words. It runs on every memory of every block (BenchmarkRender):
// ASCII word bytes, by far the commonest, are found by one test each and
// copied a word at a time.
func oneLine(s string) string {
	if lone, ok := loneBreaks(s); ok {
		if lone < 0 {
			return s // most memories: single spaces between words only
		}
		// The commonest other shape, a transcript turn ("User: ...\nAssistant:
		// ..."): single white space characters between words, made spaces.
		b := []byte(s)
		for i := lone; i < len(b); i++ {
			if b[i] < utf8.RuneSelf && asciiSpace[b[i]] {
				b[i] = ' '
			}
		}
		return string(b)
	}
	out := make([]byte, 0, len(s))
	space := false // white space since the last word byte written
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] > ' ' && s[j] < utf8.RuneSelf {
			j++
		}
		size, isSpace := j-i, false
		if size == 0 {
			if c := s[i]; c < utf8.RuneSelf {
				size, isSpace = 1, asciiSpace[c]
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				isSpace = unicode.IsSpace(r)
			}
		}
		if isSpace {
			space = true
		} else {
			if space && len(out) > 0 {
				out = append(out, ' ')
			}
			space = false
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	if string(out) == s {
		return s // unchanged: keep s and let out go
	}
	return string(out)
}

// loneBreaks reports whether every white space character of s is ASCII,
// stands alone between words and none starts or ends s, so that oneLine
// only makes each a space; and where the first that is not a space is
// (-1: none, s is one line already).
func loneBreaks(s string) (first int, ok bool) {
	if s == "" {
		return -1, true
	}
	if c := s[0]; c < utf8.RuneSelf && asciiSpace[c] {
		return -1, false
	}
	if c := s[len(s)-1]; c < utf8.RuneSelf && asciiSpace[c] {
		return -1, false
	}
	first = -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				return -1, false
			}
			i += size - 1
			continue
		}
		if !asciiSpace[c] {
			continue
		}
		if n := s[i+1]; n < utf8.RuneSelf && asciiSpace[n] {
			return -1, false
		}
		if c != ' ' && first < 0 {
			first = i
		}
	}
	return first, true
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// EstimateTokens approximates a token count without a tokenizer: about four
// bytes of ASCII per token, and one token per non-ASCII character (a
// conservative figure for CJK and accented text).
func EstimateTokens(s string) int {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) { // all ASCII, as most memories are: no decoding
		return (len(s) + 3) / 4
	}
	ascii, other := i, 0 // the ASCII run is counted
	for _, r := range s[i:] {
		if r < utf8.RuneSelf {
			ascii++
		} else {
			other++
		}
	}
	return (ascii+3)/4 + other
}

// Truncate shortens s to about maxTokens, at a word boundary, with an ellipsis.
func Truncate(s string, maxTokens int) string {
	if EstimateTokens(s) <= maxTokens {
		return s
	}
	budget := maxTokens - 1
	n := 0
	cut := 0
	for i, r := range s {
		if r < utf8.RuneSelf {
			n++
		} else {
			n += 4
		}
		if (n+3)/4 > budget {
			break
		}
		cut = i + utf8.RuneLen(r)
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > cut/2 {
		cut = sp
	}
	return strings.TrimRight(s[:cut], " ,;:") + "…"
}

// Strip removes every injected block from s: the whole span from a start
// marker to its end marker, or to the end of s when the end is missing (a
// quoted block cut short is still ours). The blank lines a placement put
// around a block go with it, so text that carried a block reads as it did
// before.
func Strip(s string) string {
	stripped := false
	for {
		i := strings.Index(s, Start)
		if i < 0 {
			break
		}
		stripped = true
		j := strings.Index(s[i:], End)
		if j < 0 {
			s = s[:i]
			break
		}
		before, after := strings.TrimRight(s[:i], " \t\r\n"), strings.TrimLeft(s[i+j+len(End):], " \t\r\n")
		if before != "" && after != "" {
			before += "\n\n"
		}
		s = before + after
	}
	if stripped {
		return strings.TrimSpace(s)
	}
	return s
}
