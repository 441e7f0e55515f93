package extract

import (
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
