package extract

import "testing"

// The common English phrasings of names, jobs, constraints, preferences
// and changes each yield their fact.
func TestFactsEverydayStatements(t *testing.T) {
	tests := []struct {
		in   string
		want []fact
	}{
		// names
		{"I am Ana", []fact{{"identity:name", "User's name is Ana."}}},
		{"Hi, I am Ana.", []fact{{"identity:name", "User's name is Ana."}}},
		{"Hi, I'm Ana and I live in Porto.", []fact{{"identity:name", "User's name is Ana."}, {"identity:location", "User lives in Porto."}}},
		{"You can call me Al.", []fact{{"identity:name", "User's name is Al."}}},
		// jobs
		{"I'm a nurse at Santa Maria hospital.", []fact{{"identity:job", "User is a nurse at Santa Maria hospital."}}},
		{"I'm a nurse.", []fact{{"identity:job", "User is a nurse."}}},
		{"I started a new job as a nurse.", []fact{{"identity:job", "User started a new job as a nurse."}}},
		{"My new job at Spotify starts Monday.", []fact{{"identity:job", "User's new job at Spotify starts Monday."}}},
		{"I'm studying law at the University of Coimbra.", []fact{{"identity:study", "User is studying law at the University of Coimbra."}}},
		// constraints
		{"I have a severe nut allergy.", []fact{{"health:allergy:nut", "User has a severe nut allergy."}}},
		{"I'm allergic to wool and avoid any woolen clothing.", []fact{{"health:allergy:wool", "User is allergic to wool and avoids any woolen clothing."}}},
		{"I follow a strict gluten-free diet.", []fact{{"identity:diet", "User follows a strict gluten-free diet."}}},
		{"I can't eat shellfish.", []fact{{"health:avoid:shellfish", "User can't eat shellfish."}}},
		{"I don't drink.", []fact{{"health:alcohol", "User does not drink alcohol."}}},
		{"I have type 2 diabetes.", []fact{{"health:condition:diabetes", "User has type 2 diabetes."}}},
		// preferences, kept with what qualifies them
		{"I prefer tea over coffee.", []fact{{"preference:tea", "User prefers tea over coffee."}}},
		{"I can't stand horror movies.", []fact{{"preference:horror movies", "User can't stand horror movies."}}},
		{"I'm not a fan of crowded places.", []fact{{"preference:crowded places", "User is not a fan of crowded places."}}},
		{"I strongly avoid team sports and prefer solo activities.", []fact{{"preference:team sports", "User strongly avoids team sports and prefers solo activities."}}},
		{"I have a phobia of birds, so I cannot have any avian pets in my home.", []fact{{"preference:birds", "User has a phobia of birds, so the user cannot have any avian pets in the user's home."}}},
		{"Due to ethical concerns, I avoid buying leather.", []fact{{"preference:buying leather", "Due to ethical concerns, the user avoids buying leather."}}},
		{"Count to eight for me, I love counting.", []fact{{"preference:counting", "User loves counting."}}},
		{"Speaking of pets, I usually prefer low-maintenance ones.", []fact{{"preference:low maintenance ones", "User usually prefers low-maintenance ones."}}},
		{"I tend to prefer documentaries over fantasy animations; the magical elements feel unrealistic to me.", []fact{{"preference:documentaries", "User tends to prefer documentaries over fantasy animations; the magical elements feel unrealistic to the user."}}},
		{"I'm not really into immersive experiences, even for teaching.", []fact{{"preference:immersive experiences", "User is not really into immersive experiences, even for teaching."}}},
		// said in passing: before a question, as a description, of something else
		{"By the way, I usually prefer to avoid sports games, but do you have any physics puzzles?", []fact{{"preference:sports games", "User usually prefers to avoid sports games."}}},
		{"As someone who usually prefers cruelty-free products, I'd like some book ideas.", []fact{{"preference:cruelty free products", "User usually prefers cruelty-free products."}}},
		{"VR headsets make me feel dizzy.", []fact{{"preference:" + contentKey("VR headsets make the user feel dizzy."), "VR headsets make the user feel dizzy."}}},
		{"I love the idea of a scavenger hunt!", nil},
		{"I'm particularly interested in the canopic jars.", nil},
		{"Always answer in metric units.", []fact{{"instruction:" + contentKey("always answer in metric units"), "User's standing instruction: always answer in metric units."}}},
		// changes: what changed and what it is now
		{"I broke up with Miguel, I'm dating Sara now.", []fact{{"family:partner", "User broke up with Miguel, the user is dating Sara now."}}},
		{"I switched to an iPhone 15.", []fact{{"possession:phone", "User switched to an iPhone 15."}}},
		{"I'm not vegan anymore, I eat meat again.", []fact{{"identity:diet", "User is not vegan anymore, the user eats meat again."}}},
		{"I went fully vegan in January.", []fact{{"identity:diet", "User went fully vegan in January."}}},
		{"I changed my degree to medicine.", []fact{{"identity:study", "User changed the user's degree to medicine."}}},
		{"I don't live in Berlin anymore.", []fact{{"identity:location", "User doesn't live in Berlin anymore."}}},
		{"I switched from Vim to VS Code.", []fact{{"preference:vim", "User switched from Vim to VS Code."}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkFacts(t, tt.in, tt.want) })
	}
}

// A change supersedes what it changes: both statements share a key.
func TestFactsChangesSupersede(t *testing.T) {
	pairs := []struct{ older, newer string }{
		{"I live in Lisbon.", "I moved to Porto last month."},
		{"I live in Toronto.", "We relocated to Vancouver in March."},
		{"I'm a teacher at a primary school.", "I started a new job as a nurse."},
		{"I work as an accountant.", "I'm a chef now."},
		{"I work at Google.", "My new job at Spotify starts Monday."},
		{"My partner's name is Miguel.", "I broke up with Miguel, I'm dating Sara now."},
		{"My girlfriend is called Eva.", "I'm dating Lena now."},
		{"I'm single.", "I got married in June."},
		{"I'm vegetarian.", "I'm pescatarian now."},
		{"I'm vegan.", "I'm not vegan anymore."},
		{"I follow a strict keto diet.", "I follow a Mediterranean diet instead."},
		{"I have a Pixel 7.", "I switched to an iPhone 15."},
		{"My phone is an old iPhone 11.", "I got a Samsung Galaxy S24."},
		{"I use a ThinkPad X1 for work.", "I switched to a MacBook Air."},
		{"I'm studying law.", "I changed my degree to medicine."},
		{"I major in biology.", "I switched my major to computer science."},
		{"I drive to work every day.", "I cycle to work now."},
		{"I play tennis twice a week.", "I quit tennis."},
		{"I use Vim for all my coding.", "I switched from Vim to VS Code."},
		{"My name is Alexandra.", "Please call me Alex from now on."},
		{"I drink three cups of coffee every morning.", "I don't drink coffee anymore."},
		{"I'm a nurse.", "I'm not a nurse anymore."},
		{"I work as a nurse.", "I no longer work as a nurse."},
		{"I work at Google.", "I no longer work at Google."},
		{"I'm allergic to nuts.", "I'm not allergic to nuts, my husband is."},
		{"I have a severe nut allergy.", "I don't have a nut allergy anymore."},
		{"I'm vegetarian.", "I eat meat again."},
		{"I'm pescatarian.", "I no longer eat fish."},
		{"I live in London.", "Actually I don't live in London, I live in Leeds."},
	}
	for _, p := range pairs {
		a, b := Facts(p.older), Facts(p.newer)
		if len(a) == 0 || len(b) == 0 {
			t.Errorf("%q -> %v, %q -> %v: want a fact each", p.older, a, p.newer, b)
			continue
		}
		shared := false
		for _, x := range b {
			shared = shared || x.Key == a[0].Key
		}
		if !shared {
			t.Errorf("%q (%v) is not superseded by %q (%v)", p.older, a, p.newer, b)
		}
	}
}

// Sentences the rules cannot read into a clean fact teach none.
func TestFactsNoneWhenUnclean(t *testing.T) {
	for _, in := range []string{
		"Please keep in mind how I like my tea.",
		"The city I live in is Berlin.",
		"I'm Italian.",
		"I love the idea of a scavenger hunt!",
		"I like that you asked.",
		"I prefer your first answer.",
		"I'd love some help with my essay.",
		// what the preference is about was said before: alone, the fact
		// names nothing (the turn's transcript keeps both)
		"Any fitness apps without fingerprint or facial recognition? I usually prefer to avoid those due to privacy concerns.",
		"Speaking of geometric shapes, I tend to prefer them in my personal style too.",
		"I tried meal plans before. I find it hard to stick to them consistently.",
		"I saw the new tablets. I really love them!",
	} {
		if got := Facts(in); len(got) != 0 {
			t.Errorf("Facts(%q) = %+v, want none", in, got)
		}
	}
}

// A pronoun whose noun is in the same statement, or that a noun follows,
// keeps its fact.
func TestFactsPronounWithItsNoun(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"I tend to avoid those trendy foldable phones since they seem fragile.", "User tends to avoid those trendy foldable phones since they seem fragile."},
		{"I find virtual reality simulations disorienting and prefer not to use them.", "User finds virtual reality simulations disorienting and prefers not to use them."},
		{"I usually prefer it when meetings start late.", "User usually prefers it when meetings start late."},
		{"Speaking of pets, I usually prefer low-maintenance ones.", "User usually prefers low-maintenance ones."},
	} {
		got := Facts(tt.in)
		if len(got) != 1 || got[0].Content != tt.want {
			t.Errorf("Facts(%q) = %+v, want one: %q", tt.in, got, tt.want)
		}
	}
}

func TestOnlyAsks(t *testing.T) {
	for in, want := range map[string]bool{
		"Thanks! Also, what's a good podcast about history?": true,
		"Suggest a snack for me.":                            true,
		"Can you plan my commute":                            true,
		"ok thanks":                                          true,
		"write 10 tests for it":                              true,
		"I live in Lisbon. What's the weather like?":         false,
		"I'm allergic to shellfish.":                         false,
		"":                                                   false,
		// What the request wants, said after it, and a fragment that
		// finishes a question, in the languages read.
		"What should we do for our anniversary? I want something special":               true,
		"¿Qué me cocino esta noche? Algo rapidito":                                      true,
		"Qu'est-ce que je cuisine ce soir ? Je veux quelque chose de léger":             true,
		"Was koche ich heute? Ich möchte etwas Schnelles":                               true,
		"O que eu faço pro jantar? Quero algo leve":                                     true,
		"What should I cook tonight? I'm vegan.":                                        false,
		"my sister is visiting this weekend, where should we go for dinner around here": true,
		"Mi hermana viene este finde, ¿dónde la llevo a cenar":                          true,
		"I'm vegan, what should I cook tonight":                                         false,
		"o q posso fazer de lanche pras meninas amanha":                                 true,
		"What should I cook tonight? I want to lose weight before my wedding in June.":  false,
	} {
		if got := OnlyAsks(in); got != want {
			t.Errorf("OnlyAsks(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestRequestsSaidAsNounsOnlyAsk: a request said as what is wanted, with
// no verb, only asks, in each language the rules read; one that also says
// something about someone does not.
func TestRequestsSaidAsNounsOnlyAsk(t *testing.T) {
	for in, want := range map[string]bool{
		"Gift ideas for my wife's birthday":                   true,
		"some easy dinner recipes for tonight":                true,
		"tips for my job interview on Monday":                 true,
		"Ideias de prenda de Natal para o meu neto":           true,
		"dicas pra minha prova de cálculo semana que vem":     true,
		"Ideas para el finde con los niños":                   true,
		"Consejos para dormir mejor":                          true,
		"Ideen für einen Ausflug am Sonntag":                  true,
		"Tipps zum Sparen beim Einkaufen":                     true,
		"un dessert pour moi ce soir, un truc simple":         true,
		"Des idées de sortie pour samedi":                     true,
		"Recipes for my son, he's allergic to eggs":           false,
		"Ideas for dinner? I'm vegan now.":                    false,
		"Tipps für die Arbeit, ich bin Lehrerin":              false,
		"Ideias de jantar, sou vegetariana":                   false,
		"Ideas are cheap, I'm a copywriter in Leeds.":         false,
		"Advice from my dad: always read the contract twice.": false,
	} {
		if got := OnlyAsks(in); got != want {
			t.Errorf("OnlyAsks(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestAPassingStateAndARequestOnlyAsk: a passing state said beside a
// request says nothing that stands, in the five languages; a standing
// fact beside it still does.
func TestAPassingStateAndARequestOnlyAsk(t *testing.T) {
	for in, want := range map[string]bool{
		"I'm so tired today. Any ideas for a quick dinner?":                     true,
		"ugh, I'm stuck at the airport, what can I do for 3 hours?":             true,
		"Hoy estoy agotada. ¿Qué ceno?":                                         true,
		"Hoje estou mesmo cansada, foi um dia longo. Sugere-me uma série leve?": true,
		"Bin grad total kaputt. Was soll ich kochen?":                           true,
		"Je suis crevé ce soir, une idée de film ?":                             true,
		"I'm exhausted, I work nights as a nurse at St Mary's and never sleep.": false,
		"I'm tired of my job as a teacher, I want to retrain.":                  false,
	} {
		if got := OnlyAsks(in); got != want {
			t.Errorf("OnlyAsks(%q) = %v, want %v", in, got, want)
		}
	}
}
