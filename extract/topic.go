package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Topics: which single-valued standing fact a sentence no rule read is
// about (where the user lives, their work, partner, diet, studies, team,
// phone, computer, car), so that a note of what the user said (notes.go)
// stops riding once a later fact of its topic says the value now: "I am
// Java developer in Infosys" is of the work that "User works at
// Flipkart." replaced, though no rule read it. Facts of which a person
// has several (allergies, pets, children) have no topic here: a new one
// replaces nothing.

// Topic is a set of topics, one bit each.
type Topic uint16

const (
	topicHome Topic = 1 << iota
	topicJob
	topicPartner
	topicDiet
	topicStudy
	topicTeam
	topicPhone
	topicComputer
	topicCar
	// TopicChange marks a sentence that says something changed
	// ("switched", "ya no", or "now" beside a new value): with a topic, it
	// ends what was said of that topic before.
	TopicChange
	// topicNow is "now", "ahora", "jetzt": a change only beside a value it
	// names ("I'm at Monash now"), not in "I work from home now".
	topicNow
)

var topicNames = map[string]Topic{"home": topicHome, "job": topicJob, "partner": topicPartner, "diet": topicDiet,
	"study": topicStudy, "team": topicTeam, "change": TopicChange, "now": topicNow}

// onePartner are the relations (the tables' English forms) a person has
// one of.
var onePartner = wordSet(`wife husband partner boyfriend girlfriend fiance fiancee`)

// topicWords are the words of every table that say a topic: the tables'
// topics, and their jobs, diets and partners; topicPhrases those of more
// than one word (" real estate agent ").
var topicWords, topicPhrases = func() (map[string]Topic, map[string]Topic) {
	m, ph := map[string]Topic{}, map[string]Topic{}
	add := func(w string, t Topic) {
		if w = strings.ReplaceAll(w, "-", " "); strings.Contains(w, " ") {
			ph[" "+w+" "] |= t
		} else {
			m[w] |= t
		}
	}
	for _, t := range tables {
		for w, names := range t.topics {
			for _, name := range strings.Split(names, "+") {
				add(w, topicNames[name])
			}
		}
		for w := range t.jobs {
			add(w, topicJob)
		}
		for w := range t.diets {
			add(w, topicDiet)
		}
		for w, rel := range t.relations {
			if onePartner[rel] {
				add(w, topicPartner)
			}
		}
	}
	return m, ph
}()

// SaidTopics are the topics a sentence speaks of.
func SaidTopics(text string) Topic {
	lower := strings.ToLower(text)
	ws := noteTokens(lower)
	var t Topic
	for _, w := range ws {
		t |= topicWords[w]
	}
	joined := " " + strings.Join(ws, " ") + " "
	for p, pt := range topicPhrases {
		if strings.Contains(joined, p) {
			t |= pt
		}
	}
	if t&topicNow != 0 {
		t &^= topicNow
		if namesValue(text, ws) {
			t |= TopicChange
		}
	}
	switch deviceClass(lower) {
	case "phone":
		t |= topicPhone
	case "laptop", "computer":
		t |= topicComputer
	case "car":
		t |= topicCar
	}
	return t
}

// KeyTopic is the topic of a fact's key, 0 for a fact a person may have
// several of.
func KeyTopic(key string) Topic {
	switch {
	case key == "identity:location":
		return topicHome
	case key == "identity:job":
		return topicJob
	case key == "family:partner", key == "identity:relationship":
		return topicPartner
	case key == "identity:diet":
		return topicDiet
	case strings.HasPrefix(key, "identity:study"):
		return topicStudy
	case key == "preference:team":
		return topicTeam
	case key == "possession:phone":
		return topicPhone
	case key == "possession:laptop", key == "possession:computer":
		return topicComputer
	case key == "possession:car":
		return topicCar
	}
	return 0
}

// englishWords are the tables' words (allergens, diets, jobs, relations,
// pets, languages, conditions, foods) to their English forms, each word of
// a form its own ("frutos secos": "nuts").
var englishWords = func() map[string][]string {
	m := map[string][]string{}
	for _, t := range tables {
		for _, words := range []map[string]string{t.allergens, t.diets, t.jobs, t.relations, t.pets, t.languages, t.conditions, t.foods} {
			for w, e := range words {
				if strings.Contains(w, "-") || strings.Contains(w, " ") {
					continue // a phrase: its words are read one by one
				}
				for _, ew := range strings.FieldsFunc(strings.ToLower(e), func(r rune) bool { return r == '-' || r == ' ' }) {
					m[w] = append(m[w], ew)
				}
			}
		}
	}
	return m
}()

// InEnglish are the English forms of the tables' words a text holds
// ("Sou alérgica a amendoim": "peanuts"): what a fact, written in English,
// says of them, to compare a sentence in another language with it.
func InEnglish(text string) []string {
	var out []string
	for _, w := range noteTokens(strings.ToLower(text)) {
		out = append(out, englishWords[w]...)
	}
	return out
}

// namesValue reports whether a sentence names a value: a name or place
// past its first word, a number, or a word of the tables (a job, a diet).
func namesValue(text string, lower []string) bool {
	for i, w := range strings.Fields(text) {
		r, _ := utf8.DecodeRuneInString(w)
		if unicode.IsDigit(r) || i > 0 && unicode.IsUpper(r) && !notNames[strings.Trim(w, ".,;:!?'’")] && !isI(w) {
			return true
		}
	}
	for _, w := range lower {
		if topicWords[w]&(topicJob|topicDiet) != 0 && englishWords[w] != nil {
			return true
		}
	}
	return false
}

// isI is the English pronoun, in any of its forms ("I", "I'm").
func isI(w string) bool {
	w = strings.ToLower(strings.Trim(w, ".,;:!?"))
	return w == "i" || strings.HasPrefix(w, "i'") || strings.HasPrefix(w, "i’")
}
