package extract

import (
	"strings"
	"testing"
	"time"
)

// notesOf are the notes a user's message leaves (readOwn, as Learn reads
// it).
func notesOf(msg string) []Fact {
	_, notes := readOwn("", ownText(msg, false), true)
	return notes
}

// TestANoteKeepsWhatNoRuleReads: a standing thing the user says of
// themselves in a form no rule reads is kept in their words, in every
// language the tables read, and where the rules read part of a sentence,
// the rest of it too.
func TestANoteKeepsWhatNoRuleReads(t *testing.T) {
	for _, c := range []struct{ msg, holds string }{
		{"hey so im an RN, i work nights on a peds floor at nationwide childrens in columbus.", "columbus"},
		{"Ha, there's a bake-off on Friday. I can never eat any of it (coeliac, joys) but I'm expected to enter.", "coeliac"},
		{"We've had the allotment on Crane Lane for six years and my tomatoes are the envy of the site.", "allotment"},
		{"Me and the missus run a little campsite up near Keswick, so summers are mad busy.", "Keswick"},
		{"Trabajo de guía turística en Granada y los fines de semana hago rutas por la Alpujarra.", "Granada"},
		{"Ich pendle jeden Tag mit dem Zug von Hanau nach Frankfurt, das nervt gewaltig.", "Hanau"},
		{"Je bosse à la caisse d'un Leclerc à Rennes depuis que j'ai quitté la fac.", "Leclerc"},
		{"Eu dou aulas de surf em Peniche desde que larguei o escritório.", "Peniche"},
		{"Living in Porto these days, working remote for a Berlin startup.", "Berlin startup"},
		{"Acabo de empezar en Mercadona como cajera.", "Mercadona"},
		{"Comecei a trabalhar na Natura mês passado como analista.", "Natura"},
		// The user, with kin in the sentence, is still the user.
		{"We moved back to Cork in the spring to be near my mam, and I mind her two days a week.", "Cork"},
	} {
		notes := notesOf(c.msg)
		if len(notes) != 1 || !strings.Contains(notes[0].Content, c.holds) || notes[0].Kind != "said" ||
			!strings.HasPrefix(notes[0].Content, `User said: "`) {
			t.Errorf("%q: notes %q, want one holding %q", c.msg, notes, c.holds)
		}
	}
}

// TestNoNoteOfWhatIsNotTheUserSayingAStandingThing: questions, requests,
// hypotheticals, passing states, what is about someone outside the
// household, quoted words and a role-play's set-up leave no note, in the
// languages read; nor does a sentence whose facts say it all.
func TestNoNoteOfWhatIsNotTheUserSayingAStandingThing(t *testing.T) {
	for _, msg := range []string{
		"Can you help me plan meals for my week of night shifts at the hospital?",
		"I need help figuring out my sleep schedule after nights lol",
		"If I lived in Amsterdam I'd cycle everywhere and never sit in traffic again.",
		"Si viviera en Barcelona iría a la playa todos los días con mi perro.",
		"Wenn ich in München wohnen würde, hätte ich längst ein Rad gekauft.",
		"I'm so tired today, my toddler was up at four with a nightmare.",
		"Estoy agotada hoy, mi jefe me tuvo hasta las nueve en la oficina.",
		"I'm at the airport waiting for my connecting flight to Perth, so bored.",
		"My colleague Shreya is vegan and gluten free, so team lunches are tricky.",
		"Mi compañera Laura es celíaca y siempre traigo algo sin gluten para ella.",
		"My nan always said 'I've lived in Cork all my life and never needed a car'.",
		"Let's role-play: you're a waiter and I'm Captain Vance, a smuggler from Ceres.",
		"Let's play an interactive fiction game. You narrate, I act. I'm Captain Rhea Vance, a smuggler with a prosthetic arm.",
		"Tell me everything you know about the ship my brother left on.",
		"I live in Leeds.",
		"My brother just moved to Denver and works as a firefighter now, he's loving it.",
		"Meine Schwester wohnt in Kiel und ist Ärztin, sie hat drei Kinder.",
		"Ma sœur habite à Nantes et travaille comme infirmière, elle a trois enfants.",
		"O meu irmão é vegano e vive em Lisboa com a namorada.",
		"Honestly I don't know how to feel about any of it.",
	} {
		if notes := notesOf(msg); len(notes) != 0 {
			t.Errorf("%q: notes %q, want none", msg, notes)
		}
	}
}

// TestSaidTopics: a note is of the single-valued topics its words name,
// in each language, and of none for what a person has several of.
func TestSaidTopics(t *testing.T) {
	for _, c := range []struct {
		text string
		want Topic
	}{
		{"I work in a call centre for an energy company", topicJob},
		{"Je travaille chez Carrefour, au siège à Massy", topicJob},
		{"Vivo en Madrid, en Lavapiés, con mi pareja", topicHome | topicPartner},
		{"Ich bin seit meiner Kindheit Schalke-Fan", topicTeam},
		{"my Galaxy S21 battery dies by 3pm", topicPhone},
		{"Tengo un perro, Toby, de 12 años", 0},
	} {
		if got := SaidTopics(c.text); got != c.want {
			t.Errorf("SaidTopics(%q) = %b, want %b", c.text, got, c.want)
		}
	}
	// "now" says a change beside a value it names, not alone.
	for text, change := range map[string]bool{
		`User said: "I work from home now".`:               false,
		`User said: "I work nights now, it's killing me".`: false,
		`User said: "je suis chez Decathlon maintenant".`:  true,
		`User said: "I'm at Monash now, same course".`:     true,
		`User said: "agora sou vegana"`:                    true,
	} {
		if got := SaidTopics(text)&TopicChange != 0; got != change {
			t.Errorf("SaidTopics(%q) says a change: %v, want %v", text, got, change)
		}
	}
	if KeyTopic("identity:location") != topicHome || KeyTopic("health:allergy:peanuts") != 0 {
		t.Error("KeyTopic: home is single-valued, an allergy is not")
	}
}

// TestALongSentenceLeavesNotesOfItsClauses: a sentence run on past what
// one note holds ("dictated by voice") leaves a note of each clause the
// rules leave out, and the message's frame words ("we stay in Pune") set
// up no frame.
func TestALongSentenceLeavesNotesOfItsClauses(t *testing.T) {
	msg := "so my wife Ananya is expecting our second baby in March and our first one Aarav is 4 and we stay in Pune near Kothrud and I work remote for a US company called Stripe so timings are bit crazy can you suggest a routine"
	var got []string
	for _, n := range notesOf(msg) {
		got = append(got, n.Content)
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"second baby in March", "Kothrud", "Stripe"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no note holds %q: %q", want, got)
		}
	}
}

// TestAnOrdinalEndsNoSentence: "am 1. als Produktmanagerin" is one
// sentence, as German writes a date: what it says after the number is
// read with what it says before.
func TestAnOrdinalEndsNoSentence(t *testing.T) {
	for _, msg := range []string{
		"Ich habe bei Airbus gekündigt und fange am 1. als Produktmanagerin bei Otto an.",
		"Ab dem 15. arbeite ich Teilzeit bei Siemens in Erlangen.",
	} {
		if ss := statements(msg, false); len(ss) != 1 {
			t.Errorf("statements(%q) = %q, want one", msg, ss)
		}
	}
}

// TestANoteKeepsNoRelativeDate: a note's relative dates, in the language
// it is said in, are resolved when it is learned, as a fact's are.
func TestANoteKeepsNoRelativeDate(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]string{
		"nos vinimos de Santiago a Antofagasta hace dos meses con mi señora":     "in September 2026",
		"hab vor zwei Jahren meine eigene Praxis in Salzburg aufgemacht":         "in 2024",
		"On a quitté Paris l'année dernière pour s'installer à Angers, ma ville": "in 2025",
		"mudamos pra lauro de freitas mes passado, casa maior perto da praia":    "in October 2026",
		"we moved into our first flat in Walthamstow three months ago":           "in August 2026",
	} {
		mems, _, _ := Learn(&Turn{User: in, NewTurn: true, Time: at})
		found := false
		var got []string
		for _, m := range mems {
			if m.Kind == "said" || m.Kind == "identity" {
				got = append(got, m.Content)
				found = found || strings.Contains(m.Content, want)
			}
		}
		if !found {
			t.Errorf("%q taught %q, want one saying %q", in, got, want)
		}
	}
}

// TestNoNoteOfTheWorkAtHand: what the user says of a task they work on
// (code, a layout, a document) is no note of them, in a developer's
// words; what they say of themselves beside it still is.
func TestNoNoteOfTheWorkAtHand(t *testing.T) {
	for _, msg := range []string{
		"I have a question about programming a QScrollArea in Python 3.8 with PyQt5.",
		"Here is the setup of my scroll area, the widgets are stacked in a grid.",
		"I place a layout in the QScrollArea, however, the layout has extra space at the bottom beyond the widgets.",
		"So we need to eliminate the extra space between the internal widgets.",
		"My function keeps throwing a null pointer exception when the list is empty.",
	} {
		if notes := notesOf(msg); len(notes) != 0 {
			t.Errorf("%q: notes %q, want none", msg, notes)
		}
	}
	if notes := notesOf("I've been a backend engineer at Monzo for six years, mostly Go and Postgres."); len(notes) == 0 {
		t.Error("what the user says of their own work left no note")
	}
}
