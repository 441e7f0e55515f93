package extract

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/caddy-memory/memory/internal/block"
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
	maxClauseWords  = 48
)

var (
	fenced   = regexp.MustCompile("(?s)```.*?(```|$)")
	splitter = regexp.MustCompile(`(?:[.!?]+["')\]]*\s+|\n+|;\s+)`)
	// sentences are split without ";": "I avoid X; Y makes me sick" is one
	// statement, and two joined by ";" are cut apart as clauses.
	sentences = regexp.MustCompile(`(?:[.!?]+["')\]]*\s+|\n+)`)
	// askedAfter starts the question a statement runs into: "I usually
	// prefer X, but do you have any ideas?"
	askedAfter   = regexp.MustCompile(`(?i)(?:,|\s+[-–—]|;)\s*(?:(?:but|so|and|though|then)\s+)?(?:do|does|can|could|would|will|is|are|what|how|which|where|any|have|should|i'm wondering|i wonder|i was wondering|i'm curious|i am wondering)\b`)
	notStatement = regexp.MustCompile(`(?i)^(?:if|when|suppose|imagine|what if|would|could|should|do|does|did|is|are|can|how|why|what|who|where|which)\b`)
)

// Facts extracts facts about the user from what they said in one turn.
// Questions, hypotheticals, someone else's words (see othersWords), fiction,
// fenced text and injected memory blocks are not statements about the user
// and yield nothing.
func Facts(userText string) []Fact { return FactsAfter("", userText) }

// FactsAfter is Facts for a message that follows earlier, the user's
// previous message in the conversation: a correction ("Sorry, I meant
// Munich.") restates the statement it corrects, there or in this message.
func FactsAfter(earlier, userText string) []Fact { return FactsIn(earlier, userText, false) }

// FactsIn is FactsAfter in a conversation that may be framed (see
// Framed): then only what the user says stepping out of the frame is read.
func FactsIn(earlier, userText string, framed bool) []Fact {
	return factsOfOwn(earlier, ownText(userText, framed))
}

// factsOfOwn is FactsIn of a message already cut to its own words
// (ownText).
func factsOfOwn(earlier, own string) []Fact {
	facts, _ := readOwn(earlier, own, false)
	return facts
}

// readOwn is what a message already cut to its own words teaches: its
// facts, and, when withNotes, the notes (notes.go) of what it says that
// they leave out.
func readOwn(earlier, own string, withNotes bool) (out, notes []Fact) {
	prev, prevFacts := "", []Fact(nil) // the statement a correction corrects, and what it taught
	readEarlier := false
	seen := map[string]int{}
	var last *slotMatch
	for _, s := range statementsOfOwn(own) {
		s = fixTypos(s)
		var said map[string]bool // what the corrected statement taught as it was
		if m := correction.FindStringSubmatch(s); m != nil {
			if prev == "" && !readEarlier {
				// Read only for a correction, and once.
				prev, prevFacts = lastStatement(earlier)
				readEarlier = true
			}
			if s = corrected(prev, m[1]); s == "" {
				continue
			}
			said = map[string]bool{}
			for _, f := range prevFacts {
				said[f.Content] = true
			}
		}
		fs := withSlots(slotFacts(s, &last), sentenceFacts(withCopula(s)))
		if len(fs) > 0 {
			prev, prevFacts = s, fs
		}
		if withNotes { // own holds nothing of a frame the message opens: ownWords cut it
			notes = appendNotes(notes, s, fs)
		}
		for _, f := range fs {
			if namesNothing(f.Content) || said[f.Content] {
				continue
			}
			if at, dup := seen[f.Key]; dup {
				// A later statement in the same message corrects an
				// earlier one: "I live in Berlin. Sorry, I mean Munich."
				// Work is one slot of two parts: "I'm a nurse. I work at
				// St Mary's." says both.
				if f.Key == "identity:job" && !negative.MatchString(f.Content+out[at].Content) && said == nil {
					out[at].Content = strings.TrimSuffix(out[at].Content, ".") + "; " + strings.TrimPrefix(f.Content, "User ")
					continue
				}
				if retracting.MatchString(f.Content) && !retracting.MatchString(out[at].Content) && namesOther(f.Content, out[at].Content) {
					// What it is now over what it no longer is, when what
					// ended is another thing: "Bought a MacBook Air! Gave
					// the HP to my brother." ("I work at Google. I quit
					// Google." ends the first.)
					continue
				}
				out[at].Content = f.Content
				continue
			}
			if len(out) >= maxFactsPerTurn {
				continue
			}
			seen[f.Key] = len(out)
			out = append(out, f)
		}
	}
	return out, notes
}

// lastStatement is the last sentence of a message that states something
// about the user and what it states, "" for none.
func lastStatement(text string) (string, []Fact) {
	ss := statements(text, false)
	for i := len(ss) - 1; i >= 0; i-- {
		var last *slotMatch
		if fs := withSlots(slotFacts(ss[i], &last), sentenceFacts(ss[i])); len(fs) > 0 {
			return ss[i], fs
		}
	}
	return "", nil
}

// statements are the sentences of a user's message that may state
// something about them, in the order said.
func statements(userText string, framed bool) []string {
	return statementsOfOwn(ownText(userText, framed))
}

// ownText is what of a user's message is their own words (ownWords),
// code left out and others' reported speech too (othersWords).
func ownText(userText string, framed bool) string {
	text := fenced.ReplaceAllString(block.Strip(userText), "\n")
	text = ownWords(text, framed)
	return othersWords(strings.NewReplacer("’", "'", "‘", "'").Replace(text))
}

// statementsOfOwn is statements of a message already cut to its own
// words.
func statementsOfOwn(text string) []string {
	var out []string
	var ss []string
	for _, s := range splitSentences(text) {
		if len(s) > maxSentence {
			// Dictated by voice, or typed without a stop: its clauses.
			ss = append(ss, clausesOf(s)...)
			continue
		}
		ss = append(ss, s)
	}
	for _, s := range ss {
		s = strings.TrimSpace(s)
		if strings.HasSuffix(s, "?") {
			// The statement before the question, if it starts the sentence.
			loc := askedAfter.FindStringIndex(s)
			if loc == nil {
				continue
			}
			s = strings.TrimSpace(s[:loc[0]])
		}
		if len(s) < 6 || len(s) > maxSentence || strings.HasPrefix(s, ">") || notStatement.MatchString(s) || fictional(s) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// clauseOpeners start a clause of a sentence run on without stops ("I'm
// a single mom of three Kayden is 12 ... we live in Knoxville and I work
// from home"), in the languages read.
var clauseOpeners = wordSet(`i i'm im we we're my our and but so because which also plus
	yo y pero porque mi nuestro nuestra vivo soy tengo trabajo ich und aber weil mein meine wir unser unsere
	je et mais parce mon ma mes nous on eu e mas porque meu minha nós moro sou tenho trabalho`)

// clausesOf splits a sentence too long to read whole before each word
// that opens a clause, keeping pieces of at least a few words.
func clausesOf(s string) []string {
	words := strings.Fields(s)
	var out []string
	start := 0
	for i := 1; i < len(words); i++ {
		if i-start >= 3 && clauseOpeners[strings.ToLower(strings.Trim(words[i], ",;:"))] {
			out = append(out, strings.Join(words[start:i], " "))
			start = i
		}
	}
	out = append(out, strings.Join(words[start:], " "))
	for i := range out {
		if len(out[i]) > maxSentence {
			out[i] = out[i][:0] // still too long to be one statement
		}
	}
	return out
}

// abbreviations end with a full stop that does not end the sentence.
var abbreviations = wordSet(`st mt ft dr mr mrs ms prof jr sr vs approx dept av sta sto`)

// splitSentences splits text at the ends of its sentences.
func splitSentences(text string) []string {
	var out []string
	from := 0
	for _, loc := range sentences.FindAllStringIndex(text, -1) {
		if text[loc[0]] == '.' && loc[1]-loc[0] >= 2 && abbreviations[strings.ToLower(lastWord(text[from:loc[0]]))] {
			continue
		}
		if ordinal(text, loc) {
			continue // "fange am 1. als Produktmanagerin an"
		}
		out = append(out, text[from:loc[0]])
		from = loc[1]
	}
	return append(out, text[from:])
}

// ordinal reports whether the stop at loc in text follows a number and
// comes before a word in lower case: an ordinal as German writes it ("am
// 1. März", "am 1. als"), not a sentence's end.
func ordinal(text string, loc []int) bool {
	if text[loc[0]] != '.' || loc[1]-loc[0] < 2 || loc[0] == 0 || text[loc[0]-1] < '0' || text[loc[0]-1] > '9' || loc[1] >= len(text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text[loc[1]:])
	return unicode.IsLower(r)
}

// lastWord is the run of letters that ends s.
func lastWord(s string) string {
	i := strings.LastIndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	return s[i+1:]
}

// withSlots merges what a sentence states in slots (slots.go) with what
// the rules read in it. Where both read one statement (the same key, or
// a rule's key naming only what a slot's fact says: "User quit the bank"
// beside "User no longer works at the bank."), one fact stays: the rule's
// when it says all the slot's says and more ("User is allergic to wool
// and avoids any woolen clothing."), else the slot's.
func withSlots(slots, ruled []Fact) []Fact {
	if len(slots) == 0 {
		return ruled
	}
	slots = oneOfEach(slots)
	out := append([]Fact(nil), slots...)
	said := map[string]bool{}
	for _, f := range slots {
		for w := range wordsOf(f.Content) {
			said[w] = true
		}
	}
	for _, f := range ruled {
		i := slices.IndexFunc(out[:len(slots)], func(s Fact) bool { return s.Key == f.Key || norm.Same(s.Content, f.Content) })
		if i >= 0 {
			// The fuller, or what it is now over what it no longer is ("I
			// left Google and my new job at Spotify starts Monday").
			if out[i].Key == f.Key && (saysAllOf(f.Content, out[i].Content) ||
				retracting.MatchString(out[i].Content) && !retracting.MatchString(f.Content)) {
				out[i] = f
			}
			continue
		}
		words := wordsOf(f.Key[strings.LastIndexByte(f.Key, ':')+1:])
		covered := len(words) > 0
		for w := range words {
			covered = covered && said[w]
		}
		if !covered {
			out = append(out, f)
		}
	}
	return out
}

// retracting says what the user no longer is, has or does.
var retracting = regexp.MustCompile(`(?i)(?:\bno\s+longer\b|n't\b|\bnot\b|\bany\s*more\b|\bquit\b|\bleft\b|\bstopped\b|\bgave\s+(?:up|away)\b|\bsold\b|\bdropped\b)`)

// oneOfEach keeps one fact of each key a sentence states in slots: what
// it is now over what it no longer is ("I handed in my notice at HSBC and
// I'm training as a teacher"), else the last said.
func oneOfEach(slots []Fact) []Fact {
	out := slots[:0:0]
	at := map[string]int{}
	for _, f := range slots {
		i, dup := at[f.Key]
		switch {
		case !dup:
			at[f.Key] = len(out)
			out = append(out, f)
		case retracting.MatchString(f.Content) == retracting.MatchString(out[i].Content) && saysAllOf(out[i].Content, f.Content) &&
			len(out[i].Content) >= len(f.Content):
			// The fuller of two readings of one statement ("gave up
			// tennis for padel" over "gave up tennis").
		case f.Key == "identity:job" && !retracting.MatchString(f.Content+out[i].Content) && !saysAllOf(f.Content, out[i].Content):
			// Work is one slot of two parts: "Ich bin Entwicklungsingenieur
			// und seit 12 Jahren bei Bosch" says both.
			out[i].Content = strings.TrimSuffix(out[i].Content, ".") + "; " + strings.TrimPrefix(f.Content, "User ")
		case !retracting.MatchString(f.Content) || retracting.MatchString(out[i].Content):
			out[i] = f
		}
	}
	return out
}

// slotWords are the words of a slot's fact that say no value.
var slotWords = wordSet(`user user's is no longer not lives works at as a an the in has named years old speaks
	supports would rather than been moved there and to of studies studying`)

// saysAllOf reports whether fact a holds every value word of slot fact b.
func saysAllOf(a, b string) bool {
	have := wordsOf(a)
	for w := range wordsOf(b) {
		if !slotWords[w] && !have[w] {
			return false
		}
	}
	return true
}

func wordsOf(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(norm.Normalize(s)) {
		if len(w) > 1 {
			out[w] = true
		}
	}
	return out
}

// match is one rule's statement in a sentence.
type match struct {
	rule  int
	start int // of the rule's match in the sentence
	// cue is where what the statement is about begins: another rule
	// matching before it reads the same statement.
	cue     int
	key     string
	content string
}

// sentenceFacts are the facts one sentence states, in the order said.
func sentenceFacts(s string) []Fact {
	if m := rules[0].re.FindStringSubmatch(s); m != nil {
		// "remember that ..." is kept whole, not also taken apart.
		if key, content, ok := rules[0].build(m, ""); ok {
			return []Fact{{Kind: rules[0].kind, Key: rules[0].kind + ":" + key, Content: content}}
		}
	}
	var ms []match
	folded := fold(s) // for the words rules need (prefilter.go)
	for i := 1; i < len(rules); i++ {
		r := &rules[i]
		if !r.holds.heldBy(folded) {
			continue
		}
		for _, loc := range r.re.FindAllStringSubmatchIndex(s, 3) {
			if hedged(s[:loc[0]]) || !r.free && !subjectAt(s, loc[0]) {
				continue
			}
			key, content, ok := r.build(submatches(s, loc), s[loc[1]:])
			if !ok || key == "" {
				continue
			}
			cue := loc[1]
			if n := len(loc); n > 2 && loc[n-1] == loc[1] && loc[n-2] >= 0 {
				cue = loc[n-2] // the object a template rule reads to the end
			}
			ms = append(ms, match{rule: i, start: loc[0], cue: cue, key: r.kind + ":" + key, content: content})
		}
	}
	if len(ms) == 0 {
		return nil
	}
	// One statement per place: where two rules read the same words, the
	// first in the table, the more specific, says what it is.
	sort.SliceStable(ms, func(a, b int) bool {
		return ms[a].start < ms[b].start || ms[a].start == ms[b].start && ms[a].rule < ms[b].rule
	})
	kept := ms[:0]
	for _, m := range ms {
		if len(kept) > 0 && m.start < kept[len(kept)-1].cue {
			continue
		}
		kept = append(kept, m)
	}
	ms = kept
	first := statementStart(s, ms[0].start)
	change := changeCue.MatchString(s[first:])
	var out []Fact
	keys := map[string]int{} // the facts kept, by key
	within := -1             // the end of the clause the last statement was kept as
	for k, m := range ms {
		r := &rules[m.rule]
		if !change && m.start < within {
			continue // "I fear flying, so I avoid air travel" is one statement
		}
		content := m.content
		switch {
		case r.fixed:
		case r.whole:
			// Keyed by what it says: its subject is not one of the user's.
			content = clauseFact(s)
			m.key = r.kind + ":" + contentKey(content)
		case change && len(ms) > 1:
			// "I broke up with Miguel, I'm dating Sara now": what changed
			// and what it is now, together.
			content = clauseFact(s[first:])
		case r.clause || content == "":
			from := m.start
			if k == 0 {
				from = first
			}
			end := clauseEnd(s, ms, k)
			content, within = clauseFact(someoneWho(s[from:end])), end
		}
		if content == "" || !clean(content) {
			continue
		}
		if at, dup := keys[m.key]; dup {
			// "I don't live in London, I live in Leeds": what the user
			// is says more than what they are not.
			if negative.MatchString(out[at].Content) && !negative.MatchString(content) {
				out[at] = Fact{Kind: r.kind, Key: m.key, Content: content}
			}
			continue
		}
		keys[m.key] = len(out)
		out = append(out, Fact{Kind: r.kind, Key: m.key, Content: content})
	}
	return out
}

// asSomeone starts a statement about the user made as a description:
// "As someone who prefers cruelty-free products, I'd like ...".
var (
	asSomeone = regexp.MustCompile(`(?i)^as\s+(?:someone|somebody|a person|one)\s+who\s+`)
	mainI     = regexp.MustCompile(`(?i),\s+i(?:'d|'m|'ll|'ve)?\s`)
)

// someoneWho rewrites a description of the user as the statement it makes:
// "User prefers cruelty-free products." from the example above.
func someoneWho(clause string) string {
	loc := asSomeone.FindStringIndex(clause)
	if loc == nil {
		return clause
	}
	rest := clause[loc[1]:]
	if m := mainI.FindStringIndex(rest); m != nil {
		rest = rest[:m[0]]
	}
	return "I " + rest
}

// clauseEnd is where statement k of s ends: where the next statement
// joined to it by a connector ("..., but I hate tea") begins, else at the
// end of the sentence.
func clauseEnd(s string, ms []match, k int) int {
	for _, n := range ms[k+1:] {
		if n.start <= ms[k].start {
			continue
		}
		if loc := connector.FindStringIndex(s[ms[k].start:n.start]); loc != nil {
			return ms[k].start + loc[0]
		}
	}
	return len(s)
}

// unclean are the words of a statement that does not stand alone: one
// addressed to the assistant, or leaning on what was said before.
var unclean = regexp.MustCompile(`(?i)\b(?:you|your|yours|yourself)\b`)

// clean reports whether a fact reads as a standalone statement.
func clean(content string) bool {
	return !unclean.MatchString(content) && len(strings.Fields(content)) <= maxClauseWords
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

// Words namesNothing reads past: the verbs, adverbs and negations that
// lead a statement up to what it is about.
var (
	leadWords = wordSet(`usually often always really generally mostly strongly definitely truly just also
	tend tends to prefer prefers not avoid avoids stick use uses like likes love loves hate hates dislike
	dislikes enjoy enjoys try tries buy buys wear wears eat eats get gets stand can't cannot don't doesn't
	does do never would rather find finds keep keeps`)
	// backRefs are the pronouns that stand for something said before.
	backRefs = wordSet(`it them those these this that`)
	// Words after such a pronoun that show no noun follows it: "avoid
	// those due to ...", "prefer them in ...". (Not "when" or "if": "prefers
	// it when meetings start late" names what it prefers.)
	noNounAfter = wordSet(`due because since in for as too anymore consistently at on either anyway instead
	much more less over all very so now then`)
	// hardWords make "finds it hard to" a lead, not a reference.
	hardWords = wordSet(`hard difficult easy easier harder tough`)
)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// namesNothing reports whether a fact is about a pronoun whose noun was
// said in an earlier sentence ("User usually prefers to avoid those due to
// privacy concerns."): alone, it tells the model nothing, and it would ride
// in the profile. The turn's transcript keeps both sentences.
func namesNothing(content string) bool {
	words := strings.FieldsFunc(strings.ToLower(content), func(r rune) bool {
		return r == ' ' || r == ',' || r == '.' || r == ';' || r == '!' || r == ':'
	})
	if len(words) == 0 || words[0] != "user" {
		return false
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "it" && i+1 < len(words) && hardWords[words[i+1]]:
			i++ // "finds it hard to stick to them"
		case backRefs[w]:
			return i+1 == len(words) || noNounAfter[words[i+1]]
		case !leadWords[w]:
			return false
		}
	}
	return false
}

// namesOther reports whether fact names something (a capitalised word past
// its first) that other does not.
func namesOther(fact, other string) bool {
	for i, w := range strings.Fields(fact) {
		w = strings.Trim(w, ".,;:!?'’")
		if r, _ := utf8.DecodeRuneInString(w); i > 0 && unicode.IsUpper(r) && !strings.Contains(other, w) {
			return true
		}
	}
	return false
}
