package extract

import "testing"

// TestChangesReplaceInEveryLanguage: a change said in ordinary words, in
// the five languages, teaches a fact with the key of the value it changes,
// holding the new value.
func TestChangesReplaceInEveryLanguage(t *testing.T) {
	cases := []struct{ old, new, want string }{
		{"I live in Leeds.", "I've moved to York.", "York"},
		{"I live in Leeds.", "We relocated to York last spring.", "York"},
		{"I live in Leeds.", "Now living in York, finally!", "York"},
		{"I live in Leeds.", "I'm in York now.", "York"},
		{"I live in Leeds.", "Just settled in York.", "York"},
		{"I live in Leeds.", "Update: I'm living in York these days.", "York"},
		{"I work at Google.", "I got a new job at Spotify.", "Spotify"},
		{"I work at Google.", "I started at Spotify last week.", "Spotify"},
		{"I work at Google.", "I joined Spotify in March.", "Spotify"},
		{"I work at Google.", "I'm now working for Spotify.", "Spotify"},
		{"I'm a nurse.", "I changed careers, I'm a teacher now.", "teacher"},
		{"I'm a nurse.", "I got promoted to ward manager.", "manager"},
		{"I'm a nurse.", "These days I work as a midwife.", "midwife"},
		{"My boyfriend is Tom.", "I broke up with Tom. I'm seeing Alex now.", "Alex"},
		{"My wife is called Ana.", "Ana and I got divorced.", "divorced"},
		{"I'm vegetarian.", "I went vegan last month.", "vegan"},
		{"I'm vegan.", "I stopped being vegan.", "vegan"},
		{"I'm vegetarian.", "I started eating fish again.", "fish"},
		{"I have an iPhone 12.", "I got a new phone, a Pixel 8.", "Pixel"},
		{"I have an iPhone 12.", "I upgraded to an iPhone 15.", "iPhone 15"},
		{"I drive a Golf.", "I sold my car and now cycle everywhere.", "sold"},
		{"I drive a Golf.", "I now drive a Tesla.", "Tesla"},
		{"My name is Samantha.", "I go by Sam now.", "Sam"},
		{"I play tennis.", "I quit tennis and took up padel.", "padel"},
		{"I support Arsenal.", "I'm a Spurs fan now.", "Spurs"},
		{"We have a dog called Rex.", "Sadly Rex died last week.", "died"},
		{"I'm 34.", "I just turned 35.", "35"},
		{"Vivo en Madrid.", "Me he mudado a Valencia.", "Valencia"},
		{"Vivo en Madrid.", "Ahora estoy viviendo en Valencia.", "Valencia"},
		{"Trabajo en Telefónica.", "Ahora trabajo en Iberdrola.", "Iberdrola"},
		{"Soy vegetariana.", "Ya no soy vegetariana, como carne otra vez.", "carne|meat"},
		{"Ich wohne in Berlin.", "Ich wohne jetzt in Leipzig.", "Leipzig"},
		{"Ich arbeite bei Siemens.", "Ich habe gekündigt und arbeite jetzt bei Bosch.", "Bosch"},
		{"Ich bin Vegetarier.", "Ich esse wieder Fleisch.", "meat"},
		{"J'habite à Lyon.", "J'habite maintenant à Nantes.", "Nantes"},
		{"Je travaille chez Renault.", "Je travaille désormais chez Airbus.", "Airbus"},
		{"Je suis végétarien.", "Je ne suis plus végétarien.", "no longer"},
		{"Moro em Lisboa.", "Agora moro no Porto.", "Porto"},
		{"Trabalho na Natura.", "Agora trabalho na Embraer.", "Embraer"},
		{"Sou vegana.", "Não sou mais vegana.", "no longer"},
	}
	for _, c := range cases {
		old := FactsIn("", c.old, false)
		nw := FactsIn(c.old, c.new, false)
		keys := map[string]bool{}
		for _, f := range old {
			keys[f.Key] = true
		}
		ok := false
		var got []string
		for _, f := range nw {
			got = append(got, f.Key+" | "+f.Content)
			if keys[f.Key] && matchAny(f.Content, c.want) {
				ok = true
			}
		}
		if !ok {
			var og []string
			for _, f := range old {
				og = append(og, f.Key)
			}
			t.Errorf("%q then %q: the first taught %v, the second %v; want the same key holding %q", c.old, c.new, og, got, c.want)
		}
	}
}
