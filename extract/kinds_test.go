package extract

import (
	"slices"
	"strings"
	"testing"
)

// TestKindsOfStatementInTheirOwnPhrasings: each kind of statement the
// rules read, in phrasings of its own (not the evaluation sets'), teaches
// the fact it states.
func TestKindsOfStatementInTheirOwnPhrasings(t *testing.T) {
	for in, want := range map[string]string{
		// A clause opened by the user's subject pronoun, whatever is before it.
		"Alors depuis janvier je suis passé au végétarien.": "User is vegetarian.",
		"Bon, cette année je travaille chez Renault.":       "Renault",
		"Desde el verano yo vivo en Sevilla.":               "User lives in Sevilla.",
		"Há dois meses eu moro em Braga.":                   "Braga",
		"¡Nos casamos y nos mudamos a Cádiz!":               "Cádiz",
		"¿Sabes qué? Me hice vegetariano.":                  "User is vegetarian.",
		// What the user was told or found out is still theirs.
		"Found out last week that I'm allergic to kiwi.":         "allergic to kiwi",
		"Descubrí hace poco que soy alérgica al marisco.":        "shellfish",
		"J'ai appris hier que je suis allergique aux arachides.": "allergi",
		// Instruments played and learned, in the five languages.
		"I play the cello in a community orchestra.": "User plays the cello.",
		"I've just started learning the ukulele.":    "ukulele",
		"Toco la batería en un grupo de amigos.":     "User plays the drums.",
		"Eu toco cavaquinho nas rodas de samba.":     "cavaquinho",
		"Ich spiele seit Jahren Klavier.":            "User plays the piano.",
		"Je joue de la guitare le soir.":             "User plays the guitar.",
		// A statement that goes on without saying "I" again.
		"I'm Irish, been living in Madrid since 2019, working at a school as a teacher.": "Madrid",
		"Myself Priya, working as a nurse in Apollo Hospital.":                           "nurse",
		// How people say where they live, what they can't have, whom they're with.
		"We stay in Chennai, near Adyar.":               "User lives in Chennai.",
		"we're shifting to a new flat in Hyderabad":     "Hyderabad",
		"I can't handle gluten.":                        "User can't have gluten.",
		"I don't drive, so I take the tram.":            "User does not drive.",
		"me and my bf marco live together":              "Marco",
		"I barrack for the Swans.":                      "User supports Swans.",
		"Changed from a Samsung to an iPhone 15 today.": "iPhone 15",
		// Children listed by name and age after the word for them.
		"Our boys, Sam (11) and Theo (8), both swim.":          "Theo is 8",
		"Meine Töchter Clara (15) und Ida (12) spielen Geige.": "Ida",
		"Mis hijas, Sara (6) y Alba (3), no paran.":            "Alba",
		"Massive Leeds fan here, home and away.":               "Leeds",
		// An adverb between the verb and what it says.
		"I'm actually 29 and work in Leeds.": "29",
		"I actually live in Cardiff.":        "Cardiff",
		"Ich wohne eigentlich in Leipzig.":   "Leipzig",
		"Wir wohnen momentan in Kassel.":     "Kassel",
		// A word of another language's table ("also", "im") is no reason to
		// read an English sentence less.
		"also fyi im alergic to shelfish": "allergic to shellfish",
	} {
		var got []string
		found := false
		for _, f := range Facts(in) {
			got = append(got, f.Content)
			found = found || strings.Contains(f.Content, want)
		}
		if !found {
			t.Errorf("Facts(%q) = %q, want one holding %q", in, got, want)
		}
	}
	// Not the user's, not standing, or not asserted.
	for _, in := range []string{
		"My sister, working at Google, lives in Zurich.",
		"Ce que je mange le soir, c'est léger.",
		"If I played the piano I'd join a band.",
		"We're staying in Lisbon for a week.",
	} {
		for _, f := range Facts(in) {
			if strings.Contains(f.Content, "plays") || f.Key == "identity:job" || f.Key == "identity:location" {
				t.Errorf("Facts(%q) = %q: not a standing fact of the user's", in, f.Content)
			}
		}
	}
}

// TestChangesInTheirOwnPhrasings: a change said as people say it teaches
// the new value under the key of the old, in phrasings of their own.
func TestChangesInTheirOwnPhrasings(t *testing.T) {
	for _, c := range []struct{ in, key, want string }{
		{"Guess what, I got hired at Spotify as a data engineer!", "identity:job", "Spotify"},
		{"Handed in my notice at Tesco today.", "identity:job", "no longer works at Tesco"},
		{"I've gone out on my own as a plumber.", "identity:job", "self-employed"},
		{"Started my own company last spring.", "identity:job", "self-employed"},
		{"Sam and me have broken up for good.", "family:partner", "Sam"},
		{"I'm engaged to Priya now!", "family:partner", "engaged to Priya"},
		{"I'm doing Korean now, the grammar is wild.", "habit:learning:language", "Korean"},
		{"Had to give up swimming because of my shoulder.", "habit:swimming", "gave up swimming"},
		{"I've gone fully vegan since March.", "identity:diet", "vegan"},
		{"Bought myself an iPad Air for uni.", "possession:tablet", "iPad Air"},
		{"Gave my old Dell to my nephew.", "possession:laptop", "gave away"},
		{"My doctor moved me from ramipril to losartan.", "health:medication", "losartan"},
		{"Renuncié a Telefónica la semana pasada.", "identity:job", "no longer works at Telefónica"},
		{"Terminei com a Júlia em agosto.", "family:partner", "Júlia"},
		{"Vendi o Gol e agora ando de bicicleta.", "possession:car", "Gol"},
		{"J'ai quitté Orange, enfin libre.", "identity:job", "no longer works at Orange"},
		{"Je commence chez Airbus en janvier.", "identity:job", "Airbus"},
		{"Hugo et moi on s'est séparés en juin.", "family:partner", "Hugo"},
		{"Ich hab bei Lidl gekündigt.", "identity:job", "Lidl"},
		{"Big news: we're engaged!", "family:partner", "engaged"},
		{"Dejé la carrera de Medicina, ahora estudio Enfermería.", "identity:study", "Enfermería"},
		{"De hecho salgo con alguien nuevo, se llama Marco.", "family:partner", "Marco"},
		{"Agora estou namorando o Tiago.", "family:partner", "seeing Tiago"},
		// What the user is, said on after "and".
		{"Je suis infirmière et végane.", "identity:diet", "vegan"},
		{"Soy abogado y vegetariano desde 2015.", "identity:diet", "vegetarian"},
		{"Ich bin Ingenieur und Diabetiker.", "health:condition:diabetes", "diabetes"},
		// What it is now over what it no longer is, in either order.
		{"Got a new Pixel 8! Gave the old Galaxy to my mum.", "possession:phone", "Pixel 8"},
		{"I eat non-veg, mostly fish.", "identity:diet", "non-veg"},
		// A move whose place was named before its verb.
		{"Conseguí trabajo en Zaragoza y nos mudamos en septiembre.", "identity:location", "Zaragoza"},
		{"My wife got a post in Dundee, so we moved last spring.", "identity:location", "Dundee"},
		{"Ma copine a trouvé un poste à Rennes, alors on a déménagé.", "identity:location", "Rennes"},
	} {
		var got []string
		found := false
		for _, f := range Facts(c.in) {
			got = append(got, "["+f.Key+"] "+f.Content)
			found = found || f.Key == c.key && strings.Contains(f.Content, c.want)
		}
		if !found {
			t.Errorf("Facts(%q) = %q, want [%s] holding %q", c.in, got, c.key, c.want)
		}
	}
	// A home names no partner: a breakup would leave it stating one.
	for _, f := range Facts("I live in Leeds with my boyfriend Sam and our two cats.") {
		if f.Key == "identity:location" && strings.Contains(f.Content, "Sam") {
			t.Errorf("the home names the partner: %q", f.Content)
		}
	}
	// Not a change of the user's.
	for _, in := range []string{"I switched from Vim to VS Code.", "My sister switched from Android to iPhone."} {
		for _, f := range Facts(in) {
			if f.Key == "health:medication" {
				t.Errorf("Facts(%q) = %q: no medicine", in, f.Content)
			}
		}
	}
}

// TestSteppingOutOfAFrameAsPeopleSayIt: inside a role-play, what follows a
// step out, said as people say it in the five languages, is the user's;
// what is played is not.
func TestSteppingOutOfAFrameAsPeopleSayIt(t *testing.T) {
	setup := []string{"Let's role-play: you're a barista and I'm a customer who is allergic to everything."}
	if !Framed(setup) {
		t.Fatal("the role-play is not a frame")
	}
	for in, want := range map[string]string{
		"Jokes aside, I'm a dentist in Cork.":                "dentist",
		"Real talk: I live in Leeds.":                        "Leeds",
		"Bromas aparte, soy enfermera en Bilbao.":            "nurse",
		"Spaß beiseite, ich wohne in Graz.":                  "Graz",
		"Blague à part, je suis végétarienne.":               "vegetarian",
		"Brincadeiras à parte, sou médica no Porto.":         "doctor",
		"Okay, enough of the story. I'm vegan in real life.": "vegan",
		"Bueno, fuera del juego: soy enfermera en Bilbao.":   "nurse",
		"Fora do papel: sou médica no Porto.":                "doctor",
	} {
		var got []string
		found := false
		for _, f := range FactsIn("", in, true) {
			got = append(got, f.Content)
			found = found || strings.Contains(f.Content, want)
		}
		if !found {
			t.Errorf("FactsIn(framed, %q) = %q, want one holding %q", in, got, want)
		}
	}
	if fs := FactsIn("", "I'm allergic to everything, one latte please.", true); len(fs) != 0 {
		t.Errorf("a played line taught %v", fs)
	}
}

// TestGoingBackIntoAFrameIsPlayedAgain: a step out lasts until the user
// goes back in ("ok back in:", "zurück ins Spiel", "*leans in*"); what
// follows is played, in the languages read, and what was said out of it
// still teaches.
func TestGoingBackIntoAFrameIsPlayedAgain(t *testing.T) {
	for _, c := range []struct{ in, out, played string }{
		{"lol ok pausing the game — I'm actually a nurse in Ohio. Ok back in: I'm really passionate about distributed systems.", "nurse", "distributed"},
		{"OOC: I live in Leeds, brb. *draws her sword* I'm the queen of the north and I'm vegan.", "Leeds", "vegan"},
		{"Kurz raus aus der Rolle: ich wohne in Graz. Zurück ins Spiel: ich bin Vegetarier und habe drei Burgen.", "Graz", "vegetarian"},
		{"Fuera del rol: soy enfermera en Bilbao. Volviendo al personaje: soy vegana y vivo en un castillo.", "nurse", "vegan"},
		{"Hors jeu : j'habite à Lyon. On reprend : je suis végétarienne et je vis dans un château.", "Lyon", "vegetarian"},
	} {
		var got []string
		saidOut := false
		for _, f := range FactsIn("", c.in, true) {
			got = append(got, f.Content)
			saidOut = saidOut || strings.Contains(f.Content, c.out)
			if strings.Contains(f.Content, c.played) {
				t.Errorf("FactsIn(framed, %q): the played %q taught %q", c.in, c.played, f.Content)
			}
		}
		if !saidOut {
			t.Errorf("FactsIn(framed, %q) = %q, want one holding %q", c.in, got, c.out)
		}
	}
}

// TestANamedAgeAsPeopleSayIt: a family member's age said with "now",
// "already", "turned", in the languages read, is their age.
func TestANamedAgeAsPeopleSayIt(t *testing.T) {
	for msg, want := range map[string]string{
		"Jonas ist jetzt 5!":          "Jonas (of the user's family) is 5 years old.",
		"Lucía ya tiene 8 años.":      "Lucía (of the user's family) is 8 years old.",
		"Camille a maintenant 6 ans.": "Camille (of the user's family) is 6 years old.",
		"O Tomás já tem 3 anos.":      "Tomás (of the user's family) is 3 years old.",
	} {
		fs := Facts(msg)
		if len(fs) != 1 || fs[0].Content != want {
			t.Errorf("Facts(%q) = %v, want %q", msg, fs, want)
		}
	}
	if fs := Facts("Berlin ist jetzt 5 Grad kalt."); len(fs) != 0 {
		t.Errorf("a temperature taught %v", fs)
	}
}

// TestBackOnMeatEndsADiet: "I'm back on red meat" after "I've been
// pescatarian" in one message leaves the newer diet.
func TestBackOnMeatEndsADiet(t *testing.T) {
	fs := Facts("I've been pescatarian for about five years, but my GP says my iron's in the gutter so I'm back on red meat as of this week")
	for _, f := range fs {
		if f.Key == "identity:diet" && f.Content != "User eats meat." {
			t.Errorf("the diet is %q, want the meat", f.Content)
		}
	}
	if !slices.ContainsFunc(fs, func(f Fact) bool { return f.Content == "User eats meat." }) {
		t.Errorf("Facts = %v, want User eats meat.", fs)
	}
}

// TestAGermanNameAfterIchBin: "ich bin" before a first and a last name is
// the user's name; before a noun German writes capitalised, it is not.
func TestAGermanNameAfterIchBin(t *testing.T) {
	wantFacts(t, map[string]string{
		"Hallo, ich bin Katrin Becker und mache mich gerade selbstständig.": "User's name is Katrin Becker.",
		"Ich bin Jonas Weber, Elektriker aus Kiel.":                         "User's name is Jonas Weber.",
	})
	for _, msg := range []string{"Ich bin Deutsche Staatsbürgerin.", "Ich bin Lehrerin und wohne in Graz."} {
		for _, f := range Facts(msg) {
			if f.Key == "identity:name" {
				t.Errorf("Facts(%q) named the user %q", msg, f.Content)
			}
		}
	}
}

// TestAnAllergySaidInPassing: "no nuts for me, severe allergy" and
// "shellfish allergy here" are allergies, as "I'm allergic to" is.
func TestAnAllergySaidInPassing(t *testing.T) {
	wantFacts(t, map[string]string{
		"No nuts for me please, severe allergy.":                  "User is allergic to nuts.",
		"Severe shellfish allergy here, so careful with recipes.": "User is allergic to shellfish.",
		"Keine Nüsse für mich bitte, ich bin allergisch.":         "User is allergic to nuts.",
		"Nada de camarão pra mim, sou alérgica.":                  "User is allergic to shellfish.",
		"Nada de marisco para mí, soy alérgico.":                  "User is allergic to shellfish.",
		"Pas de noix pour moi, je suis allergique.":               "User is allergic to nuts.",
		"No nuts for me today, I'm full.":                         "",
	})
}

// wantFacts fails unless each message teaches its fact, among others, or
// nothing at all where its fact is "".
func wantFacts(t *testing.T, want map[string]string) {
	t.Helper()
	for msg, w := range want {
		fs := Facts(msg)
		if w == "" && len(fs) != 0 {
			t.Errorf("Facts(%q) = %v, want none", msg, fs)
		} else if w != "" && !slices.ContainsFunc(fs, func(f Fact) bool { return f.Content == w }) {
			t.Errorf("Facts(%q) = %v, want %q", msg, fs, w)
		}
	}
}

// TestASplitSaidOfTheRelation: "me and my wife split up" ends the
// partner though no name is said, in the languages read; a sister and a
// bill are no partner.
func TestASplitSaidOfTheRelation(t *testing.T) {
	wantFacts(t, map[string]string{
		"Me and my wife split up in March, so it's just me and the kids now.": "User and their wife split up; the user no longer has a wife.",
		"Mi marido y yo nos separamos el año pasado.":                         "User and their husband split up; the user no longer has a husband.",
		"Meine Frau und ich haben uns getrennt.":                              "User and their wife split up; the user no longer has a wife.",
		"Ma femme et moi, on s'est séparés.":                                  "User and their wife split up; the user no longer has a wife.",
		"Eu e o meu marido nos separamos.":                                    "User and their husband split up; the user no longer has a husband.",
		"My sister and I split the bill.":                                     "",
	})
}

// TestABusinessTheUserRuns: "I run a small bakery with my sister" is the
// user's work, written of the user.
func TestABusinessTheUserRuns(t *testing.T) {
	wantFacts(t, map[string]string{
		"I'm 42, live in Hobart, and I run a small bakery with my sister.": "User runs a small bakery with the user's sister.",
		"I own my own hair salon in Leeds.":                                "User owns the user's own hair salon in Leeds.",
	})
}

// TestWhatTheUserIsTypedWithoutIm: "Not a fan of spicy food", "Allergic
// to cats" are the user's, as "I'm ..." would be; "Not sure what to do"
// says nothing standing.
func TestWhatTheUserIsTypedWithoutIm(t *testing.T) {
	wantFacts(t, map[string]string{
		"Not a fan of spicy food at all.": "User is not a fan of spicy food at all.",
		"Honestly, allergic to cats.":     "User is allergic to cats.",
		"Not sure what to do.":            "",
	})
}
