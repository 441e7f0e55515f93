package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// People misspell the words that matter most: "I'm alergic to shelfish" is
// an allergy. Before a sentence is read, a word one edit away (a letter
// added, dropped or changed) from one of the words the slots and rules key
// on is read as that word. Only words without a common English neighbour
// one edit away are keyed on ("daughter" is one from "laughter"), and only
// words of six letters or more are corrected, so a short word is never
// taken for another.

// keyWords are the words corrected towards.
var keyWords = strings.Fields(`allergic allergy allergies intolerant intolerance vegetarian vegetarians pescatarian
	shellfish peanuts peanut gluten lactose penicillin celiac coeliac diabetic diabetes asthma epilepsy sesame
	strawberries construction daughter daughters receptionist electrician accountant pharmacist allergique allergisch alérgico alérgica alergia vegetariano vegetariana celíaco celíaca
	végétarien végétarienne vegetarier vegetarierin intolerante`)

// realWords are words one edit from a key word that are words of their
// own: these, and every word of the language tables ("lactosa" is no
// misspelt "lactose").
var realWords = func() map[string]bool {
	m := wordSet(`laughter slaughter laughters eggetarian eggetarians`)
	for _, t := range tables {
		for _, words := range []map[string]string{t.allergens, t.diets, t.conditions, t.jobs, t.relations, t.pets, t.languages, t.foods} {
			for w := range words {
				if !strings.Contains(w, "-") {
					m[w] = true
				}
			}
		}
	}
	return m
}()

// minTypo is the shortest word corrected.
const minTypo = 6

// typoIndex maps each key word, and each form of it with one letter
// dropped, to the key word.
var typoIndex = func() map[string]string {
	m := map[string]string{}
	for _, w := range keyWords {
		m[w] = w
		for _, d := range dropOne(w) {
			if _, taken := m[d]; !taken {
				m[d] = w
			}
		}
	}
	return m
}()

// dropOne are the forms of w with one letter dropped.
func dropOne(w string) []string {
	var out []string
	for i := 0; i < len(w); {
		_, n := utf8.DecodeRuneInString(w[i:])
		out = append(out, w[:i]+w[i+n:])
		i += n
	}
	return out
}

// contractions are the words people type without their apostrophe,
// which the patterns read with it.
var contractions = map[string]string{"im": "I'm", "ive": "I've", "dont": "don't", "doesnt": "doesn't",
	"didnt": "didn't", "cant": "can't", "isnt": "isn't", "wasnt": "wasn't", "hes": "he's", "shes": "she's",
	"theyre": "they're", "wifes": "wife's", "husbands": "", "havent": "haven't", "ill": ""}

// fixTypos returns s with each word one edit from a key word spelled as
// that word, and contractions typed without their apostrophe with it.
func fixTypos(s string) string {
	var b strings.Builder
	changed := false
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		word := s[start:end]
		if c := contractions[strings.ToLower(word)]; c != "" && !(c == "I'm" && readsGerman(s)) {
			b.WriteString(c)
			changed = true
		} else if fixed := keyWordFor(word); fixed != "" {
			b.WriteString(fixed)
			changed = true
		} else {
			b.WriteString(word)
		}
		start = -1
	}
	for i, r := range s {
		letter := r == '\'' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r >= 0xC0
		if letter && start < 0 {
			start = i
		} else if !letter {
			flush(i)
			b.WriteRune(r)
		}
	}
	flush(len(s))
	if !changed {
		return s
	}
	return b.String()
}

// keyWordFor is the key word a word is a misspelling of, "" for none (or
// when it is spelled right).
func keyWordFor(word string) string {
	if utf8.RuneCountInString(word) < minTypo {
		return ""
	}
	if r, _ := utf8.DecodeRuneInString(word); unicode.IsUpper(r) {
		return "" // a name ("Celtic" is no "celiac")
	}
	low := strings.ToLower(word)
	if realWords[low] {
		return ""
	}
	if w, ok := typoIndex[low]; ok {
		if w == low {
			return "" // spelled right
		}
		return w // a letter dropped
	}
	// Each form with one letter dropped, built in place: every word of
	// every sentence learned from passes here.
	var buf [64]byte
	for i := 0; i < len(low); {
		_, n := utf8.DecodeRuneInString(low[i:])
		if len(low)-n > len(buf) {
			break
		}
		d := append(append(buf[:0], low[:i]...), low[i+n:]...)
		i += n
		w, ok := typoIndex[string(d)]
		if !ok || w == low || low == w+"s" || low == w+"es" {
			continue // a plural is no misspelling
		}
		return w // a letter added, or changed
	}
	return ""
}

// readsGerman reports whether s holds a word only German reads, where "im" is
// a word ("im Betrieb"), not "I'm" typed without its apostrophe.
func readsGerman(s string) bool {
	for _, l := range languages {
		if l.code != "de" {
			continue
		}
		for _, w := range strings.Fields(strings.ToLower(s)) {
			if l.common[strings.Trim(w, ".,!?;:")] && w != "im" {
				return true
			}
		}
	}
	return false
}
