package extract

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/caddy-memory/memory/internal/norm"
)

// Notes: what the user says of themselves that no rule reads into a fact.
//
// The rules read the forms they know ("I live in Leeds", "soy celíaca");
// people say standing things in many more ("3 twelves a week on a peds
// floor at nationwide childrens in columbus", "I can never eat any of it
// (coeliac, joys)"). Such a sentence used to ride only as part of its
// turn's transcript, found again only by a question sharing its words,
// so the profile missed what the user plainly said. A note keeps the
// sentence itself, the user's own words, marked as theirs ("User said:
// ..."), as a standing memory of the lowest priority: it rides with the
// profile when the budget leaves room, and with a question of its domain
// when it does not. The same cuts as the facts' apply first (what the user
// pastes, quotes, translates or plays is not them speaking; questions,
// requests, hypotheticals and passing states say nothing standing), and a
// note a later fact contradicts stops riding (internal/recall/contradict.go).

// Bounds of a note: a sentence, not a paragraph.
const (
	maxNoteWords   = 40
	minNoteContent = 3 // content words a note holds that its facts do not
	maxNotesATurn  = 3
)

// wordList is a list of words and phrases: the words looked up by
// word, the phrases (" this weekend ") found in a sentence's words joined
// the same way.
type wordList struct {
	words   map[string]bool
	phrases map[string][]string // by their first word
	// opens are words that count only opening the sentence (written
	// "^been"): English drops the subject "I" before them ("Been on an
	// iPhone for a month now").
	opens map[string]bool
}

// newWordList reads the tables' lists: "a-b" is a phrase, "^w" an
// opening, any other entry a word.
func newWordList(lists ...[]string) wordList {
	l := wordList{words: map[string]bool{}, phrases: map[string][]string{}, opens: map[string]bool{}}
	for _, list := range lists {
		for _, x := range list {
			if w, ok := strings.CutPrefix(x, "^"); ok {
				l.opens[w] = true
				continue
			}
			if strings.Contains(x, "-") && !strings.HasSuffix(x, "-") {
				first, _, _ := strings.Cut(x, "-")
				l.phrases[first] = append(l.phrases[first], " "+strings.ReplaceAll(x, "-", " ")+" ")
				continue
			}
			l.words[x] = true
		}
	}
	return l
}

// in reports whether a sentence, as its words ws, holds one of the
// list's: an opening first (after a lead or two), a word anywhere (a
// French elided "j'" counts as "j'"), or a phrase (looked for in the
// words joined, " a b c ", only when one starts with a word of ws).
func (l wordList) in(ws []string) bool {
	joined := "" // built once, when a phrase may start here
	for i, w := range ws {
		if l.opens[w] {
			return true
		}
		if i == 2 || !openLeads[w] {
			break // "finally upgraded the car": an opening after a lead or two
		}
	}
	for _, w := range ws {
		if l.words[w] {
			return true
		}
		if i := strings.IndexByte(w, '\''); i > 0 && l.words[w[:i+1]] {
			return true
		}
		for _, p := range l.phrases[w] {
			if joined == "" {
				joined = " " + strings.Join(ws, " ") + " "
			}
			if strings.Contains(joined, p) {
				return true
			}
		}
	}
	return false
}

// openLeads are the words that may come before an opening that drops
// its subject ("so finally upgraded the car").
var openLeads = wordSet(`so ok okay well finally just also btw anyway update news big`)

// noteWords are the languages' words a note is read by: the tables'
// self (and of those the subjects), passing, ifs, others and kin.
var noteWords = func() (w struct{ self, subject, passing, ifs, others, kin wordList }) {
	var self, passing, ifs, others, kin [][]string
	mine := map[string]bool{}
	for _, t := range tables {
		self, passing, ifs, others = append(self, t.self), append(passing, t.passing), append(ifs, t.ifs), append(others, t.others)
		kin = append(kin, t.kin)
		for _, m := range t.mine {
			mine[m] = true
		}
	}
	w.self, w.passing, w.ifs, w.others = newWordList(self...), newWordList(passing...), newWordList(ifs...), newWordList(others...)
	w.kin = newWordList(kin...)
	w.subject = newWordList()
	for s := range w.self.words {
		if !mine[s] {
			w.subject.words[s] = true
		}
	}
	return w
}()

// noteStop are the words a note's content leaves out: every table's
// commonest words, and English's function words (names and places, what
// a note is kept for, are never among them).
var noteStop = func() map[string]bool {
	m := wordSet(`about after again also always been being before both because could does doing during each
		even ever every from have having here just like more most much need only other over really same should
		some still such than that their them then there these they this those through very want well were what
		when where which while will with would your yours lol haha okay yeah thing things stuff kind sort
		pretty quite gonna wanna gotta dont cant wont isnt don't can't won't isn't didn't doesn't wasn't aren't
		know feel think guess`)
	for _, t := range tables {
		for _, w := range t.common {
			m[w] = true
		}
	}
	return m
}()

// workTalk are the words of a task being worked on (code, a document):
// a sentence holding one talks of the work, not of the person ("I place a
// layout in the QScrollArea", "here is the setup of my scroll area").
var workTalk = newWordList(strings.Fields(`code coding function functions method variable variables loop error errors bug bugs
	exception compile compiler script scripts query queries database schema column api endpoint json yaml html css
	javascript typescript python sql regex widget widgets layout layouts repo repository commit deploy parameter parameters
	setup config configuration directory library framework dependency dependencies component props
	paragraph spreadsheet formula`))

// noteRequest is a sentence that asks for something rather than says it:
// "I need help figuring out my sleep", "I want you to plan a week".
var noteRequest = regexp.MustCompile(`(?i)\b(?:help(?:\s+me)?|(?:tell|give|show|send|write|make)\s+me|let\s+me\s+know|i\s+have\s+a\s+question|here\s+is|here's|we\s+need\s+to|i\s+want\s+to\s+(?:know|ask|create|make|write|build|add|change)|what(?:'s|\s+is)\s+the\s+best|how\s+(?:do|can|should)\s+(?:i|we)|can\s+you|could\s+you|would\s+you|please|i\s+need\s+(?:some\s+)?(?:help|ideas|advice|tips|suggestions|a\s+(?:plan|list|recipe))|i(?:'d|\s+would)\s+like\s+(?:you|some|a)|i\s+want\s+you|looking\s+for|recommend|suggest|ayúdame|ayuda|dile|dígale|diles|dis-lui|dites-lui|sag\s+(?:ihm|ihr)|diz-lhe|diga\s+(?:a|que)|puedes|podrías|necesito\s+ayuda|hilf|kannst\s+du|können\s+sie|könntest|aide-moi|peux-tu|pouvez-vous|pourrais-tu|me\s+ajuda|ajuda|pode\s+me|podes|você\s+pode)\b`)

// mayAsk holds a word every noteRequest holds (mustHold reads none from
// it): most sentences hold none, and the pattern is long; passHolds is
// passingState's, read from the pattern.
var (
	mayAsk = newWordList(strings.Fields(`help tell give show send write make let what what's how can could would please need like
		question here here's
		want looking recommend suggest ayúdame ayuda dile dígale diles dis-lui dites-lui sag diz-lhe diga puedes podrías necesito
		hilf kannst können könntest aide-moi peux-tu pouvez-vous pourrais-tu ajuda pode podes`))
	passHolds = mustHold(passingState.String())
)

// quoting is a quotation in a sentence, or its end: "My nan always said
// 'I've lived in Cork all my life'", "... trink i selber nix mehr.'".
var quoting = regexp.MustCompile(`["“”«»„]|(?:^|[\s:(])'\p{L}|[.!?,…]['’]`)

// appendNotes appends to notes what statement s, of facts fs, leaves
// for a note: the statement, or, said at too great a length for one
// ("so my wife Ananya is expecting our second baby in March and our first
// one Aarav is 4 and we stay in Pune ..."), its clauses, each its own.
func appendNotes(notes []Fact, s string, fs []Fact) []Fact {
	parts := []string{s}
	if strings.Count(s, " ") >= maxNoteWords {
		parts = noteClauses(s)
	}
	for _, p := range parts {
		if len(notes) == maxNotesATurn {
			break
		}
		if n, ok := noteOf(p, fs); ok {
			notes = append(notes, n)
		}
	}
	return notes
}

// noteJoins join the clauses of a sentence run on, in the languages
// read: a note of one is cut before them, each piece of five words or
// more.
var noteJoins = wordSet(`and but so because plus y pero porque und aber weil et mais parce e mas`)

// noteClauses are the clauses of a sentence too long for one note.
func noteClauses(s string) []string {
	words := strings.Fields(s)
	var out []string
	start := 0
	for i := range words {
		if i-start >= 5 && noteJoins[strings.ToLower(words[i])] {
			out = append(out, strings.Join(words[start:i], " "))
			start = i + 1
		}
	}
	return append(out, strings.Join(words[start:], " "))
}

// noteOf is the note a statement s of the user makes, when it says
// something standing about them that its facts (fs) leave out. The cheap
// looks come first: it runs for every sentence learned from.
func noteOf(s string, fs []Fact) (Fact, bool) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), ",;:-–—"))
	if n := strings.Count(s, " ") + 1; n < 3 || n > maxNoteWords+10 {
		return Fact{}, false
	}
	ws := noteTokens(strings.ToLower(s))
	if len(ws) < 3 || len(ws) > maxNoteWords || !noteWords.self.in(ws) {
		return Fact{}, false
	}
	var said map[string]bool
	content, left := 0, 0
	for _, w := range ws {
		if len(w) < 4 || noteStop[w] || noteWords.self.words[w] || utf8.RuneCountInString(w) < 4 {
			continue
		}
		if said == nil {
			said = map[string]bool{}
			for _, f := range fs {
				for _, fw := range noteTokens(strings.ToLower(f.Content)) {
					said[stem(fw)] = true
				}
			}
		}
		content++
		if !said[stem(w)] && !slices.ContainsFunc(englishWords[w], func(e string) bool { return said[stem(e)] }) {
			left++ // "Nüsse" is said by "User is allergic to nuts."
		}
	}
	if left < minNoteContent || 2*left < content {
		return Fact{}, false
	}

	// A role-play's set-up leaves no note: the caller reads no note of a
	// message that may set one up. Small talk holds no content word.
	if noteWords.ifs.in(ws) || noteWords.passing.in(ws) || noteWords.others.in(ws) || workTalk.in(ws) ||
		noteWords.kin.in(ws) && !noteWords.subject.in(ws) ||
		quoting.MatchString(s) || // someone's words the user quotes (see othersWords)
		asks.MatchString(s) || questionStart.MatchString(s) || nounAsks.MatchString(s) ||
		mayAsk.in(ws) && noteRequest.MatchString(s) || passHolds.heldBy(fold(s)) && passingState.MatchString(s) {
		return Fact{}, false
	}
	text := strings.TrimRight(s, ".!…,;: ")
	key := "said:" + strconv.FormatUint(norm.Hash(norm.Normalize(text)), 36)
	return Fact{Kind: "said", Key: key, Content: `User said: "` + text + `".`}, true
}

// noteTokens are a lower-cased sentence's words.
func noteTokens(lower string) []string {
	ws := strings.FieldsFunc(lower, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	})
	for i, w := range ws {
		if strings.Contains(w, "’") {
			ws[i] = strings.ReplaceAll(w, "’", "'")
		}
	}
	return ws
}

// stem is a word's first four letters without accents: enough to see
// that a fact says a word of the sentence ("live", "lives"; "diagnosed",
// "diagnosis").
func stem(w string) string {
	var b strings.Builder
	n := 0
	for _, r := range w {
		if n == 4 {
			break
		}
		b.WriteRune(norm.Unaccented(r))
		n++
	}
	return b.String()
}

// Common reports whether w (lower case) is one of the languages' common
// words, which say nothing of a value ("bei", "the", "que").
func Common(w string) bool { return noteStop[w] }
