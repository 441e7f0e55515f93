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
		// Partners.
		{"My girlfriend is called Mia.", "Mia and I split up in the summer. I'm seeing Jo now.", "Jo"},
		{"My boyfriend Luke is a chef.", "Luke and I broke up.", "broke up|no longer|ex"},
		{"Mi novio se llama Pablo.", "Pablo y yo lo dejamos. Ahora salgo con Marcos.", "Marcos"},
		{"Meine Freundin heißt Lena.", "Lena und ich haben uns getrennt.", "no longer|getrennt|split|broke"},
		{"Ma copine s'appelle Chloé.", "Avec Chloé, c'est fini. Je sors avec Inès maintenant.", "Inès"},
		{"Minha namorada é a Bia.", "Eu e a Bia terminamos. Agora namoro a Carol.", "Carol"},
		// Work said as what the user does now.
		{"I'm a baker.", "I quit the bakery and I'm driving buses now.", "bus"},
		{"Ich bin Bäcker.", "Ich habe in der Bäckerei aufgehört und fahre jetzt Taxi.", "taxi"},
		{"Soy camarera.", "Dejé el bar y ahora trabajo de recepcionista.", "recepcionista|receptionist"},
		{"Je suis serveur.", "J'ai arrêté la restauration, je suis prof maintenant.", "prof|teacher"},
		{"Sou enfermeira.", "Saí do hospital e agora sou professora.", "professora|teacher"},
		// Employers.
		{"Je travaille chez Renault.", "J'ai quitté Renault, je suis chez Stellantis maintenant.", "Stellantis"},
		{"Je bosse chez Orange.", "J'ai rejoint Free le mois dernier.", "Free"},
		{"Ich arbeite bei Siemens.", "Ich bin jetzt bei SAP.", "SAP"},
		{"Trabajo en Inditex.", "Me salí de Inditex y entré en Mercadona.", "Mercadona"},
		{"I work for Deloitte.", "Left Deloitte for a startup called Tidal.", "Tidal"},
		// Teams.
		{"I'm a Liverpool fan.", "I've switched to supporting Everton, don't ask.", "Everton"},
		{"Sou do Benfica.", "Agora torço pelo Sporting.", "Sporting"},
		{"Soy del Atlético.", "Ahora soy del Betis.", "Betis"},
		{"Ich bin Bayern-Fan.", "Ich bin jetzt Fan von Union Berlin.", "Union"},
		// Hobbies, sport, languages being learned.
		{"I go to the gym four times a week.", "I gave up the gym, I'm into bouldering now.", "bouldering"},
		{"I play squash on Tuesdays.", "Swapped squash for padel this year.", "padel"},
		{"I'm learning Italian.", "I dropped Italian, I'm learning Korean now.", "Korean"},
		{"Estoy aprendiendo alemán.", "Dejé el alemán, ahora estudio japonés.", "japonés|Japanese"},
		// Names.
		{"My name is Claire Brennan.", "I got married and took my wife's surname, so I'm Claire Okafor now.", "Okafor"},
		{"Je m'appelle Julie Martin.", "Depuis le mariage, je m'appelle Julie Bernard.", "Bernard"},
		// Corrections of health facts.
		{"I'm allergic to latex.", "Actually it isn't latex, it's nickel I'm allergic to.", "nickel"},
		{"I'm allergic to peanuts.", "Turns out I'm allergic to cashews, not peanuts.", "cashew"},
		// Diets.
		{"I'm pescatarian.", "I eat chicken again these days.", "chicken"},
		{"Je suis végétarienne.", "Je remange de la viande depuis cet été.", "viande|meat"},
		{"I'm on keto.", "I dropped keto, it wasn't for me.", "keto"},
		// Devices, vehicles.
		{"I have a Samsung Galaxy.", "Ich habe jetzt ein Fairphone.", "Fairphone"},
		{"I use an iPhone.", "I switched to a Pixel last month.", "Pixel"},
		{"I drive a Golf.", "I sold the Golf and got a Tesla.", "Tesla"},
		{"Tengo un Seat Ibiza.", "Vendí el Ibiza y me compré un Toyota.", "Toyota"},
		// Study.
		{"Je fais du droit à la Sorbonne.", "J'ai changé de filière, je fais médecine maintenant.", "médecine|medicine"},
		{"I'm studying history.", "I switched my major to economics.", "economics"},
		{"Estudo arquitetura.", "Agora faço engenharia civil.", "engenharia|engineering"},
		// Homes in German and Portuguese.
		{"Ich wohne in Dresden.", "Wir sind nach Leipzig gezogen.", "Leipzig"},
		{"Moro em Coimbra.", "Mudei-me para Braga no verão.", "Braga"},
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
