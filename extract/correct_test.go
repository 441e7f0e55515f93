package extract

import (
	"strings"
	"testing"
)

// A correction restates the statement it corrects with the name or number
// replaced; one with nothing of its kind to replace teaches nothing.
func TestFactsAfterACorrection(t *testing.T) {
	tests := []struct {
		earlier, in string
		want        []fact
	}{
		{"", "I live in Berlin. Sorry, I meant Munich.", []fact{{"identity:location", "User lives in Munich."}}},
		{"I live in New York.", "Sorry, I meant New Jersey.", []fact{{"identity:location", "User lives in New Jersey."}}},
		{"Hi, I'm Ana and I work at Siemens.", "oops i meant Bosch", []fact{{"identity:job", "User works at Bosch."}}},
		{"I'm 34 years old.", "Typo, I meant 43.", []fact{{"identity:age", "User is 43 years old."}}},
		{"I have a Pixel 7.", "I meant a Pixel 8.", []fact{{"possession:phone", "User has a Pixel 8."}}},
		{"I have three kids and their school fees are killing me.", "sorry I meant two kids, Tobi and Kemi. typing too fast",
			[]fact{{"family:count:child", "User has two kids."}, {"family:person:tobi", "User's child is named Tobi."}, {"family:person:kemi", "User's child is named Kemi."}}},
		{"We've got 3 dogs.", "Sorry, I meant 2.", []fact{{"family:count:dog", "User has 2 dogs."}}},
		// The next message's correction in the other languages read.
		{"Ich wohne in Köln.", "Sorry, ich meinte Bonn.", []fact{{"identity:location", "User lives in Bonn."}}},
		{"Vivo en Valencia.", "Perdón, quise decir Alicante.", []fact{{"identity:location", "User lives in Alicante."}}},
		{"J'habite à Lyon.", "Pardon, je voulais dire Grenoble.", []fact{{"identity:location", "User lives in Grenoble."}}},
		{"Moro em Campinas.", "Desculpa, quis dizer Santos.", []fact{{"identity:location", "User lives in Santos."}}},
		{"Ich habe drei Kinder.", "Nein, ich meinte zwei.", []fact{{"family:count:child", "User has 2 children."}}},
		{"I'm a nurse.", "Sorry, I meant a doctor.", nil},
		{"What's the weather in Rome?", "Sorry, I meant Milan.", nil},
		{"", "Sorry, I meant Munich.", nil},
	}
	for _, tt := range tests {
		got := FactsAfter(tt.earlier, tt.in)
		var g []fact
		for _, f := range got {
			g = append(g, fact{f.Key, f.Content})
		}
		if len(g) != len(tt.want) || len(g) > 0 && g[0] != tt.want[0] {
			t.Errorf("FactsAfter(%q, %q) = %q, want %q", tt.earlier, tt.in, g, tt.want)
		}
	}
}

// TestAnAllergyCorrectedAsPeopleSayIt: "allergic to X, not Y" and "it's
// not Y I'm allergic to, it's X", in the languages read, replace Y's
// allergy with X's.
func TestAnAllergyCorrectedAsPeopleSayIt(t *testing.T) {
	for msg, want := range map[string]string{
		"Actually it's not peanuts I'm allergic to, it's tree nuts.":           "User is allergic to tree nuts, not peanuts.",
		"Fiz os exames e descobri que sou alérgica a camarão, não a amendoim!": "User is allergic to shellfish, not peanuts.",
		"Resulta que soy alérgica al marisco, no a los cacahuetes.":            "User is allergic to shellfish, not peanuts.",
		"Ich bin gar nicht gegen Nüsse allergisch, sondern gegen Sellerie.":    "User is allergic to Sellerie, not nuts.",
	} {
		found := false
		var got []string
		for _, f := range Facts(msg) {
			got = append(got, f.Content)
			found = found || f.Content == want && strings.HasPrefix(f.Key, "health:allergy:")
		}
		if !found {
			t.Errorf("Facts(%q) = %q, want %q", msg, got, want)
		}
	}
}
