package extract

import (
	"strings"
	"unicode"
)

// The kinds of word a sentence holds and a pattern needs: a cheap test,
// made once a sentence, that passes over most patterns without running
// them.

// wordClass is a set of kinds of word a sentence holds, or a pattern
// needs: a cheap test, made once a sentence, that passes over most
// patterns without running them.
type wordClass uint16

const (
	classRel wordClass = 1 << iota
	classPet
	classDiet
	classJob
	classAllergen
	classLanguage
	classKids
	classCond
	classNumber
	classCapital // a word with a capital, not the first of the sentence nor "I"
	// classLead is a capital anywhere, the first word too: what a pattern
	// that starts with a name needs ("Anika turned 6").
	classLead
)

// placeholderClass are the kinds of word a placeholder matches.
var placeholderClass = map[string]wordClass{"{REL}": classRel, "{PET}": classPet, "{PETS}": classPet,
	"{DIET}": classDiet, "{JOB}": classJob, "{ALLERGEN}": classAllergen, "{LANGS}": classLanguage,
	"{KIDS}": classKids, "{COND}": classCond, "{NUM}": classNumber, "{NAME}": classCapital, "{PLACE}": classCapital}

// needed are the kinds of word a pattern's template cannot match without:
// its placeholders outside any group (a group may be optional or one of
// several).
func needed(tmpl string) wordClass {
	var c wordClass
	depth := 0
	for i := 0; i < len(tmpl); i++ {
		switch tmpl[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
		case '{':
			if depth != 0 {
				continue
			}
			if j := strings.IndexByte(tmpl[i:], '}'); j > 0 {
				c |= placeholderClass[tmpl[i:i+j+1]]
			}
		}
	}
	lead := tmpl
	if strings.HasPrefix(lead, "(") {
		// A leading optional group: "(?:my\s+)?{NAME} died".
		if end := closingParen(lead); end > 0 && end+1 < len(lead) && lead[end+1] == '?' {
			lead = lead[end+2:]
		}
	}
	if strings.HasPrefix(lead, "{NAME}") || strings.HasPrefix(lead, "{PLACE}") {
		c = c&^classCapital | classLead
	}
	return c
}

// classes are the kinds of the table's words, by word.
func (t *langTable) classes() map[string]wordClass {
	m := map[string]wordClass{}
	add := func(words map[string]string, c wordClass) {
		for w := range words {
			first, _, _ := strings.Cut(w, " ")
			m[first] |= c
		}
	}
	add(t.relations, classRel)
	add(t.pets, classPet)
	add(t.diets, classDiet)
	add(t.jobs, classJob)
	add(t.allergens, classAllergen)
	add(t.languages, classLanguage)
	add(t.children, classKids)
	add(t.conditions, classCond)
	for w, n := range t.numbers {
		if n > 1 || len(w) > 3 { // not the articles that are also "one"
			m[w] |= classNumber
		}
	}
	return m
}

// sentenceTokens are a sentence's words, lower case, and which kinds of
// word it holds whatever the language (numbers in digits, capitals).
type sentenceTokens struct {
	words []string
	own   wordClass
}

func tokensOf(s string) sentenceTokens {
	var t sentenceTokens
	for i, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == ',' || r == '.' || r == '!' || r == '?' || r == ';' || r == ':' || r == '(' || r == ')' || r == '"' || r == '\n' || r == '«' || r == '»' || r == '¿' || r == '¡'
	}) {
		if startsUpper(w) && w != "I" && !strings.HasPrefix(w, "I'") && !strings.HasPrefix(w, "I’") {
			t.own |= classLead
			if i > 0 {
				t.own |= classCapital
			}
		}
		if w[0] >= '0' && w[0] <= '9' {
			t.own |= classNumber
		}
		t.words = append(t.words, lowerWord(w))
	}
	return t
}

// lowerWord is w in lower case, w itself when it already is (most words).
func lowerWord(w string) string {
	for _, r := range w {
		if unicode.IsUpper(r) {
			return strings.ToLower(w)
		}
	}
	return w
}

// classesIn are the kinds of word of the language a sentence holds.
func (l *language) classesIn(t sentenceTokens) wordClass {
	c := t.own
	for _, w := range t.words {
		c |= l.classes[w]
		if strings.Contains(w, "-") { // "laktose-intolerant", "thirty-five"
			first, _, _ := strings.Cut(w, "-")
			c |= l.classes[first] | l.classes[w]
		}
		for _, suffix := range compoundHeads {
			if head, ok := strings.CutSuffix(w, suffix); ok && head != "" { // "nussallergie"
				c |= l.classes[head]
			}
		}
	}
	return c
}
