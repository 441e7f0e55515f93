package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How people type, read before the slots are: a statement without its
// subject, "I" and "we" wherever they stand, a sentence all in lower case.

// subjectWords start a clause wherever they stand; embedders make the
// clause they start part of another ("where we live", "what I eat").
var (
	subjectWords = wordSet(`i i'm i've i'd we we're we've`)
	embedders    = wordSet(`where that which what how when whether if than as who whom whose why while`)
)

// firstWord is s's first word, its letters and apostrophes.
func firstWord(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	if end < 0 {
		return s
	}
	return s[:end]
}

// withSubject gives an English statement typed without its subject one:
// "Moved house over the weekend", "finally caved and switched to a
// Pixel", "Sold the Ford in the end!" are the user's, as "I moved ..."
// would be. Only a sentence that opens (after a lead such as "so" or
// "finally") with one of the verbs people report their own news with.
func withSubject(s string) string {
	s = continued(s)
	i := afterLeads(s)
	if newsVerbs[strings.ToLower(strings.TrimRight(firstWord(s[i:]), "'"))] {
		return s[:i] + "I " + s[i:]
	}
	return withCopula(s)
}

// afterLeads is where s goes on after the leads that open it ("so",
// "finally", "honestly"), and what follows them.
func afterLeads(s string) int {
	i := 0
	for {
		w := strings.ToLower(strings.TrimRight(firstWord(s[i:]), "'"))
		if w == "" || !subjectlessLeads[w] {
			return i
		}
		i += len(w)
		for i < len(s) && (s[i] == ' ' || s[i] == ',' || s[i] == ':' || s[i] == '!') {
			i++
		}
	}
}

// withCopula gives a statement of what the user is typed without its
// "I'm" one ("Not a fan of spicy food", "Allergic to cats"), after a lead
// such as "so" or "honestly"; the rules read it so, as the slots read
// withSubject's.
func withCopula(s string) string {
	i := afterLeads(s)
	if !copulaOpening.MatchString(s[i:]) {
		return s
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return s[:i] + "I'm " + string(unicode.ToLower(r)) + s[i+n:]
}

// copulaOpening opens a statement of what the user is, typed without
// its "I'm".
var copulaOpening = regexp.MustCompile(`(?i)^(?:not\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of|not\s+(?:big\s+on|into|keen\s+on)|(?:a\s+)?(?:big|huge)\s+fan\s+of|more\s+of\s+a\s+\S+\s+person|allergic\s+to|lactose\s+intolerant|(?:strict\s+)?(?:vegetarian|vegan|pescatarian|coeliac|celiac|teetotal)\b)`)

var (
	subjectlessLeads = wordSet(`so ok okay update finally just also and then anyway btw recently well honestly yeah yep oh`)
	newsVerbs        = wordSet(`hit moved relocated sold bought got picked switched changed upgraded swapped traded started joined left quit
		graduated finished took gave dropped adopted married turned caved packed retired landed signed`)
)

// A sentence typed all in lower case names people and places in lower
// case too ("me and josh split", "on habite a brest"): its names are read
// as one word of any case, then checked and given their capital.
const (
	lowerName  = `(?P<name>[\p{L}][\p{L}'’-]+)`
	lowerPlace = `(?P<place>[\p{L}][\p{L}'’.-]+)`
)

// hasUpper reports whether s holds a capital letter.
func hasUpper(s string) bool {
	for _, r := range s {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// capitalised checks the names a lower-case sentence's match read and
// gives them their capital: a word of a language's own (a common word, a
// relation, a job...) is no name.
func capitalised(g map[string]string) bool {
	for _, k := range []string{"name", "place", "org"} {
		v := g[k]
		if v == "" {
			continue
		}
		if k == "org" {
			v = strings.TrimPrefix(v, "the ") // "root for the warriors"
		}
		for _, w := range strings.Fields(v) {
			if notAName(strings.ToLower(w)) {
				return false
			}
		}
		g[k] = titleCase(v)
	}
	return true
}

// notAName reports whether a lower-case word is one the languages read
// use as a word of their own.
func notAName(w string) bool {
	if len(w) < 2 || stopNames[w] {
		return true
	}
	for _, l := range languages {
		if l.common[w] || l.classes[w] != 0 {
			return true
		}
	}
	return false
}

var stopNames = wordSet(`is are was were am be been being so very really just and but or not no yes called named
	amazing great lovely fine good nice happy sad sick busy tired home away out off up down over
	here there home work now today tomorrow yesterday someone somebody him her them it this that
	the a an my our your his their new old town city place house flat school uni office bed gym again too still back`)

// titleCase gives each word of s its capital.
func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		r, n := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[n:]
	}
	return strings.Join(words, " ")
}

// A statement about the user goes on, clause after clause, without saying
// "I" again: "I'm Brazilian, been living in Berlin for three years,
// working at N26 as a backend dev"; "Myself Rahul, working as data analyst
// in Infosys". Such a clause is the user's only when the sentence opened
// with them; "My sister, working at Google, ..." is about the sister.
var (
	opensWithUser = regexp.MustCompile(`(?i)^(?:(?:hi|hey|hello|so|ok|well|also|and|anyway)[,!]?\s+)*(?:i\b|i'm\b|i've\b|myself\b|me\b)`)
	goesOn        = regexp.MustCompile(`(?i)(,\s*(?:and\s+)?)(been\s+(?:living|working|based|studying)|living|working|studying|based)\b`)
)

// learnedThat are the words a statement learned from others opens with
// ("Descobri semana passada que sou alérgico a camarão", "found out last
// week that I'm coeliac"): the statement after "que"/"that" is the user's
// own, and starts a clause.
var learnedThat = regexp.MustCompile(`(?i)\b(?:descobri|descubrí|descubri|me\s+enteré|fiquei\s+a\s+saber|j'ai\s+découvert|j'ai\s+appris|found\s+out|learned|learnt|realised|realized|discovered)(?:\s+[^,.;!?]{0,25}?)?\s+(?:que|qu'|that)\s+`)

func continued(s string) string {
	s = learnedThat.ReplaceAllString(s, ": ")
	if !opensWithUser.MatchString(s) {
		return s
	}
	return goesOn.ReplaceAllStringFunc(s, func(m string) string {
		loc := goesOn.FindStringSubmatch(m)
		if strings.HasPrefix(strings.ToLower(loc[2]), "been") {
			return loc[1] + "I've " + loc[2]
		}
		return loc[1] + "I'm " + loc[2]
	})
}
