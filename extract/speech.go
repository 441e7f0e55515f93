package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Someone else's words in a user's message are not statements about the
// user: "My friend said: I'm allergic to shellfish", a pasted exchange
// ("Customer: I am allergic to latex"), a line of a story ("the narrator
// says "I live in Tokyo"") or a character's. Taken as the user's, they ride
// in every later request as the user's allergy, home or diet, so they are
// cut out before the rules read the message. (The transcript keeps them.)
//
// Speech only starts at a colon or an opening quote, so the message is read
// once, stopping there, and the words that lead up to it are read from a
// few bytes back: a long message costs in proportion to its length.

// reportingWords introduce someone's speech; what follows a colon or an
// opening quote after them is theirs. Without either ("my doctor told me
// I'm pre-diabetic") the words are the user's own report.
var reportingWords = wordSet("said says say saying wrote writes write asked asks replied replies answered answers " +
	"texted texts messaged emailed posted tweeted goes went exclaimed yelled shouted claims claimed insists insisted " +
	"added adds explained explains reads read")

// tellingWords introduce speech only with whom it was told to: "told me".
var tellingWords = wordSet("told tells")

// hearers are whom speech is told to: "said to me", "told him", "asked her".
var hearers = wordSet("me us him her them")

// selfLeads stand between "I" and the reporting word when the user reports
// their own words: "I just said", "I have told him".
var selfLeads = wordSet("just once always then had have 've would 'd")

// speakers are labels that start a line of a pasted exchange or script and
// name someone other than the user: "Customer:", "Dr. Lee:", "Q:".
// ("Update:", "Diet:" or "Me:" introduce the user's own words.)
var speakers = wordSet("customer client patient caller guest visitor interviewer interviewee candidate applicant " +
	"student teacher doctor dr dr. nurse agent support rep representative assistant bot ai chatgpt gpt claude " +
	"character narrator hero heroine villain protagonist he she they him her mom mum dad mother father wife husband " +
	"partner boyfriend girlfriend son daughter brother sister friend boss colleague coworker co-worker manager q a " +
	"person speaker player npc")

// titled speakers are named after their title: "Mr. Smith:", "Dr Lee:".
var titles = wordSet("dr dr. mr mr. mrs mrs. ms ms.")

// speakerOwners may come before a speaker's label: "My boss:".
var speakerOwners = wordSet("the my our his her their a")

// maxLead bounds how far back from a colon or a quote the words leading up
// to it are read, and maxLabel the length of a speaker's label.
const (
	maxLead  = 64
	maxLabel = 48
)

// othersWords cuts from text the words that are someone else's: speech
// reported with a colon or in quotes, and the lines of a pasted exchange
// under another speaker's label. A message that is one quotation, a line
// that is one, or a quote the user reports as their own words ("I told
// him "I'm vegan now"") stays the user's, without its quote marks.
func othersWords(text string) string {
	if inner, ok := wholeQuote(text); ok {
		text = inner
	}
	r := speechReader{text: text}
	for i := 0; i < len(text); {
		i = r.at(i)
	}
	if r.last == 0 {
		return text
	}
	r.b.WriteString(text[r.last:])
	return r.b.String()
}

// speechReader reads a message once, from colon to quote to colon.
type speechReader struct {
	text string
	b    strings.Builder
	last int // text before it is written out or cut
	from int // the words leading up to speech are not read before it
	line int // where the line being read starts, or the text after a cut
	// A quotation opened from openFrom on does not close before open, the
	// end of its line: one opened later on that line is not read again.
	openFrom, open int
	cut            bool // someone else's words were cut
}

// at reads the message at byte i and returns where to read on.
func (r *speechReader) at(i int) int {
	text := r.text
	c := text[i]
	q := quoteAt(text, i)
	if c != ':' && q == 0 {
		if c == '\n' {
			r.line = i + 1
		}
		return i + 1
	}
	lead, self := reportingLead(text, r.from, i)
	switch {
	case lead >= 0 && self:
		// "I told him: I'm vegan now" is the user's own; a quotation
		// they open so loses its marks ("I told him "I'm vegan now"").
		open, qq := i, q
		if c == ':' {
			open = skipSpace(text, i+1)
			qq = quoteAt(text, open)
		}
		if qq == 0 {
			r.from = i + 1
			return i + 1
		}
		end := r.quoteEnd(open, qq)
		if end <= open {
			r.from = i + 1
			return i + 1
		}
		pre := text[r.last:open]
		if c != ':' {
			pre = strings.TrimRight(pre, " \t,") + ": "
		}
		r.b.WriteString(pre)
		r.b.WriteString(unquoted(text[open:end], qq))
		r.last, r.from = end, end
		return end
	case lead >= 0:
		var end int
		if c == ':' {
			end = r.afterColon(i)
		} else {
			end = r.quoteEnd(i, q)
		}
		if end <= i {
			return i + q
		}
		r.b.WriteString(text[r.last:i])
		r.b.WriteString(".\n")
		r.last, r.from, r.line, r.cut = end, end, end, true
		return end
	case c == ':' && r.line >= r.last && speakerLabel(text[r.line:i]):
		// The label's line goes, and the next one when the label stands
		// alone.
		end := restOfLine(text, i+1)
		r.b.WriteString(text[r.last:r.line])
		r.b.WriteString("\n")
		r.last, r.from, r.line, r.cut = end, end, end, true
		return end
	case q != 0 && r.ownQuote(i, q):
		end := r.quoteEnd(i, q)
		r.b.WriteString(text[r.last:i])
		r.b.WriteString(unquoted(text[i:end], q))
		r.last, r.from = end, end
		return end
	}
	return i + max(q, 1)
}

// quoteAt is the length of the opening quote mark at text[i], 0 for none.
func quoteAt(text string, i int) int {
	switch {
	case i >= len(text):
	case text[i] == '"':
		return 1
	case strings.HasPrefix(text[i:], "“"):
		return len("“")
	}
	return 0
}

// quoteEnd is where the quotation opened at text[i] (its mark q bytes
// long) ends: after its closing mark on the same line, or at the end of
// the text when no line follows; i when it does not close.
func (r *speechReader) quoteEnd(i, q int) int {
	text := r.text
	if r.openFrom <= i && i < r.open {
		return i
	}
	for j := i + q; j < len(text); j++ {
		switch {
		case text[j] == '"':
			return j + 1
		case strings.HasPrefix(text[j:], "”"):
			return j + len("”")
		case text[j] == '\n':
			r.openFrom, r.open = i, j
			return i
		}
	}
	return len(text)
}

// afterColon is where speech after the colon at text[i] ends: with the
// quotation it opens, else as restOfLine.
func (r *speechReader) afterColon(i int) int {
	j := i + 1
	for j < len(r.text) && (r.text[j] == ' ' || r.text[j] == '\t') {
		j++
	}
	if q := quoteAt(r.text, j); q != 0 {
		if end := r.quoteEnd(j, q); end > j {
			return end
		}
	}
	return restOfLine(r.text, j)
}

// restOfLine is the end of the line holding text[i], or of the next line
// when nothing follows i on its own ("She wrote:\nI'm vegan").
func restOfLine(text string, i int) int {
	eol := lineEnd(text, i)
	if strings.TrimSpace(text[i:eol]) != "" {
		return eol
	}
	return lineEnd(text, skipSpace(text, eol))
}

// ownQuote reports whether the quotation opened at text[i] is the user's
// own words: the whole of its line, in a message that quotes no one else
// (after "He said "I'm off"", a quoted line goes on with what he said).
func (r *speechReader) ownQuote(i, q int) bool {
	text := r.text
	if r.cut || r.line < r.last || strings.TrimSpace(text[r.line:i]) != "" {
		return false
	}
	end := r.quoteEnd(i, q)
	return end > i && strings.TrimSpace(text[end:lineEnd(text, end)]) == ""
}

// lineEnd is the index of the newline ending the line at i, or len(text).
func lineEnd(text string, i int) int {
	if n := strings.IndexByte(text[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(text)
}

// skipSpace is i moved on over white space.
func skipSpace(text string, i int) int {
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	return i
}

// reportingLead finds the reporting words that end text[:i] ("she said",
// "he told me", "my mom says, ") no earlier than from: it returns where they
// start, -1 for none, and whether the user says them of themselves ("I
// told him").
func reportingLead(text string, from, i int) (int, bool) {
	lo := max(from, i-maxLead)
	j := skipSpaceBack(text, lo, i)
	if j > lo && text[j-1] == ',' {
		j = skipSpaceBack(text, lo, j-1)
	}
	w, at := wordBefore(text, lo, j)
	if hearers[w] {
		v, vat := wordBefore(text, lo, skipSpaceBack(text, lo, at))
		if v == "to" {
			if v, vat = wordBefore(text, lo, skipSpaceBack(text, lo, vat)); tellingWords[v] {
				v = "" // "told to me" is no one's speech
			}
		}
		if !reportingWords[v] && !tellingWords[v] {
			return -1, false
		}
		at = vat
	} else if !reportingWords[w] {
		return -1, false
	}
	return at, selfReported(text, max(from, at-maxLead), at)
}

// selfReported reports whether text[:at] ends with "I", maybe followed by
// one of selfLeads: the speech after it is the user's own.
func selfReported(text string, lo, at int) bool {
	j := skipSpaceBack(text, lo, at)
	w, wat := wordBefore(text, lo, j)
	if j < at && selfLeads[w] {
		k := skipSpaceBack(text, lo, wat)
		if k == wat {
			return false
		}
		w, _ = wordBefore(text, lo, k)
	}
	return w == "i" || w == "i've" || w == "i'd"
}

// wordBefore is the word of ASCII letters and apostrophes that ends at j,
// lower-cased, and where it starts; "" when none ends there or the one that
// does runs on before lo or after a digit.
func wordBefore(text string, lo, j int) (string, int) {
	k := j
	for k > lo && (isLetter(text[k-1]) || text[k-1] == '\'') {
		k--
	}
	if k == j || k > 0 && isWordByte(text[k-1]) {
		return "", j
	}
	return strings.ToLower(text[k:j]), k
}

// skipSpaceBack is j moved back over white space, not before lo.
func skipSpaceBack(text string, lo, j int) int {
	for j > lo && isSpace(text[j-1]) {
		j--
	}
	return j
}

// speakerLabel reports whether seg, what a line holds before its first
// colon, names another speaker: "Customer", "Dr. Lee", "My boss", "Person A".
func speakerLabel(seg string) bool {
	if len(seg) > maxLabel || strings.ContainsRune(seg, ':') {
		return false
	}
	ws := strings.Fields(strings.ToLower(seg))
	if len(ws) == 0 {
		return false
	}
	if isLabel(ws) {
		return true
	}
	return len(ws) > 1 && speakerOwners[ws[0]] && isLabel(ws[1:])
}

// isLabel reports whether words are a speaker's label, maybe numbered or
// lettered ("Customer 2", "Person A").
func isLabel(ws []string) bool {
	switch {
	case len(ws) == 1:
		return speakers[strings.TrimRightFunc(ws[0], unicode.IsDigit)] || speakers[ws[0]]
	case len(ws) == 2 && titles[ws[0]] && allLetters(ws[1]):
		return true // "Dr. Lee", "Mrs Smith"
	case len(ws) > 1 && utf8.RuneCountInString(ws[len(ws)-1]) == 1 && isWordByte(ws[len(ws)-1][0]):
		return isLabel(ws[:len(ws)-1])
	}
	return false
}

// wholeQuote is text without its quote marks when it is one quotation
// ("\"I do not enjoy casinos.\""), even over several lines.
func wholeQuote(text string) (string, bool) {
	t := strings.TrimSpace(text)
	for _, p := range [][2]string{{`"`, `"`}, {"“", "”"}, {`"`, "”"}} {
		if len(t) > len(p[0])+len(p[1]) && strings.HasPrefix(t, p[0]) && strings.HasSuffix(t, p[1]) {
			inner := t[len(p[0]) : len(t)-len(p[1])]
			if !strings.ContainsAny(inner, `"“”`) {
				return inner, true
			}
		}
	}
	return "", false
}

// unquoted is quotation s without its marks, the opening one q bytes long.
func unquoted(s string, q int) string {
	s = s[q:]
	if strings.HasSuffix(s, `"`) {
		return s[:len(s)-1]
	}
	return strings.TrimSuffix(s, "”")
}

func isLetter(c byte) bool   { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isWordByte(c byte) bool { return isLetter(c) || '0' <= c && c <= '9' || c == '_' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func allLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return s != ""
}

// fiction starts a sentence said within a story, game or role-play.
var fiction = regexp.MustCompile(`(?i)^(?:(?:ok|okay|so|now|and|alright)[,\s]+)?(?:(?:in|for|within)\s+(?:this|the|my|our|a|your)\s+(?:[\p{L}&-]+\s+)?(?:story|stories|game|novel|book|script|screenplay|scene|scenario|role-?play|campaign|fiction|fanfic|dream|play|universe|world|simulation)\b|(?:as|playing)\s+(?:my|the|a|your)\s+character\b|(?:my|our|the)\s+character\b|let'?s\s+(?:say|pretend|imagine|role-?play|play)\b|role-?play(?:ing)?\b|pretend(?:ing)?\b|in\s+character\b)`)

// fictional reports whether a sentence is said within a story, game or
// role-play: what "I" am there is not what the user is.
func fictional(s string) bool { return fiction.MatchString(s) }
