package extract

import (
	"strings"
	"testing"
)

// TestGermanClausesAreReadInEitherOrder: a German statement whose clause
// opens with a time, a frame or what the user is, the verb second and
// "ich" after it, teaches what the same statement opened by "ich" does.
func TestGermanClausesAreReadInEitherOrder(t *testing.T) {
	for in, want := range map[string]string{
		"Seit Januar lebe ich vegan, also kein Käse mehr.":                          "User is vegan.",
		"Vegetarier bin ich seit zehn Jahren.":                                      "User is vegetarian.",
		"Im echten Leben bin ich übrigens Softwareentwickler in Berlin.":            "User works as a Softwareentwickler",
		"Hier in Köln wohne ich seit 2019.":                                         "User lives in Köln.",
		"In Leipzig wohnen wir jetzt, seit dem Sommer.":                             "User lives in Leipzig.",
		"Beruflich bin ich Lehrerin an einer Grundschule.":                          "User is a teacher",
		"Letztes Jahr haben wir ein Haus in Freising gekauft.":                      "Freising",
		"Mein Mann Tobias und ich haben letztes Jahr ein Haus in Freising gekauft.": "Freising",
		"Seit März arbeite ich bei Siemens.":                                        "User works at Siemens.",
		"Ich arbeite Teilzeit bei BMW in der Qualitätssicherung.":                   "BMW",
	} {
		found := false
		var got []string
		for _, f := range Facts(in) {
			got = append(got, f.Content)
			found = found || len(f.Content) >= len(want) && strings.Contains(f.Content, want)
		}
		if !found {
			t.Errorf("Facts(%q) = %q, want one holding %q", in, got, want)
		}
	}
	// The other order of a question or of someone else's statement is
	// no statement of the user's.
	for _, in := range []string{"Wo wohne ich am besten?", "Seit wann wohnt ihr in Bonn?", "In Berlin wohnt meine Schwester."} {
		for _, f := range Facts(in) {
			if f.Key == "identity:location" {
				t.Errorf("Facts(%q) = %q: not the user's home", in, f.Content)
			}
		}
	}
}

// TestWhereTheUserIsSinceATimeIsTheirWork: "Seit Oktober bin ich bei
// BMW" is the user's employer; "bei meinen Eltern" is no workplace.
func TestWhereTheUserIsSinceATimeIsTheirWork(t *testing.T) {
	wantFacts(t, map[string]string{
		"Seit Oktober bin ich bei BMW.":           "User works at BMW.",
		"Jetzt bin ich bei Zalando.":              "User works at Zalando.",
		"Seit gestern bin ich bei meinen Eltern.": "",
		"Heute bin ich bei meiner Mutter.":        "",
	})
}
