package extract

import (
	"regexp"
	"strings"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/norm"
)

// Fact is a standalone statement about the user, in the third person, with
// the stable key under which a newer statement supersedes it.
type Fact struct {
	Kind    string
	Key     string
	Content string
}

// Limits on what the rules look at: a pasted document is not the user talking
// about themselves.
const (
	maxSentence     = 300 // characters; longer sentences are skipped
	maxFactsPerTurn = 12
	maxObjectWords  = 14
)

type rule struct {
	kind string
	re   *regexp.Regexp
	// build returns the fact's key suffix and content from the submatches,
	// or ok=false to skip.
	build func(m []string) (key, content string, ok bool)
}

// The rules are English. Other languages are still remembered as transcript
// turns and found by full-text search; only fact extraction needs the rules.
var rules = []rule{
	// Explicit requests come first: "remember that ..." wins over the other
	// rules for the same sentence.
	{"note", regexp.MustCompile(`(?i)^(?:please\s+)?(?:remember|don'?t forget|do not forget|keep in mind|note)(?:\s+that|\s*:)\s+(.+)$`),
		func(m []string) (string, string, bool) {
			c := sentence(thirdPerson(m[1]))
			return contentKey(c), c, c != ""
		}},
	{"identity", regexp.MustCompile(`(?i:\b(?:my name is|my name's|call me|i am called|i'm called))\s+(\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+)?)`),
		func(m []string) (string, string, bool) {
			return "name", "User's name is " + m[1] + ".", true
		}},
	{"identity", regexp.MustCompile(`(?i)\bi(?:'m| am)\s+(\d{1,3})\s+(?:years old|yrs old|year old)`),
		func(m []string) (string, string, bool) {
			return "age", "User is " + m[1] + " years old.", true
		}},
	{"identity", regexp.MustCompile(`(?i)\bi(?:'m|\s+am)?\s+(?:currently\s+|still\s+)?(?:live|living|reside|residing)\s+in\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[1])
			return "location", "User lives in " + thirdPerson(o) + ".", ok
		}},
	{"identity", regexp.MustCompile(`(?i)\bi(?:'ve| have)?\s+(?:just\s+|recently\s+)?moved\s+to\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[1])
			return "location", "User moved to " + thirdPerson(o) + " and lives there.", ok
		}},
	{"identity", regexp.MustCompile(`(?i)\bi(?:'m| am)\s+(?:originally\s+)?from\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[1])
			return "origin", "User is from " + thirdPerson(o) + ".", ok
		}},
	{"identity", regexp.MustCompile(`(?i)\bi(?:'m|\s+am)?\s+(?:currently\s+|still\s+)?(?:work|working)\s+as\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[1])
			return "job", "User works as " + thirdPerson(o) + ".", ok
		}},
	{"identity", regexp.MustCompile(`(?i)\bmy (?:job|profession|occupation) is\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[1])
			return "job", "User's job is " + thirdPerson(o) + ".", ok
		}},
	{"identity", regexp.MustCompile(`(?i)\bi(?:'m|\s+am)?\s+(?:currently\s+|still\s+)?(?:work|working)\s+(?:at|for)\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[1])
			return "employer", "User works at " + thirdPerson(o) + ".", ok
		}},
	{"identity", regexp.MustCompile(`(?i)\bi(?:'m| am)\s+(?:a\s+)?(vegetarian|vegan|pescatarian|celiac|diabetic|lactose intolerant|gluten[- ]free)\b`),
		func(m []string) (string, string, bool) {
			return "diet", "User is " + strings.ToLower(m[1]) + ".", true
		}},
	{"identity", regexp.MustCompile(`(?i)\bi(?:'m| am)\s+(married|single|divorced|engaged|widowed|in a relationship)\b`),
		func(m []string) (string, string, bool) {
			return "relationship", "User is " + strings.ToLower(m[1]) + ".", true
		}},
	{"health", regexp.MustCompile(`(?i)\bi(?:'m| am)\s+allergic\s+to\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[1])
			return "allergy:" + head(o), "User is allergic to " + thirdPerson(o) + ".", ok
		}},
	{"family", regexp.MustCompile(`(?i:\bmy\s+(wife|husband|partner|girlfriend|boyfriend|fiancee?|son|daughter|mother|mom|mum|father|dad|brother|sister|grandmother|grandfather|grandma|grandpa|dog|cat|puppy|kitten|best friend|boss)(?:'s name)?\s+is\s+(?:called\s+|named\s+)?)(\p{Lu}[\p{L}'-]+)`),
		func(m []string) (string, string, bool) {
			rel := strings.ToLower(m[1])
			key := rel
			if !singular[rel] {
				key = rel + ":" + strings.ToLower(m[2]) // several sons, dogs, ...
			}
			return key, "User's " + rel + " is named " + m[2] + ".", true
		}},
	{"family", regexp.MustCompile(`(?i)\bi have\s+(a|an|one|two|three|four|five|six|\d{1,2})\s+(kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|dogs?|cats?|pets?|grandchildren|grandkids?)\b`),
		func(m []string) (string, string, bool) {
			noun := strings.ToLower(m[2])
			return "count:" + singularOf(noun), "User has " + strings.ToLower(m[1]) + " " + noun + ".", true
		}},
	{"preference", regexp.MustCompile(`(?i)\bmy\s+favou?rite\s+([\p{L} ]{2,30}?)\s+(?:is|are)\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[2])
			what := strings.ToLower(strings.TrimSpace(m[1]))
			return "favorite:" + what, "User's favorite " + what + " is " + thirdPerson(o) + ".", ok
		}},
	{"preference", regexp.MustCompile(`(?i)\bi\s+(?:really\s+|absolutely\s+|also\s+|just\s+|totally\s+|kind of\s+|do\s+)?(love|like|enjoy|prefer|adore|hate|dislike|loathe|can't stand|cannot stand|don't like|do not like|don't enjoy|do not enjoy|don't eat|do not eat|don't drink|do not drink)\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[2])
			verb := prefVerbs[strings.ToLower(m[1])]
			return head(o), "User " + verb + " " + thirdPerson(o) + ".", ok && verb != ""
		}},
	{"habit", regexp.MustCompile(`(?i)\bi\s+(usually|always|often|normally|typically|generally|regularly|never|rarely|sometimes|tend to)\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[2])
			adv := strings.ToLower(m[1])
			if adv == "tend to" {
				return head(o), "User tends to " + thirdPerson(o) + ".", ok
			}
			return head(o), "User " + adv + " " + conjugateFirst(thirdPerson(o)) + ".", ok
		}},
	{"habit", regexp.MustCompile(`(?i)^(every\s+(?:morning|evening|night|day|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\s*,?\s+i\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[2])
			return head(o), strings.ToUpper(m[1][:1]) + m[1][1:] + ", the user " + conjugateFirst(thirdPerson(o)) + ".", ok
		}},
	{"decision", regexp.MustCompile(`(?i)\b(?:i|we)(?:'ve| have)?\s+decided\s+(to|on|that|against)\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[2])
			return head(o), "User decided " + strings.ToLower(m[1]) + " " + thirdPerson(o) + ".", ok
		}},
	{"decision", regexp.MustCompile(`(?i)\b(?:let's|we'll|we will|i'll|i will|i'm going to|we're going to)\s+(go with|use|stick with|choose|pick|switch to)\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[2])
			return head(o), "User chose to " + strings.ToLower(m[1]) + " " + thirdPerson(o) + ".", ok
		}},
	{"plan", regexp.MustCompile(`(?i)\bi(?:'m| am)?\s+(?:planning|plan|going|intending|hoping)\s+to\s+(.+)`),
		func(m []string) (string, string, bool) {
			o, ok := object(m[1])
			// "going to the store" is a destination, not a plan to do something.
			if first := strings.ToLower(strings.Fields(o + " x")[0]); skipHead[first] {
				return "", "", false
			}
			return head(o), "User plans to " + thirdPerson(o) + ".", ok
		}},
}

// Relations a person has at most one of at a time: a newer statement
// supersedes the older one.
var singular = map[string]bool{
	"wife": true, "husband": true, "partner": true, "girlfriend": true, "boyfriend": true,
	"fiance": true, "fiancee": true, "mother": true, "mom": true, "mum": true,
	"father": true, "dad": true, "boss": true, "best friend": true,
}

var prefVerbs = map[string]string{
	"love": "loves", "like": "likes", "enjoy": "enjoys", "prefer": "prefers", "adore": "adores",
	"hate": "hates", "dislike": "dislikes", "loathe": "loathes",
	"can't stand": "can't stand", "cannot stand": "can't stand",
	"don't like": "does not like", "do not like": "does not like",
	"don't enjoy": "does not enjoy", "do not enjoy": "does not enjoy",
	"don't eat": "does not eat", "do not eat": "does not eat",
	"don't drink": "does not drink", "do not drink": "does not drink",
}

var (
	fenced       = regexp.MustCompile("(?s)```.*?(```|$)")
	splitter     = regexp.MustCompile(`(?:[.!?]+["')\]]*\s+|\n+|;\s+)`)
	notStatement = regexp.MustCompile(`(?i)^(?:if|when|suppose|imagine|what if|would|could|should|do|does|did|is|are|can|how|why|what|who|where|which)\b`)
)

// Facts extracts facts about the user from what they said in one turn.
// Questions, hypotheticals, quoted or fenced text and injected memory blocks
// are not statements about the user and yield nothing.
func Facts(userText string) []Fact {
	text := fenced.ReplaceAllString(inject.Strip(userText), "\n")
	var out []Fact
	seen := map[string]int{}
	for _, s := range splitter.Split(text, -1) {
		s = strings.TrimSpace(s)
		if len(s) < 6 || len(s) > maxSentence || strings.HasPrefix(s, ">") || strings.HasSuffix(s, "?") || notStatement.MatchString(s) {
			continue
		}
		for i, r := range rules {
			matched := false
			for _, loc := range r.re.FindAllStringSubmatchIndex(s, 3) {
				if hedged(s[:loc[0]]) {
					continue
				}
				m := submatches(s, loc)
				key, content, ok := r.build(m)
				if !ok || key == "" || content == "" {
					continue
				}
				matched = true
				key = r.kind + ":" + key
				if at, dup := seen[key]; dup {
					// A later statement in the same message corrects an
					// earlier one: "I live in Berlin. Sorry, I mean Munich."
					out[at].Content = content
					continue
				}
				if len(out) >= maxFactsPerTurn {
					continue
				}
				seen[key] = len(out)
				out = append(out, Fact{Kind: r.kind, Key: key, Content: content})
			}
			if matched && i == 0 {
				break // "remember that ..." is kept whole, not also taken apart
			}
		}
	}
	return out
}

// hedges are words that, in the clause before a statement, mean the
// statement is not asserted: "I don't think I like coffee", "not sure I
// live in the right place", "I wonder whether I prefer tea".
var hedges = regexp.MustCompile(`(?i)(?:\bnot\b|n't\b|\bnever\b|\bno\b|\bdoubt|\bwonder|\bif\b|\bwhether\b|\bunless\b|\bwish\b|\bpretend|\bimagine|\bsuppose)`)

// clauseBreak ends the clause a hedge can reach across.
var clauseBreak = regexp.MustCompile(`(?i)(?:[,;:]|\s(?:and|but|so|because|although)\s)`)

// hedged reports whether the clause leading up to a match hedges it.
func hedged(before string) bool {
	if locs := clauseBreak.FindAllStringIndex(before, -1); len(locs) > 0 {
		before = before[locs[len(locs)-1][1]:]
	}
	return hedges.MatchString(before)
}

// submatches turns FindStringSubmatchIndex output into strings.
func submatches(s string, loc []int) []string {
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	return m
}

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
	skipHead  = map[string]bool{"a": true, "an": true, "the": true, "my": true, "some": true, "to": true, "really": true, "very": true, "user's": true, "our": true, "his": true, "her": true, "their": true}
	stopHead  = map[string]bool{"in": true, "on": true, "at": true, "over": true, "with": true, "for": true, "from": true, "by": true, "and": true, "or": true, "than": true, "when": true, "during": true, "before": true, "after": true, "every": true, "because": true, "instead": true}
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
			if i+1 < len(words) {
				words[i+1] = conjugate(words[i+1])
			}
		case "i'm", "im":
			words[i] = "the user is"
		case "i've":
			words[i] = "the user has"
		case "i'll":
			words[i] = "the user will"
		case "i'd":
			words[i] = "the user would"
		case "my":
			words[i] = "the user's"
		case "me":
			words[i] = "the user" + suffix
		case "mine":
			words[i] = "the user's" + suffix
		case "myself":
			words[i] = "themselves" + suffix
		case "we":
			words[i] = "the user and others"
		case "our":
			words[i] = "their"
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
	"can": "can", "could": "could", "will": "will", "would": "would", "should": "should",
	"must": "must", "might": "might", "may": "may", "shall": "shall", "can't": "can't",
	"won't": "won't", "didn't": "didn't", "wasn't": "wasn't", "haven't": "hasn't",
	"had": "had", "did": "did", "went": "went", "got": "got", "made": "made", "said": "said",
	"also": "also", "really": "really", "just": "just", "still": "still", "never": "never",
	"always": "always", "often": "often", "usually": "usually", "sometimes": "sometimes",
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
