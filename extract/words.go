package extract

import (
	"strings"

	"github.com/caddy-memory/memory/internal/norm"
)

// pronounObjects start objects that only make sense in context ("I like
// it", "I love this", "I like that you asked").
var pronounObjects = map[string]bool{
	"it": true, "it's": true, "this": true, "that": true, "them": true, "these": true, "those": true,
	"you": true, "your": true, "yours": true, "him": true, "her": true, "so": true, "too": true,
	"when": true, "how": true, "what": true, "which": true, "who": true, "there": true, "here": true,
}

// object cleans the object of a statement: it stops at a clause break, drops
// trailing punctuation, and refuses objects that are pronouns or too long to
// be a fact. Callers rewrite it in the third person for the content and take
// its head, from the words as said, for the key.
func object(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, ",;:()"); i >= 0 {
		s = s[:i]
	}
	for _, cut := range []string{" but ", " because ", " although ", " though ", " and i ", " and i'", " and we ", " and my ", " and our ", " so i ", " which "} {
		if i := strings.Index(strings.ToLower(s), cut); i > 0 {
			s = s[:i]
		}
	}
	s = strings.TrimRight(strings.TrimSpace(s), ".!?\"' ")
	// "I live in Bergen now": when it is true is the statement's, not the place's.
	for _, tail := range []string{" right now", " now", " currently", " nowadays", " these days", " at the moment", " at present"} {
		if strings.HasSuffix(strings.ToLower(s), tail) && len(s) > len(tail) {
			s = strings.TrimSpace(s[:len(s)-len(tail)])
		}
	}
	words := strings.Fields(s)
	if len(words) == 0 || len(words) > maxObjectWords {
		return "", false
	}
	if pronounObjects[strings.ToLower(strings.Trim(words[0], "\"'"))] {
		return "", false
	}
	if len(words) == 1 && skipHead[strings.ToLower(words[0])] {
		return "", false
	}
	return s, true
}

// Words skipped, stopped at, or looked through when taking the head of an
// object.
var (
	skipHead = map[string]bool{"a": true, "an": true, "the": true, "my": true, "some": true, "to": true, "really": true, "very": true, "user's": true, "our": true, "his": true, "her": true, "their": true,
		"not": true, "any": true, "all": true, "using": true, "being": true, "of": true, "one": true, "two": true, "three": true,
		"cup": true, "cups": true, "glass": true, "glasses": true, "lot": true, "lots": true, "bit": true, "kind": true, "kinds": true,
		"type": true, "types": true, "sort": true, "sorts": true, "pair": true, "pairs": true, "bottle": true, "bottles": true}
	stopHead = map[string]bool{"in": true, "on": true, "at": true, "over": true, "with": true, "for": true, "from": true, "by": true, "and": true, "or": true, "than": true, "when": true, "during": true, "before": true, "after": true, "every": true, "because": true, "instead": true,
		"twice": true, "once": true, "daily": true, "weekly": true, "now": true, "again": true, "anymore": true, "today": true, "tomorrow": true,
		"yesterday": true, "last": true, "next": true, "this": true, "as": true, "like": true, "due": true, "so": true, "that": true, "which": true, "since": true}
	lightVerb = map[string]bool{"go": true, "goes": true, "do": true, "does": true, "have": true, "has": true, "get": true, "gets": true, "take": true, "takes": true, "make": true, "makes": true, "play": true, "plays": true}
)

// head is the part of an object that names what a fact is about: "coffee in
// the morning" and "coffee" share the head "coffee", so "I hate coffee"
// supersedes "I love coffee in the morning". A light verb says too little on
// its own: "go for a run" and "go for a swim" are "go run" and "go swim".
func head(o string) string {
	var kept []string
	for _, w := range strings.Fields(strings.ToLower(o)) {
		w = strings.Trim(w, ".,!?\"'")
		if skipHead[w] {
			continue
		}
		if stopHead[w] {
			if len(kept) > 0 && !onlyLight(kept) {
				break
			}
			continue
		}
		kept = append(kept, w)
		if len(kept) == 3 {
			break
		}
	}
	return norm.Normalize(strings.Join(kept, " "))
}

func onlyLight(ws []string) bool {
	for _, w := range ws {
		if !lightVerb[w] {
			return false
		}
	}
	return true
}

// singularOf folds the plural nouns the count rule knows to one key.
func singularOf(noun string) string {
	switch noun {
	case "children":
		return "child"
	case "grandchildren":
		return "grandchild"
	case "kids":
		return "kid"
	case "grandkids":
		return "grandkid"
	}
	return strings.TrimSuffix(noun, "s")
}

// firstPerson are the first-person words thirdPerson rewrites, but "I".
var firstPerson = map[string]string{
	"i'm": "the user is", "im": "the user is", "i've": "the user has", "i'll": "the user will", "i'd": "the user would",
	"my": "the user's", "me": "the user", "mine": "the user's", "myself": "themselves",
	"we": "the user and others", "we've": "the user and others have", "we're": "the user and others are",
	"we'll": "the user and others will", "us": "the user and others", "our": "their",
}

// thirdPerson rewrites first-person words so a fact stands alone:
// "my flight is on Friday" becomes "the user's flight is on Friday".
func thirdPerson(s string) string {
	words := strings.Fields(s)
	for i := 0; i < len(words); i++ {
		w := words[i]
		lw := strings.ToLower(strings.Trim(w, ".,!?;:\"'"))
		suffix := w[len(strings.TrimRight(w, ".,!?;:\"'")):]
		switch lw {
		case "i":
			words[i] = "the user"
			// The verb, after any adverbs: "I strongly dislike".
			j := i + 1
			for j < len(words)-1 && adverbWord(words[j]) {
				j++
			}
			if j+2 < len(words) && strings.EqualFold(words[j], "no") && strings.EqualFold(words[j+1], "longer") {
				j += 2 // "I no longer eat meat": the verb is "eat"
			}
			if j < len(words) {
				words[j] = conjugate(words[j])
			}
		default:
			if r, ok := firstPerson[lw]; ok {
				words[i] = r + suffix
			}
		}
	}
	return strings.Join(words, " ")
}

// contentKey keys a fact by its normalised text, for facts with no subject to
// key them by.
func contentKey(s string) string {
	return norm.Short(norm.Normalize(s), 8)
}

// sentence capitalises and terminates a fact.
func sentence(s string) string {
	s = strings.TrimRight(strings.TrimSpace(s), ".!;:, ")
	if s == "" {
		return ""
	}
	if strings.HasPrefix(s, "the user") {
		s = "User" + s[len("the user"):]
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// conjugateFirst conjugates the first word of a verb phrase for "the user".
func conjugateFirst(s string) string {
	w := strings.Fields(s)
	if len(w) == 0 {
		return s
	}
	w[0] = conjugate(w[0])
	return strings.Join(w, " ")
}

var irregular = map[string]string{
	"am": "is", "was": "was", "have": "has", "do": "does", "go": "goes", "don't": "doesn't",
	"can": "can", "cannot": "cannot", "could": "could", "will": "will", "would": "would", "should": "should",
	"must": "must", "might": "might", "may": "may", "shall": "shall", "can't": "can't",
	"won't": "won't", "didn't": "didn't", "wasn't": "wasn't", "haven't": "hasn't",
	"had": "had", "did": "did", "went": "went", "got": "got", "made": "made", "said": "said",
	"also": "also", "really": "really", "just": "just", "still": "still", "never": "never",
	"always": "always", "often": "often", "usually": "usually", "sometimes": "sometimes",
}

// Irregular past forms stay as they are: "I broke up with" is not "the
// user brokes up with".
func init() {
	for _, w := range strings.Fields(`broke sold quit left went made said took gave found bought brought thought felt kept met ran
	came became began wrote drove rode ate drank swam sang spent sent lost won paid built taught caught fell grew knew saw
	told understood woke chose forgot hid held hurt let put set shut split spread stood stole struck swore threw wore
	fought sought slept left led read heard meant dealt sat lit`) {
		irregular[w] = w
	}
}

// lyVerbs are verbs that end like adverbs.
var lyVerbs = map[string]bool{"fly": true, "apply": true, "reply": true, "rely": true, "supply": true, "multiply": true, "imply": true, "comply": true, "ally": true}

// conjugate puts a present-tense verb in the third person singular; words that
// are not plain verbs (past tense, modals, adverbs) are left alone.
func conjugate(v string) string {
	lw := strings.ToLower(v)
	if c, ok := irregular[lw]; ok {
		return c
	}
	switch {
	case strings.HasSuffix(lw, "eed"): // need, feed, succeed: present tense
		return v + "s"
	case lyVerbs[lw]:
		return v[:len(v)-1] + "ies"
	case strings.HasSuffix(lw, "ed"), strings.HasSuffix(lw, "ly"), strings.HasSuffix(lw, "s"), strings.HasSuffix(lw, "ing"):
		return v
	case strings.HasSuffix(lw, "sh"), strings.HasSuffix(lw, "ch"), strings.HasSuffix(lw, "x"), strings.HasSuffix(lw, "z"), strings.HasSuffix(lw, "o"):
		return v + "es"
	case len(lw) > 2 && strings.HasSuffix(lw, "y") && !strings.ContainsRune("aeiou", rune(lw[len(lw)-2])):
		return v[:len(v)-1] + "ies"
	}
	return v + "s"
}

// About rewrites a fact about "the user" as a fact about a named speaker,
// for transcripts between people ("Caroline's dog is named Rex"). The key
// names the speaker too, so two speakers' facts never supersede each other.
func About(f Fact, subject string) Fact {
	if subject == "" || subject == "User" {
		return f
	}
	r := strings.NewReplacer("User's", subject+"'s", "the user's", subject+"'s", "User ", subject+" ", "the user", subject)
	f.Content = r.Replace(f.Content)
	f.Key = norm.Normalize(subject) + ":" + f.Key
	return f
}
