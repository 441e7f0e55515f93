package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A correction names the value a statement just made should have had:
// "I live in Berlin. Sorry, I meant Munich." Read alone it says nothing;
// read with the statement it corrects, it is that statement with the value
// replaced, so it supersedes what was learned from it. Only names and
// numbers are corrected this way: they are what a slip gets wrong, and the
// word they replace can be found.

var (
	correction = regexp.MustCompile(`(?i)^(?:(?:sorry|oops|whoops|correction|actually|wait|no|nope|my bad|typo|err|um|perdón|perdona|uy|ups|entschuldigung|korrektur|nein|äh|pardon|oups|désolée?|non|desculpa|desculpe|ops|foi\s+mal|não)\b[\s,:!.-]*)*` +
		`(?:i\s+(?:meant|mean)\s+(?:to say\s+)?|quise\s+decir\s+|quería\s+decir\s+|ich\s+meinte\s+|ich\s+meine\s+|je\s+voulais\s+dire\s+|(?:eu\s+)?quis\s+dizer\s+|queria\s+dizer\s+)(.{1,60}?)[\s.!]*$`)
	// value is what a correction can replace: a run of capitalised words
	// (a place, a company, a person, a model), or a number.
	// (Two letters at least, the second no apostrophe: "I" and "I'm" are
	// the user.)
	value = regexp.MustCompile(`\p{Lu}[\p{L}\d-][\p{L}\d'-]*(?:\s+\p{Lu}[\p{L}\d'-]*|\s+\d+)*|\d[\d ().+-]*\d|\d`)
	// articles lead a corrected value the statement already has.
	leadArticle = regexp.MustCompile(`(?i)^(?:a|an|the)\s+`)
)

// corrected is statement prev with its last value of the kind of v
// replaced by v, or "" when there is none to replace.
func corrected(prev, v string) string {
	v = leadArticle.ReplaceAllString(strings.TrimSpace(v), "")
	if prev == "" || v == "" {
		return ""
	}
	if c := recounted(prev, v); c != "" {
		return c
	}
	if len(strings.Fields(v)) > 4 {
		return ""
	}
	first, _ := utf8.DecodeRuneInString(v)
	digits := unicode.IsDigit(first)
	if !digits && !unicode.IsUpper(first) {
		return "" // "I meant a doctor": no name to find in what was said
	}
	locs := value.FindAllStringIndex(prev, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		old := prev[locs[i][0]:locs[i][1]]
		if locs[i][0] == 0 || unicode.IsDigit(rune(old[0])) != digits {
			continue // the sentence's first word is no value
		}
		return prev[:locs[i][0]] + v + prev[locs[i][1]:]
	}
	return ""
}

// recounted is statement prev with the count it made replaced by the one
// v starts with, written as a number or in words of a language read ("I
// have three kids", "sorry I meant two kids, Tobi and Kemi"): from the
// count through the thing counted, when v names it again, else the count
// alone. "" when v starts with no count, or prev holds none.
func recounted(prev, v string) string {
	vw := strings.Fields(v)
	if len(vw) > 8 || !isCount(vw[0]) {
		return ""
	}
	pw := strings.Fields(prev)
	for i, w := range pw {
		if !isCount(w) {
			continue
		}
		end := i + 1
		if len(vw) > 1 && end < len(pw) && strings.EqualFold(strings.Trim(pw[end], ",.;"), strings.Trim(vw[1], ",.;")) {
			end++ // "three kids" by "two kids, Tobi and Kemi"
		} else {
			vw = vw[:1]
		}
		out := append(append(append([]string{}, pw[:i]...), vw...), pw[end:]...)
		return strings.Join(out, " ")
	}
	return ""
}

// isCount reports whether w is a number: digits, or a number word of a
// language read.
func isCount(w string) bool {
	w = strings.ToLower(strings.Trim(w, ",.;:!"))
	if w == "" {
		return false
	}
	if w[0] >= '0' && w[0] <= '9' {
		return true
	}
	for _, t := range tables {
		if _, ok := t.numbers[w]; ok && w != "a" && w != "un" && w != "una" && w != "une" && w != "um" && w != "uma" && w != "ein" && w != "eine" {
			return true
		}
	}
	return false
}
