package extract

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A fact keeps no date relative to when it was said: "User moved to
// Bristol last month" is wrong a month later. When a turn is learned, a
// relative date in what it teaches is made absolute from the turn's time
// ("in October 2026"). The slot tables write other languages' relative
// dates in English first (their relDates), so one table resolves them all.

var relativeDate = regexp.MustCompile(`(?i)\b(?:(last|this)\s+(week|month|year|summer|winter|spring|autumn|fall)|yesterday|(a|an|one|two|three|four|five|six|\d{1,2})\s+(days?|weeks?|months?|years?)\s+ago|for\s+(a|an|one|two|three|four|five|six|\d{1,2})\s+(weeks?|months?|years?))\b`)

var countWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

// absoluteDates rewrites the relative dates of a fact said at t.
func absoluteDates(content string, t time.Time) string {
	if t.IsZero() || !relativeDate.MatchString(content) {
		return content
	}
	return relativeDate.ReplaceAllStringFunc(content, func(m string) string {
		g := relativeDate.FindStringSubmatch(m)
		low := strings.ToLower(m)
		switch {
		case low == "yesterday":
			return "on " + t.AddDate(0, 0, -1).Format("2 January 2006")
		case g[1] != "":
			return relativeTo(strings.ToLower(g[1]), strings.ToLower(g[2]), t)
		case g[3] != "":
			return "in " + ago(count(g[3]), strings.ToLower(g[4]), t)
		case g[5] != "":
			return "since " + ago(count(g[5]), strings.ToLower(g[6]), t)
		}
		return m
	})
}

func count(w string) int {
	if n, err := strconv.Atoi(w); err == nil {
		return n
	}
	return countWords[strings.ToLower(w)]
}

// relativeTo is "last month" or "this year" said at t, absolute.
func relativeTo(which, unit string, t time.Time) string {
	back := 1
	if which == "this" {
		back = 0
	}
	switch unit {
	case "week":
		return "in the week of " + t.AddDate(0, 0, -7*back).Format("2 January 2006")
	case "month":
		return "in " + t.AddDate(0, -back, 0).Format("January 2006")
	case "year":
		return "in " + strconv.Itoa(t.Year()-back)
	}
	// A season: the last one that has begun (northern seasons, by month).
	starts := map[string]time.Month{"spring": time.March, "summer": time.June, "autumn": time.September, "fall": time.September, "winter": time.December}
	year := t.Year()
	if which == "last" && t.Month() < starts[unit] {
		year-- // the last one that has begun
	}
	if unit == "fall" {
		unit = "autumn"
	}
	return "in " + unit + " " + strconv.Itoa(year)
}

// ago is when n units before t was, as a month or a year.
func ago(n int, unit string, t time.Time) string {
	switch strings.TrimSuffix(unit, "s") {
	case "day":
		return t.AddDate(0, 0, -n).Format("2 January 2006")
	case "week":
		return t.AddDate(0, 0, -7*n).Format("January 2006")
	case "month":
		return t.AddDate(0, -n, 0).Format("January 2006")
	}
	return strconv.Itoa(t.Year() - n)
}

// agoPat is a time ago, in any of the five languages: "three months ago",
// "hace tres meses", "vor drei Monaten", "il y a trois mois", "há três
// meses"; agoEnglish says it in English, which absoluteDates resolves.
const agoPat = `(?:(?:hace|vor|il\s+y\s+a|há|ha)\s+)?` + agoCount

// agoCount is agoPat's count and unit.
const agoCount = `(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|un|una|uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|einem|einer|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|une|deux|trois|quatre|cinq|sept|huit|neuf|dix|um|uma|dois|duas|três|quatro|seis|sete|oito|nove|dez|\d{1,2})\s+(?:days?|weeks?|months?|years?|días?|dias?|semanas?|mes(?:es)?|años?|anos?|tag(?:en)?|tage|wochen?|monat(?:en)?|monate|jahr(?:en)?|jahre|jours?|semaines?|mois|ans|années?|meses|mês)(?:\s+ago|\s+atrás)?`

var (
	agoNumbers = map[string]int{"a": 1, "an": 1, "one": 1, "un": 1, "una": 1, "uno": 1, "einem": 1, "einer": 1, "une": 1, "um": 1, "uma": 1,
		"two": 2, "dos": 2, "zwei": 2, "deux": 2, "dois": 2, "duas": 2, "three": 3, "tres": 3, "drei": 3, "trois": 3, "três": 3,
		"four": 4, "cuatro": 4, "vier": 4, "quatre": 4, "quatro": 4, "five": 5, "cinco": 5, "fünf": 5, "cinq": 5,
		"six": 6, "seis": 6, "sechs": 6, "seven": 7, "siete": 7, "sieben": 7, "sept": 7, "sete": 7, "eight": 8, "ocho": 8,
		"acht": 8, "huit": 8, "oito": 8, "nine": 9, "nueve": 9, "neun": 9, "neuf": 9, "nove": 9, "ten": 10, "diez": 10,
		"zehn": 10, "dix": 10, "dez": 10}
	agoUnits = map[string]string{"day": "day", "días": "day", "día": "day", "dias": "day", "dia": "day", "tag": "day", "tagen": "day",
		"tage": "day", "jour": "day", "jours": "day", "week": "week", "semana": "week", "semanas": "week", "woche": "week",
		"wochen": "week", "semaine": "week", "semaines": "week", "month": "month", "mes": "month", "meses": "month",
		"mês": "month", "monat": "month", "monaten": "month", "monate": "month", "mois": "month", "year": "year",
		"año": "year", "años": "year", "ano": "year", "anos": "year", "jahr": "year", "jahren": "year", "jahre": "year",
		"an": "year", "ans": "year", "année": "year", "années": "year"}
)

// agoEnglish is a time ago said in any of the languages, in English ("hace
// tres meses": "3 months ago"), "" when it is none.
func agoEnglish(d string) string {
	n, unit := 0, ""
	d = strings.ToLower(d)
	for _, lead := range []string{"il y a ", "hace ", "vor ", "há ", "ha "} {
		d = strings.TrimPrefix(d, lead) // "il y a deux ans": its "a" is no number
	}
	for _, w := range strings.Fields(d) {
		if v, err := strconv.Atoi(w); err == nil {
			n = v
		} else if v, ok := agoNumbers[w]; ok && n == 0 {
			n = v
		} else if u, ok := agoUnits[strings.TrimSuffix(w, "s")]; ok && n > 0 {
			unit = u
		} else if u, ok := agoUnits[w]; ok && n > 0 {
			unit = u
		}
	}
	if n == 0 || unit == "" {
		return ""
	}
	if n > 1 {
		unit += "s"
	}
	return strconv.Itoa(n) + " " + unit + " ago"
}

// A note (notes.go) keeps the user's own words, in their language: its
// relative dates are resolved where they stand, "hace dos meses" written
// "in September 2026", as a fact's are.
var (
	// agoLed is a time ago led by the word that says it in Spanish,
	// German, French or Portuguese; English's "ago" absoluteDates reads.
	agoLed = regexp.MustCompile(`(?i)\b(?:hace|vor|il\s+y\s+a|há|faz)\s+` + agoCount + `\b`)
	// relPhrases are the tables' relative dates but English's, to their
	// English form.
	relPhrases, relEnglish = func() (*regexp.Regexp, map[string]string) {
		m := map[string]string{}
		var alts []string
		for _, t := range tables[1:] {
			for p, e := range t.relDates {
				p = strings.ReplaceAll(p, "-", " ")
				if _, ok := m[p]; !ok {
					alts = append(alts, strings.ReplaceAll(regexp.QuoteMeta(p), " ", `\s+`))
				}
				m[p] = strings.ReplaceAll(e, "-", " ")
			}
		}
		sortByLength(alts)
		return regexp.MustCompile(`(?i)(?:^|\b)(?:` + strings.Join(alts, "|") + `)\b`), m
	}()
	// agoLeads, relFirst and englishDates are the words each pattern's
	// matches hold (the lead of agoLed, the first word of a relPhrases
	// phrase, a word of English's relativeDate): a note holding none of
	// them, most, is not read with it.
	agoLeads     = wordSet(`hace vor il há faz`)
	englishDates = wordSet(`ago last this yesterday for`)
	relFirst     = func() map[string]bool {
		m := map[string]bool{}
		for _, t := range tables[1:] {
			for p := range t.relDates {
				m[strings.Fields(strings.ReplaceAll(p, "-", " "))[0]] = true
			}
		}
		return m
	}()
)

// notedDates is note content said at t with its relative dates, in any of
// the languages read, made absolute.
func notedDates(content string, t time.Time) string {
	if t.IsZero() {
		return content
	}
	ws := noteTokens(strings.ToLower(content))
	holds := func(set map[string]bool) bool { return slices.ContainsFunc(ws, func(w string) bool { return set[w] }) }
	if holds(agoLeads) {
		content = agoLed.ReplaceAllStringFunc(content, func(m string) string {
			if e := agoEnglish(m); e != "" {
				return absoluteDates(e, t)
			}
			return m
		})
	}
	if holds(relFirst) {
		content = relPhrases.ReplaceAllStringFunc(content, func(m string) string {
			if e, ok := relEnglish[strings.Join(strings.Fields(strings.ToLower(m)), " ")]; ok {
				return absoluteDates(e, t)
			}
			return m
		})
	}
	if holds(englishDates) {
		content = absoluteDates(content, t)
	}
	return content
}
