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

// slotfacts.go writes what a slot's match says as a fact: in English, in
// the third person, keyed by the slot (and, for one of several, by whom):
// a newer statement of the same slot, in any language, has the same key
// and so replaces the older (the third question).

// build is what m states; last is the family member or pet the
// sentence named last ("our son Leo, he's 5").
func (m *slotMatch) build(last *slotMatch) []Fact {
	f, ok := m.fact(last)
	out := []Fact(nil)
	if ok {
		out = append(out, f)
	}
	switch m.slot {
	case "count", "pets", "member", "pet":
		out = append(out, m.named()...)
	case "cleft-allergy":
		if not := m.lang.en(m.lang.t.allergens, m.g["not"]); not != "" {
			out = append(out, Fact{Kind: "health", Key: "health:allergy:" + head(strings.ToLower(not)), Content: "User is not allergic to " + strings.ToLower(not) + "."})
		}
	}
	return out
}

// en is a word of the language in English, as said when the table does
// not have it.
func (l *language) en(words map[string]string, w string) string {
	if e, ok := words[strings.ToLower(w)]; ok {
		return e
	}
	return w
}

// fact is the one fact m states, if any: its slot's builder's, given
// what every builder reads (slotCtx).
func (m *slotMatch) fact(last *slotMatch) (Fact, bool) {
	build, ok := builders[m.slot]
	if !ok {
		return Fact{}, false
	}
	t, g := m.lang.t, m.g
	c := &slotCtx{m: m, last: last, t: t, g: g, rel: m.lang.en(t.relations, g["rel"]), name: nameOnly(g["name"])}
	if d := g["when"]; d != "" {
		if a := agoEnglish(d); a != "" {
			c.when = " " + a
		} else {
			c.when = " " + m.lang.en(t.relDates, d)
		}
	}
	return build(c)
}

// slotCtx is what a slot's builder reads: the match, the family member
// or pet named last, the language's table, the match's groups, and the
// relation, name and time they say, in English.
type slotCtx struct {
	m, last         *slotMatch
	t               *langTable
	g               map[string]string
	rel, name, when string
}

// builders make each slot's fact, by slot; each domain's are in a file of
// their own (facts_identity.go, facts_family.go, facts_health.go,
// facts_things.go).
var builders = map[string]func(*slotCtx) (Fact, bool){}

func register(build func(*slotCtx) (Fact, bool), slots ...string) {
	for _, s := range slots {
		builders[s] = build
	}
}

// nameOnly is a name without the capitalised word that only starts its
// sentence ("Sadly Rex" is Rex).
func nameOnly(name string) string {
	if first, rest, ok := strings.Cut(name, " "); ok && (fillers[strings.ToLower(first)] || notNames[first]) {
		return rest
	}
	return name
}

// workplace is where a match says the user works: a workplace the table
// names, in English ("a pharmacy"), else the name as said.
func (m *slotMatch) workplace() string {
	org := cleanValue(m.g["org"])
	if w, ok := m.lang.t.workplaces[strings.ToLower(org)]; ok {
		return w
	}
	if first := firstWord(org); first != "" && notNames[strings.ToUpper(first[:1])+first[1:]] {
		return "" // "bei meinen Eltern": people, not a workplace
	}
	return org
}

// named are the facts of the names a count, or a member, goes on to list:
// "two kids, Paul (9) and Lina (6)", "two cats, Mango and Pepper".
func (m *slotMatch) named() []Fact {
	rel := ""
	switch m.slot {
	case "count", "member":
		rel = singularOf(m.lang.en(m.lang.t.children, m.g["kids"]))
		if m.slot == "member" {
			rel = m.lang.en(m.lang.t.relations, m.g["rel"])
		}
		if rel == "children" || rel == "kid" || rel == "kids" || rel == "twins" {
			rel = "child"
		}
	}
	pet := ""
	if m.slot == "pets" || m.slot == "pet" {
		pet = singularOf(m.lang.en(m.lang.t.pets, m.g["pet"]))
	}
	names := namesIn(m.rest, m.lang)
	if n := m.g["names"]; n != "" {
		names = append(namesIn(n, m.lang), names...)
	}
	if m.slot == "member" || m.slot == "pet" {
		// The first name is the match's own; more may follow ("our twins
		// Kofi and Esi").
		if len(names) == 0 || m.slot == "pet" && len(names) < 2 {
			return nil
		}
	}
	var out []Fact
	for _, n := range names {
		if n.name == m.g["name"] {
			continue
		}
		switch {
		case pet != "":
			content := "User has " + withArticle(pet) + " named " + n.name + "."
			out = append(out, Fact{Kind: "family", Key: "family:pet:" + strings.ToLower(n.name), Content: content})
		case rel != "":
			content := "User's " + rel + " is named " + n.name + "."
			if n.age > 0 {
				content = "User's " + rel + " " + n.name + " is " + strconv.Itoa(n.age) + " years old."
			}
			out = append(out, Fact{Kind: "family", Key: "family:" + relationKey(rel, n.name), Content: content})
		}
	}
	return out
}

// namedAge is a name a list gives, with an age if it says one.
type namedAge struct {
	name string
	age  int
}

// listWord skips what joins a list of names and ages: commas, "and",
// articles, brackets, the words of an age.
var listWords = wordSet(`and y e und et a o la el der die le the aged de von years year old años anos jahre jahren ans ano
	baby youngest eldest oldest little one`)

// ageVerbs lead an age in a list ("Kayden is 12 Brielle is 9"): a name
// after one ("Gerhard ist Koch") ends the list.
var ageVerbs = wordSet(`is are was just turned turns who's whos now ist est é tiene tem hat`)

// namesIn reads the list of names (with ages) that starts s, stopping at
// the first word that is neither.
func namesIn(s string, l *language) []namedAge {
	var out []namedAge
	verb := false // an age verb was read: only an age may follow
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == ',' || r == '(' || r == ')' || r == ':' || r == '—' || r == '–' || r == '&'
	}) {
		low := strings.ToLower(strings.Trim(w, ".!?;"))
		switch {
		case low == "":
		case ageVerbs[low] && len(out) > 0:
			verb = true
		case listWords[low] || l.t.joins != nil && slices.Contains(l.t.joins, low):
		case isNumber(low, l):
			verb = false
			if len(out) > 0 && out[len(out)-1].age == 0 {
				n, _ := strconv.Atoi(low)
				if n == 0 {
					n = l.t.numbers[low]
				}
				out[len(out)-1].age = n
			}
		case startsUpper(w) && !notNames[w] && len([]rune(w)) > 1 && len(out) < 6 && !verb:
			out = append(out, namedAge{name: strings.Trim(w, ".!?;")})
		default:
			return out
		}
		if strings.ContainsAny(w, ".!?;") {
			return out
		}
	}
	return out
}

func isNumber(w string, l *language) bool {
	if _, err := strconv.Atoi(w); err == nil {
		return true
	}
	_, ok := l.t.numbers[w]
	return ok
}

// plural is an English noun's plural.
func plural(noun string) string {
	if strings.HasSuffix(noun, "s") || strings.HasSuffix(noun, "sh") || strings.HasSuffix(noun, "ch") {
		return noun + "es"
	}
	return noun + "s"
}

// countKey is the key of a count of children, however they are called.
func countKey(kids string) string {
	switch k := singularOf(strings.ToLower(kids)); k {
	case "kid", "children", "child":
		return "child"
	default:
		return k
	}
}

func newFact(kind, key, content string) (Fact, bool) {
	return Fact{Kind: kind, Key: key, Content: content}, true
}

// activityVerbs are the English forms of what the user has been doing.
var activityVerbs = map[string]string{"aprendiendo": "learning", "estudiando": "studying", "tocando": "playing",
	"lerne": "learning", "spiele": "playing", "apprends": "learning", "joue": "playing", "aprendendo": "learning",
	"estudando": "studying", "tocando violão": "playing"}

// number is the match's number, 0 for none.
func (m *slotMatch) number() int {
	if v := m.g["num"]; v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		return m.lang.t.numbers[strings.ToLower(v)]
	}
	return 0
}

// allergen is what the match says an allergy is to, in English when the
// language names it, else as said.
func (m *slotMatch) allergen() string {
	if a := m.g["allergen"]; a != "" {
		if e, ok := m.lang.t.allergens[strings.ToLower(a)]; ok {
			return e
		}
		return strings.ToLower(a)
	}
	x := cleanValue(m.g["x"])
	if x == "" || len(strings.Fields(x)) > 4 {
		return ""
	}
	return strings.ToLower(x)
}

// languageList is the languages a match lists, in English, joined.
func (m *slotMatch) languageList() string {
	var names []string
	seen := map[string]bool{}
	for _, w := range splitList(m.g["langs"], m.lang.t.joins) {
		e, ok := m.lang.t.languages[strings.ToLower(w)]
		where := ""
		if first, rest, cut := strings.Cut(w, " "); !ok && cut {
			// "isiZulu at home": the language, and where it is spoken.
			e, ok = m.lang.t.languages[strings.ToLower(first)]
			where = " (" + rest + ")"
		}
		if !ok || seen[e] {
			continue
		}
		seen[e] = true
		names = append(names, e+where)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// splitList splits "Portuguese, English and Spanish" into its items.
func splitList(s string, joins []string) []string {
	s = strings.ReplaceAll(s, ",", " , ")
	var out []string
	var cur []string
	for _, w := range strings.Fields(s) {
		sep := w == ","
		for _, j := range joins {
			sep = sep || strings.EqualFold(w, j)
		}
		if sep {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, " "))
			}
			cur = nil
			continue
		}
		cur = append(cur, w)
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

// cleanValue trims an open value of the words that lead or trail it
// without naming anything: articles, "now", "anymore".
func cleanValue(v string) string {
	v = strings.TrimSpace(strings.Trim(v, ".,;:!?\"'“”"))
	for {
		l := strings.ToLower(v)
		cut := false
		for _, w := range []string{" now", " anymore", " any more", " again", " too", " as well", " these days", " currently"} {
			if strings.HasSuffix(l, w) {
				v, cut = strings.TrimSpace(v[:len(v)-len(w)]), true
			}
		}
		if !cut {
			break
		}
	}
	if norm.Normalize(v) == "" || pronounObjects[strings.ToLower(strings.Fields(v + " x")[0])] {
		return ""
	}
	return v
}

// withArticle is a noun with "a" or "an" (a job, a pet).
func withArticle(noun string) string {
	if noun == "" {
		return noun
	}
	l := strings.ToLower(noun)
	for _, a := range []string{"a ", "an ", "the "} {
		if strings.HasPrefix(l, a) {
			return noun
		}
	}
	r, _ := utf8.DecodeRuneInString(l)
	if strings.ContainsRune("aeiou", unicode.ToLower(r)) && !strings.HasPrefix(l, "uni") && !strings.HasPrefix(l, "eu") {
		return "an " + noun
	}
	return "a " + noun
}

// referent is whom a pronoun ("she's 7", "he is diabetic") refers to: the
// nearest relation said before it in its sentence, since the person named
// last ("My husband Arjun and our two kids. My mother-in-law also stays
// with us, she is diabetic"), else the family member or pet the message
// named last; either only when the pronoun's gender fits. rel is in
// English; pet is set for a pet.
func (m *slotMatch) referent(last *slotMatch) (rel, name, pet string) {
	want := pronounGender[strings.ToLower(m.g["pron"])]
	fits := func(rel string) bool { return want == "" || relationGender[rel] == "" || relationGender[rel] == want }
	before := m.before
	if last != nil && last != m && last.in == m.in && last.end <= m.start {
		before = m.before[last.end:] // said after the last one named, in this sentence
	}
	words := strings.FieldsFunc(strings.ToLower(before), func(r rune) bool { return !unicode.IsLetter(r) })
	for i := len(words) - 1; i >= 0; i-- {
		for n := min(3, i+1); n >= 1; n-- { // "mother in law"
			if r := m.lang.t.relations[strings.Join(words[i+1-n:i+1], " ")]; r != "" && fits(r) {
				return r, "", ""
			}
		}
	}
	if last == nil || last == m {
		return "", "", ""
	}
	name = nameOnly(last.g["name"])
	if p := last.g["pet"]; p != "" {
		return "", name, last.lang.en(last.lang.t.pets, p)
	}
	rel = last.lang.en(last.lang.t.relations, last.g["rel"])
	if !fits(rel) {
		return "", "", ""
	}
	return rel, name, ""
}

// pronounGender and relationGender say whom a pronoun can refer to.
var (
	pronounGender  = map[string]string{"he": "m", "she": "f", "er": "m", "sie": "f", "il": "m", "elle": "f", "ele": "m", "ela": "f", "él": "m", "ella": "f"}
	relationGender = map[string]string{}
)

func init() {
	for _, r := range strings.Fields(`husband son father brother grandfather uncle nephew stepson stepfather father-in-law brother-in-law boyfriend`) {
		relationGender[r] = "m"
	}
	for _, r := range strings.Fields(`wife daughter mother sister grandmother aunt niece stepdaughter stepmother mother-in-law sister-in-law girlfriend`) {
		relationGender[r] = "f"
	}
}

// drivingJobs are what "ich fahre jetzt Bus" says the user does, in English.
var drivingJobs = map[string]string{"bus": "driving a bus", "taxi": "driving a taxi", "lkw": "driving a truck",
	"lastwagen": "driving a truck", "straßenbahn": "driving a tram", "zug": "driving trains"}

// soldFor follows a sale that is half of a switch.
var soldFor = regexp.MustCompile(`(?i)^\s*(?:(?:,|and)\s+)?(?:then\s+)?(?:got|bought|picked\s+up|replaced|y\s+(?:me\s+)?compr|et\s+(?:j['’]ai\s+)?achet|e\s+comprei|und\s+(?:habe\s+)?(?:mir\s+)?(?:ein|gekauft))`)

// passing says a stay is not home: "I'm in Rome for the weekend".
var passing = regexp.MustCompile(`(?i)\b(?:visit(?:ing)?|trip|holiday|vacation|for\s+work|business|this\s+week|today|tonight|this\s+weekend|for\s+the\s+weekend|conference|airport|layover|stuck|transit|hotel|hostel|a\s+few\s+days|staying\s+at|traffic|queue|line|meeting|class|lecture|office|shower|bed|kitchen|car|bus|train|hospital\s+waiting)\b`)

// clubs are the clubs a supporter's own name for themselves names.
var clubs = map[string]string{"culé": "FC Barcelona", "cule": "FC Barcelona", "madridista": "Real Madrid", "merengue": "Real Madrid",
	"colchonero": "Atlético de Madrid", "colchonera": "Atlético de Madrid", "bético": "Real Betis", "bética": "Real Betis",
	"sevillista": "Sevilla FC", "xeneize": "Boca Juniors", "millonario": "River Plate", "millonaria": "River Plate",
	"valencianista": "Valencia CF", "periquito": "Espanyol", "periquita": "Espanyol", "flamenguista": "Flamengo",
	"corinthiano": "Corinthians", "corinthiana": "Corinthians", "corintiano": "Corinthians", "corintiana": "Corinthians",
	"palmeirense": "Palmeiras", "são-paulino": "São Paulo", "são-paulina": "São Paulo", "sampaulino": "São Paulo",
	"sampaulina": "São Paulo", "vascaíno": "Vasco da Gama", "vascaína": "Vasco da Gama", "gremista": "Grêmio",
	"colorado": "Internacional", "colorada": "Internacional", "benfiquista": "Benfica", "portista": "FC Porto",
	"sportinguista": "Sporting CP", "santista": "Santos", "cruzeirense": "Cruzeiro", "atleticano": "Atlético Mineiro",
	"atleticana": "Atlético Mineiro", "botafoguense": "Botafogo", "tricolor": "Fluminense"}

// joinName is a relation and, when said, the name: "daughter Zoe".
func joinName(rel, name string) string {
	if name == "" {
		return rel
	}
	return rel + " " + name
}
