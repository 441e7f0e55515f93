package extract

import (
	"regexp"
	"strings"
)

// German puts the verb second: whatever opens a clause, the verb comes
// next and "ich" after it ("Seit Januar lebe ich vegan", "Im echten Leben
// bin ich Softwareentwickler in Berlin", "Vegetarier bin ich seit zehn
// Jahren", "Letztes Jahr haben wir ein Haus in Freising gekauft"). The
// patterns are written in the order a statement takes when "ich" opens it,
// so a clause in the other order is put upright before they read it: a
// time, place or frame that opened it goes in front, set off by a comma;
// what the user is ("Vegetarier") goes to the clause's end, where the
// patterns' "seit ..." lets it be read.

var germanInverted = regexp.MustCompile(`(?i)^(?P<front>[^,;:]{0,60}?)\s*\b(?P<verb>bin|habe|hab|wohne|wohn|lebe|arbeite|esse|spreche|studiere|studier|heiße|komme|halte|werde|fahre|spiele|spiel|lerne|sind|haben|hatten|wohnen|leben|arbeiten|essen|sprechen)\s+(?P<subj>ich|wir)\b(?P<rest>[^,;:.!?]*)`)

// placeFront is a place that opened the clause ("Hier in Köln wohne ich"):
// it goes where the patterns read a place, after the verb.
var placeFront = regexp.MustCompile(`^(?i:hier\s+|da\s+|dort\s+)?(?i:in|bei|nahe)\s+\p{Lu}`)

// adverbialOpeners start a time, place or frame, not what the user is.
var adverbialOpeners = wordSet(`seit im in am an auf bei mit nach vor letztes letzte letzten letzter dieses diese diesen
	nächstes nächste nächsten hier da dort jetzt heute gestern morgen inzwischen mittlerweile zum zur beruflich privat
	eigentlich übrigens ehrlich also ansonsten sonst damals früher zuerst endlich schon auch außerdem zudem zurzeit derzeit
	momentan gerade aktuell seitdem dann danach`)

// sinceWords open a clause with how long something has held.
var sinceWords = wordSet(`seit seitdem jetzt inzwischen mittlerweile`)

// germanFillers say nothing after "ich bin": "ich bin übrigens ...".
var germanFillers = regexp.MustCompile(`(?i)^(?:\s+(?:übrigens|eigentlich|ja|halt|ja\s+auch|ganz\s+normal|tatsächlich))+`)

// uprightGerman puts each clause of s that opens with something other
// than its subject in the order "ich" opens it with.
func uprightGerman(s string) string {
	var b strings.Builder
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && !strings.ContainsRune(",;:", rune(s[i])) {
			continue
		}
		b.WriteString(uprightClause(s[start:i]))
		if i < len(s) {
			b.WriteByte(s[i])
		}
		start = i + 1
	}
	return b.String()
}

func uprightClause(c string) string {
	loc := germanInverted.FindStringSubmatchIndex(c)
	if loc == nil {
		return c
	}
	g := func(name string) string {
		i := germanInverted.SubexpIndex(name)
		return c[loc[2*i]:loc[2*i+1]]
	}
	front, verb, subj, rest := strings.TrimSpace(g("front")), g("verb"), g("subj"), g("rest")
	lead := c[:len(c)-len(strings.TrimLeft(c, " "))]
	rest = germanFillers.ReplaceAllString(rest, "")
	tail := c[loc[1]:]
	first := strings.ToLower(firstWord(front))
	switch {
	case front == "":
		// "..., bin ich zu Union gewechselt": a clause that opens with
		// its verb.
		return lead + strings.ToLower(subj[:1]) + subj[1:] + " " + verb + rest + tail
	case strings.Contains(strings.ToLower(" "+front+" "), " ich ") || strings.Contains(strings.ToLower(" "+front+" "), " wir "):
		return c
	case placeFront.MatchString(front):
		return lead + strings.ToLower(subj) + " " + verb + rest + " " + front + tail
	case sinceWords[first] && verb == "bin" && strings.HasPrefix(strings.TrimSpace(strings.ToLower(rest)), "bei "):
		// "Seit Oktober bin ich bei BMW": where the user is since a
		// time is where they work ("ich bin seit Oktober bei BMW"); "ich
		// bin bei" alone may be a visit.
		return lead + strings.ToLower(subj) + " " + verb + " " + front + rest + tail
	case adverbialOpeners[first] || isTimeWord(first):
		return lead + front + ", " + strings.ToLower(subj) + " " + verb + rest + tail
	default:
		return lead + strings.ToLower(subj) + " " + verb + rest + " " + front + tail
	}
}

func isTimeWord(w string) bool {
	switch w {
	case "januar", "februar", "märz", "april", "mai", "juni", "juli", "august", "september", "oktober", "november", "dezember",
		"montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag":
		return true
	}
	return false
}

// A statement of what the user is goes on after "and" without saying it
// again: "je suis prof de piano et végétarienne", "I'm a nurse and
// vegan", "soy maestra y celíaca". Where the word after the "and" is a
// diet, a condition or a job of the language's tables, the copula is said
// again ("... et je suis végétarienne") so the patterns read both.
var copulas = map[string]*regexp.Regexp{
	"en": regexp.MustCompile(`(?i)\b(i'm|i\s+am)\s+([^,.;!?]{1,40}?)\s+and\s+(?:also\s+)?([\p{L}-]+)`),
	"fr": regexp.MustCompile(`(?i)\b(je\s+suis)\s+([^,.;!?]{1,40}?)\s+et\s+(?:aussi\s+)?([\p{L}-]+)`),
	"es": regexp.MustCompile(`(?i)\b(soy)\s+([^,.;!?]{1,40}?)\s+y\s+(?:también\s+)?([\p{L}-]+)`),
	"pt": regexp.MustCompile(`(?i)\b(sou)\s+([^,.;!?]{1,40}?)\s+e\s+(?:também\s+)?([\p{L}-]+)`),
	"de": regexp.MustCompile(`(?i)\b(ich\s+bin)\s+([^,.;!?]{1,40}?)\s+und\s+(?:auch\s+)?([\p{L}-]+)`),
}

func repeatCopula(s string, t *langTable) string {
	re := copulas[t.code]
	if re == nil {
		return s
	}
	return re.ReplaceAllStringFunc(s, func(m string) string {
		at := re.FindStringSubmatchIndex(m)
		copula, w := m[at[2]:at[3]], m[at[6]:at[7]]
		_, diet := t.diets[strings.ToLower(w)]
		_, cond := t.conditions[strings.ToLower(w)]
		_, job := t.jobs[strings.ToLower(w)]
		if !diet && !cond && !job {
			return m
		}
		return m[:at[6]] + copula + " " + w // "... and" + "je suis" + " végétarienne"
	})
}
