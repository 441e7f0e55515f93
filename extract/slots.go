package extract

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What is said (the second question): in the user's own words, a statement
// of a standing attribute of the user or their household fills a slot:
// name, age, home, origin, work (job and employer), family members with
// their names and ages, pets, diet, allergies and conditions (theirs and
// their household's), languages spoken, the team they support, what they
// have been learning. A slot has one value at a time (or one per person or
// pet), so its key is how the newer statement replaces the older (the third
// question), in whatever language either was said.
//
// Each language is a table (lang_*.go): its words (relations, pets, diets,
// jobs, allergens, languages, numbers) and its statement patterns, written
// with placeholders for those words ({REL}, {NAME}, {PLACE}, ...). The
// engine is the same for all: it compiles the patterns, finds which
// languages a sentence may be in, reads each match where a clause starts,
// and writes the fact in English, in the third person. A language is data.

// slotPattern is one way a language states a slot.
type slotPattern struct {
	slot string
	// free: the statement need not start a clause ("I live with my wife
	// Grace": the wife is named inside another statement). A table marks
	// it with a leading "~".
	free bool
	re   *regexp.Regexp
	// lower is re for a sentence typed all in lower case, its names one
	// word of any case ("me and josh split"); nil when re reads none.
	lower *regexp.Regexp
	// holds are strings a sentence must hold (folded) for the pattern to
	// match: read from the pattern, so most patterns cost a lookup; needs
	// are the kinds of word it must hold (a relation, a job, a number...),
	// read from the placeholders the pattern cannot do without.
	holds literals
	needs wordClass
}

// language is a compiled table.
type language struct {
	code string
	t    *langTable
	pats []slotPattern
	// common are the language's commonest words: a sentence holding none
	// is not read with its patterns (English is read with every sentence:
	// names and places are its).
	common map[string]bool
	// classes are the kinds of the table's words, by word (the first word
	// of a phrase).
	classes map[string]wordClass
	slip    *regexp.Regexp // a slip corrected in the same sentence
	slips   literals       // what a sentence holds for slip to match
}

// langTable is a language as its file writes it.
type langTable struct {
	code string
	// Words, lower case, to their English form.
	relations map[string]string // "esposa": "wife"
	pets      map[string]string // "perro": "dog"
	diets     map[string]string // "vegana": "vegan"
	jobs      map[string]string // "profesora": "teacher"
	allergens map[string]string // "frutos secos": "nuts"
	languages map[string]string // "portugués": "Portuguese"
	numbers   map[string]int
	children  map[string]string // "hijos": "children"
	// conditions: words of a health condition "I am"/"I have" states.
	conditions map[string]string
	// foods a diet leaves out ("carne": "meat"); statuses of a
	// relationship ("casado": "married").
	foods, statuses map[string]string
	// relDates: phrases of a relative date, to their English form ("el
	// mes pasado": "last month"), resolved when learned (dates.go).
	relDates map[string]string
	// common are the language's commonest words (see language.words).
	common []string
	// clauses are the words that join one clause to another ("pero",
	// "aber"): a statement may start after them.
	clauses []string
	// joins join items of a list ("and", "y"); slips mark a correction
	// of what was just said ("no wait", "no, espera"); leads only lead a
	// statement in ("by the way", "na verdade").
	joins, slips, leads []string
	// workplaces are the places of work said without a name, in English
	// ("Apotheke": "a pharmacy").
	workplaces map[string]string
	// patterns, by slot (see slotBuilders).
	patterns []rawPattern
	// Notes (notes.go): self are the words of a speaker saying something
	// of themselves or their household ("I", "our", "vivo"); passing the
	// words that make a statement today's news ("tonight", "heute"); ifs
	// the words of a hypothetical ("if", "wenn"); others the people
	// outside the household a sentence may be about ("colleague",
	// "vecina"): a note is never about them; kin the relatives outside
	// the household ("sister", "Bruder") and mine the words of self that
	// are no subject ("my", "meine"): a sentence about kin with no subject
	// of the user's ("My brother moved to Denver") is no note of theirs.
	self, passing, ifs, others, kin, mine []string
	// topics are words that say which standing fact a sentence is about
	// (topic.go), beyond the table's own words of jobs, diets, pets,
	// partners and allergens: "wohne" is of home, "boulot" of work.
	topics map[string]string
}

type rawPattern struct{ slot, tmpl string }

// Placeholders of the patterns, with the group each fills.
const (
	namePat  = `(?P<name>(?-i:\p{Lu}(?:[\p{Ll}'’]+(?:-\p{Lu}?[\p{Ll}'’]+)*|-\p{Lu}(?:[\p{Ll}'’]+)?)(?: \p{Lu}[\p{Ll}'’]+(?:-\p{Lu}?[\p{Ll}'’]+)*)?))`
	placePat = `(?P<place>(?-i:\p{Lu}[\p{L}'’.-]*(?:[ -](?:(?:de|del|la|le|les|los|las|do|da|dos|das|am|an|im|sur|upon|on|of)[ -])?\p{Lu}[\p{L}'’.-]*){0,4}))`
	xPat     = `(?P<x>[^,.;:!?()\n]{1,60}?)`
	orgPat   = `(?P<org>[\p{L}\d&'’.-]+(?:\s+[\p{L}\d&'’.-]+){0,4}?)`
	// end is where a statement's open value ends.
	endPat = `(?:\s*$|\s*[,.;:!?()\n]|\s+(?:and|but|because|since|so|now|anymore|bc|cos|coz|cuz|depuis|desde|seit|y|e|pero|porque|ahora|und|aber|weil|jetzt|et|mais|parce|maintenant|mas|porque|agora)\b)`
)

// compile builds the language's patterns from its table.
func (t *langTable) compile() *language {
	l := &language{code: t.code, t: t, classes: t.classes(), common: map[string]bool{}}
	for _, w := range t.common {
		l.common[w] = true
	}
	alt := func(group string, words ...map[string]string) string {
		var ws []string
		for _, m := range words {
			for w := range m {
				ws = append(ws, w)
			}
		}
		// Longest first: "frutos secos" before "frutos".
		sortByLength(ws)
		for i, w := range ws {
			// "mother in law" is also written "mother-in-law".
			ws[i] = strings.ReplaceAll(regexp.QuoteMeta(w), " ", `[\s-]+`)
		}
		return `(?P<` + group + `>` + strings.Join(ws, "|") + `)`
	}
	nums := map[string]string{}
	for w := range t.numbers {
		nums[w] = w
	}
	langs := alt("l", t.languages)
	// "isiZulu at home and English at work": a language may say where.
	qual := `(?:\s+(?:at\s+home|at\s+work|fluently|natively|a\s+bit|a\s+little|well|en\s+casa|zu\s+hause|à\s+la\s+maison|em\s+casa))?`
	langList := `(?P<langs>` + strings.ReplaceAll(langs, "?P<l>", "?:") + qual + `(?:(?:\s*,\s*|\s+(?:` + strings.Join(t.joins, "|") + `)\s+)` + strings.ReplaceAll(langs, "?P<l>", "?:") + qual + `){0,5})`
	r := strings.NewReplacer(
		"{NAME}", namePat, "{PLACE}", placePat, "{X}", xPat, "{ORG}", orgPat, "{END}", endPat,
		"{REL}", alt("rel", t.relations), "{PET}", alt("pet", t.pets)+`(?:e?s)?`, "{DIET}", alt("diet", t.diets),
		"{JOB}", alt("job", t.jobs), "{ALLERGEN}", alt("allergen", t.allergens), "{LANGS}", langList, "{LANG1}", strings.ReplaceAll(langs, "?P<l>", "?:"), "{ACT}", activities, "{INSTR}", instrumentPat,
		"{NUM}", `(?P<num>\d{1,3}\b|(?:`+strings.TrimPrefix(alt("numw", nums), "(?P<numw>")+`\b)`,
		"{HAVE}", `(?:'ve\s+got|'ve|\s+(?:also\s+|just\s+|recently\s+|now\s+)?(?:have\s+got|have|got|adopted|rescued|own))`,
		"{KIDS}", alt("kids", t.children), "{COND}", alt("cond", t.conditions),
		"{WHEN}", strings.Replace(strings.ReplaceAll(alt("when", t.relDates), " ", `\s+`), "(?P<when>", "(?P<when>"+agoPat+"|", 1),
		"{PETS}", alt("pet", t.pets)+`(?:e?s)?`, "{NAMES}", `(?P<names>(?-i:\p{Lu}[\p{Ll}'’-]+)(?:\s*(?:,|\s(?:and|y|e|und|et))\s*(?-i:\p{Lu}[\p{Ll}'’-]+)){0,5})`,
	)
	for _, p := range t.patterns {
		src := `(?i)(?:^|[^\p{L}\d'’])(?P<stmt>` + r.Replace(p.tmpl) + `)`
		re := regexp.MustCompile(src)
		slot, free := strings.CutPrefix(p.slot, "~")
		sp := slotPattern{slot: slot, free: free, re: re, holds: mustHold(re.String()), needs: needed(p.tmpl)}
		if strings.Contains(p.tmpl, "{NAME}") || strings.Contains(p.tmpl, "{PLACE}") || strings.Contains(p.tmpl, "{ORG}") {
			sp.lower = regexp.MustCompile(strings.NewReplacer(namePat, lowerName, placePat, lowerPlace).Replace(src))
		}
		l.pats = append(l.pats, sp)
	}
	if t != english {
		// The words only this language's statements hold mark a sentence
		// as maybe in it, as its common words do: "Agora torço pelo
		// Sporting" holds none of those.
		for _, p := range t.patterns {
			for _, w := range templateWords(p.tmpl) {
				if utf8.RuneCountInString(w) >= 4 && !englishToo[w] {
					l.common[w] = true
				}
			}
		}
	}
	if len(t.slips) > 0 {
		l.slip = regexp.MustCompile(`(?i)(?:,|\s+-|\s*—)?\s*(?:` + strings.Join(t.slips, "|") + `)[,:]?\s+(?P<v>[^,.;!?]{1,30}?)\s*(?:[,.;!?]|$)`)
		l.slips = mustHold(l.slip.String())
	}
	return l
}

func sortByLength(ws []string) {
	for i := 1; i < len(ws); i++ {
		for j := i; j > 0 && (len(ws[j]) > len(ws[j-1]) || len(ws[j]) == len(ws[j-1]) && ws[j] < ws[j-1]); j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}

// tables are the languages read, as their files write them; English
// first.
var tables = []*langTable{english, spanish, german, french, portuguese}

// languages are the compiled tables, in the same order.
var languages []*language

func init() {
	for _, t := range tables {
		languages = append(languages, t.compile())
	}
}

// languagesOf are the languages a sentence may be in.
func languagesOf(t sentenceTokens) []*language {
	out := languages[:1:1]
	for _, l := range languages[1:] {
		// A word that is English too ("on", "me", "do") counts half: an
		// English sentence holds one often, one of another language two.
		n := 0
		for _, w := range t.words {
			if l.common[w] {
				n += 2
				if englishToo[w] {
					n--
				}
			}
			if n >= 2 {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// englishToo are words of the other languages' lists that are English
// words too.
var englishToo = wordSet(`on do me no a as so time design pro once plus son fin far die bus taxi zug fan hospital running yoga
	padel pilates crossfit spinning golf tennis rugby judo basket foot sport bar`)

// slotMatch is one slot a sentence states.
type slotMatch struct {
	lang  *language
	slot  string
	start int
	end   int
	g     map[string]string
	// rest is the sentence after the match: a list of names may follow
	// a count ("two kids, Paul (9) and Lina (6)"). before is the sentence
	// up to it: whom a pronoun refers to may be named there.
	rest, before string
	in           string // the sentence
}

// slotFacts are the facts of the slots a sentence states, in the order
// said. last is the family member or pet named last in the message, for a
// pronoun ("My son Ali is 9. He's allergic to peanuts."); slotFacts moves
// it on.
func slotFacts(s string, last **slotMatch) []Fact {
	s = withSubject(s)
	folded := fold(s)
	tokens := tokensOf(s)
	langs := languagesOf(tokens)
	for _, l := range langs {
		if again := repeatCopula(s, l.t); again != s {
			s, folded, tokens = again, fold(again), tokensOf(again)
		}
		if l.t == german {
			if up := uprightGerman(s); up != s {
				s, folded, tokens = up, fold(up), tokensOf(up)
			}
		}
	}
	for _, l := range langs {
		if l.slips.heldBy(folded) {
			if fixed := l.fixSlip(s); fixed != s {
				s, folded, tokens = fixed, fold(fixed), tokensOf(fixed)
			}
		}
	}
	var ms []slotMatch
	lower := !hasUpper(s)
	for _, l := range langs {
		has := l.classesIn(tokens)
		if lower {
			has |= classCapital | classLead
		}
		for _, p := range l.pats {
			if p.needs&has != p.needs || !p.holds.heldBy(folded) {
				continue
			}
			re := p.re
			if lower && p.lower != nil {
				re = p.lower
			}
			for _, loc := range re.FindAllStringSubmatchIndex(s, 4) {
				g := namedGroups(re, s, loc)
				start := loc[2*re.SubexpIndex("stmt")]
				if !p.free && !clauseStart(s, start, l) || hedgedIn(s[:start]) {
					continue
				}
				if lower && !capitalised(g) {
					continue
				}
				ms = append(ms, slotMatch{lang: l, slot: p.slot, start: start, end: loc[1], g: g, rest: s[loc[1]:], before: s[:start], in: s})
			}
		}
	}
	sortMatches(ms)
	var out []Fact
	for i := range ms {
		m := &ms[i]
		if (m.g["rel"] != "" || m.g["pet"] != "") && m.g["name"] != "" {
			*last = m
		}
		out = append(out, m.build(*last)...)
	}
	return out
}

// sortMatches orders matches by where they start, the longer first, and
// drops those inside an earlier one of the same slot.
func sortMatches(ms []slotMatch) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && (ms[j].start < ms[j-1].start || ms[j].start == ms[j-1].start && ms[j].end > ms[j-1].end); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func namedGroups(re *regexp.Regexp, s string, loc []int) map[string]string {
	g := map[string]string{}
	for i, name := range re.SubexpNames() {
		if name != "" && loc[2*i] >= 0 && g[name] == "" {
			g[name] = strings.TrimSpace(s[loc[2*i]:loc[2*i+1]])
			if name == "place" || name == "org" {
				// A name may hold dots ("St. Louis"); the sentence's own
				// full stop is not part of it.
				g[name] = strings.TrimRight(g[name], ".")
			}
		}
	}
	return g
}

// pronouns are each language's subject pronouns of the user, and the
// words that make the clause they start part of another.
var pronouns = map[string]struct{ subjects, embedders map[string]bool }{
	"fr": {wordSet(`je nous`), wordSet(`que qu où si quand comme lorsque puisque dont quoi`)},
	"es": {wordSet(`yo nosotros nosotras`), wordSet(`que donde si cuando como porque quien cual`)},
	"pt": {wordSet(`eu nós`), wordSet(`que onde se quando como porque quem qual`)},
	"de": {wordSet(`ich wir`), wordSet(`dass ob wo wenn als weil was wie da`)},
}

// clauseStart reports whether a statement starting at i of s starts a
// clause: as subjectAt, or after one of the language's joins.
func clauseStart(s string, i int, l *language) bool {
	if subjectAt(s, i) {
		return true
	}
	before := strings.ToLower(strings.TrimSpace(s[:i]))
	if ps, ok := pronouns[l.t.code]; ok && l.t != english {
		// "je", "ich", "yo", "eu" start a clause wherever they stand
		// ("depuis le mois dernier je suis passée au vegan"), but after
		// a word that embeds the clause ("ce que je mange").
		w := strings.ToLower(firstWord(s[i:]))
		if strings.HasPrefix(w, "j'") || strings.HasPrefix(w, "j’") {
			w = "je"
		}
		fields := strings.Fields(before)
		switch {
		case ps.subjects[w]:
			return len(fields) == 0 || !ps.embedders[fields[len(fields)-1]]
		case len(fields) > 0 && ps.subjects[fields[len(fields)-1]]:
			// "desde el verano yo vivo en Sevilla": the statement read
			// from its verb, its pronoun before it.
			return len(fields) == 1 || !ps.embedders[fields[len(fields)-2]]
		}
	}
	if l.t == english && subjectWords[strings.ToLower(firstWord(s[i:]))] {
		// "I" and "we" only ever start a clause, stops typed or not
		// ("Sam just turned 5 we live in Tulsa"); but for one a word
		// before embeds ("the town where we live").
		w := before[strings.LastIndexByte(before, ' ')+1:]
		return !embedders[w]
	}
	// Words that only lead a statement in ("na verdade", "übrigens",
	// "I've decided"), as far back as they go.
	for cut := true; cut; {
		cut = false
		for _, f := range l.t.leads {
			if rest, ok := strings.CutSuffix(before, f); ok && (rest == "" || !endsInLetter(rest)) {
				if t := strings.TrimRight(rest, " "); t != "" && strings.ContainsRune(",;:!-–—(¡¿", rune(t[len(t)-1])) {
					return true // "..., ahora estudio X": a lead after a break
				}
				before, cut = strings.TrimRight(rest, " ,"), true
			}
		}
	}
	if r, _ := utf8.DecodeLastRuneInString(before); before == "" || strings.ContainsRune(",;:!-–—(¡¿", r) {
		return true
	}
	for _, j := range append(l.t.joins, l.t.clauses...) {
		if strings.HasSuffix(before, " "+j) || before == j {
			return true
		}
	}
	return false
}

// endsInLetter reports whether s ends in a letter ("¡" and "¿" are none).
func endsInLetter(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isLetterByte(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80 }

// hedgesAny are the words, in any of the languages read, that in the
// clause before a statement mean it is not asserted ("if I lived in",
// "imagine I", "si viviera en").
var hedgesAny = regexp.MustCompile(`(?i)(?:^|[^\p{L}])(?:if|whether|unless|wish|imagine|suppose|pretend|doubt|wonder|say|hypothetically|si|imagina|supongamos|ojalá|wenn|falls|ob|stell|angenommen|imaginons|imagine|supposons|se|imagine|suponha|caso)(?:[^\p{L}]|$)`)

// hedgedIn reports whether the clause leading up to a statement hedges it.
func hedgedIn(before string) bool {
	if locs := clauseBreak.FindAllStringIndex(before, -1); len(locs) > 0 {
		before = before[locs[len(locs)-1][1]:]
	}
	return hedgesAny.MatchString(before) || hedges.MatchString(before)
}

// fixSlip applies a slip corrected in the same sentence: "we have three
// kids, no wait, four" is "we have four kids". The value after the slip
// mark replaces the last value of its kind before it (a number, a name);
// "", the sentence as it was.
func (l *language) fixSlip(s string) string {
	if l.slip == nil {
		return s
	}
	loc := l.slip.FindStringSubmatchIndex(s)
	if loc == nil {
		return s
	}
	v := strings.TrimSpace(s[loc[2]:loc[3]])
	before, after := s[:loc[0]], s[loc[1]:]
	isNum := func(w string) bool {
		w = strings.ToLower(strings.Trim(w, ".,"))
		if _, ok := l.t.numbers[w]; ok {
			return true
		}
		_, err := fmt.Sscanf(w, "%d", new(int))
		return err == nil
	}
	words := strings.Fields(before)
	for i := len(words) - 1; i > 0; i-- {
		w := strings.Trim(words[i], ".,")
		r, _ := utf8.DecodeRuneInString(v)
		if isNum(v) && isNum(w) || unicode.IsUpper(r) && startsUpper(w) && !isNum(v) {
			words[i] = v
			return strings.Join(words, " ") + " " + strings.TrimLeft(after, " ")
		}
	}
	return s
}

func startsUpper(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// words reads a table's word list: "key:value" pairs, a dash for a space
// in either ("social-worker:social-worker").
func words(list string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Fields(list) {
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			panic("extract: word list entry without a value: " + kv)
		}
		if !strings.Contains(v, "-in-law") { // written with its hyphens
			v = strings.ReplaceAll(v, "-", " ")
		}
		m[strings.ReplaceAll(k, "-", " ")] = v
	}
	return m
}

// numberWords reads a table's numbers: "two:2 three:3".
func numberWords(list string) map[string]int {
	m := map[string]int{}
	for k, v := range words(list) {
		n := 0
		for _, c := range v {
			n = n*10 + int(c-'0')
		}
		m[k] = n
	}
	return m
}

// closingParen is the index of the parenthesis that closes the one s
// starts with, -1 for none.
func closingParen(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// templateSyntax is what of a pattern's template is not its words: escapes,
// group names, flags and placeholders.
var templateSyntax = regexp.MustCompile(`\\.|\?P<[^>]*>|\(\?-?i:|\{[A-Z0-9]+\}|\[[^\]]*\]`)

// templateWords are the words a pattern's template spells out.
func templateWords(tmpl string) []string {
	return strings.FieldsFunc(strings.ToLower(templateSyntax.ReplaceAllString(tmpl, " ")), func(r rune) bool {
		return !unicode.IsLetter(r)
	})
}
