package index

import "testing"

// TestSmallTalkSearchesNothing: greetings, thanks and goodbyes, as people
// type them in the five languages, get no memories; a question beside
// them does.
func TestSmallTalkSearchesNothing(t *testing.T) {
	for _, q := range []string{
		"thanks, that's all for today!", "hi there :)", "cheers, that's all for now!", "Hey, how's it going?",
		"thanks so much!!", "ty, you're a legend", "gn, talk tomorrow", "Danke vielmal, schönen Abend no!",
		"Vielen Dank, bis bald", "Merci, bonne soirée !", "coucou ça va ?", "valeu, tmj!", "obrigada, beijos",
		"muchas gracias, nos vemos", "¡Hola! ¿Qué tal?", "tudo bem?",
		// Typed as people type them: dialect, slang, a word the lists lack.
		"good morning o, how you dey?", "hey thanks, have a good one!", "morning! just saying hi", "cheers, ta-ra",
		"Moin, alles gut?", "salut, ça roule ?", "oi gente, blz?", "Danke dir, schönen Abend noch!",
		"how far, everything fine?", "howzit!", "g'day mate, hows things?", "wassup", "salut, quoi de neuf ?",
		"na, wie läufts?", "e aí, como vai?", "hola, ¿cómo va todo?", "how's life treating you?",
	} {
		if f := Gate(q); f != FocusNone {
			t.Errorf("Gate(%q) = %v, want no search", q, f)
		}
	}
	for _, q := range []string{
		"thanks! what should I cook tonight?", "Good morning, any ideas for my commute?", "Danke! Was koche ich heute?",
		"merci, tu as une idée de recette ?", "hi, what's my name?", "hi, recipe for tonight?", "hey, gift ideas?",
		"thanks, I'm vegan btw", "hola, ¿qué ceno hoy?", "Danke, wo wohne ich?",
	} {
		if f := Gate(q); f == FocusNone {
			t.Errorf("Gate(%q) searches nothing; it asks something", q)
		}
	}
}
