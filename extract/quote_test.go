package extract

import "testing"

func TestStripQuoted(t *testing.T) {
	injected := []string{"User lives in Lisbon.", "User's favourite colour is green.", "User is 30."}
	tests := []struct{ name, text, want string }{
		{"list quoted back",
			"Here is what I know:\n- User lives in Lisbon.\n- USER'S FAVOURITE COLOUR IS GREEN!\nAnything else?",
			"Here is what I know:\nAnything else?"},
		{"paraphrase around the memory",
			"You told me: user lives in lisbon\nSo, pastel de nata?",
			"So, pastel de nata?"},
		{"other lines kept",
			"Lisbon is lovely in spring.\nThe user lives near the sea.",
			"Lisbon is lovely in spring.\nThe user lives near the sea."},
		{"short memory is not taken for a quote",
			"User is 30.\nHappy birthday!",
			"User is 30.\nHappy birthday!"},
		{"every line quoted", "- User lives in Lisbon.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StripQuoted(tt.text, injected); got != tt.want {
				t.Errorf("StripQuoted(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
	t.Run("nothing injected", func(t *testing.T) {
		text := "  - User lives in Lisbon.\n"
		for _, inj := range [][]string{nil, {}, {"User is 30."}, {"  ", "!!"}} {
			if got := StripQuoted(text, inj); got != text {
				t.Errorf("StripQuoted(_, %q) = %q, want the text unchanged", inj, got)
			}
		}
	})
	t.Run("empty text", func(t *testing.T) {
		if got := StripQuoted("", injected); got != "" {
			t.Errorf("StripQuoted(\"\") = %q", got)
		}
	})
}

// TestWhatSomeoneElseWroteIsTheirs: a text the user presents as what
// someone else wrote, or asked them to look over, or pastes as a signed
// review, is theirs, in the languages read, whatever it says in the first
// person.
func TestWhatSomeoneElseWroteIsTheirs(t *testing.T) {
	for _, msg := range []string{
		"Here's what my daughter wrote for her school bio, can you make it sound better?\n\nI'm Maya, I'm 12, I live in Portland and I love horses.",
		"My friend asked me to check her dating profile: I'm a 34-year-old nurse from Leeds who loves hiking and hates cilantro. Thoughts?",
		"This is what my boss sent the team: I'm vegan and I live in Oslo, so the offsite menu is plant-based.",
		"Mi amiga me pidió que revisara su perfil: soy enfermera, vivo en Cádiz y soy vegana.",
		"Das hier hat mein Sohn geschrieben: Ich bin 15, wohne in Bremen und bin Vegetarier.",
		"Voici ce que ma collègue a écrit : je suis végétarienne et j'habite à Lille.",
		"Olha o que minha irmã escreveu: sou vegana e moro em Recife.",
		// A forwarded message, in the languages read.
		"Forwarded message:\nHi all, I'm Priya, the new HR lead. I'm based in our Pune office and I'm allergic to peanuts!\nWhat should I reply?",
		"---------- Forwarded message ---------\nI'm Tom, I live in Leeds and I'm vegan.\nThoughts?",
		"Mensaje reenviado:\nSoy Lucía, vivo en Bilbao y soy celíaca.\n¿Qué le contesto?",
		"Weitergeleitete Nachricht:\nIch bin Jonas, wohne in Köln und bin Vegetarier.\nWas antworte ich?",
		// A review pasted after stars or a bullet, signed by its writer.
		"This one came in yesterday:\n\n★★★★★ \"Best cafe in Leith! I'm a student at Napier and I've been coming here since first year. My son Jamie (6) loves the cakes.\" — Morag T.\n\nThank her for us.",
		"New review:\n• “I'm a nurse from Bray and I'm vegan, the oat latte here is perfect.” – Aoife\nCan you draft a reply?",
	} {
		if fs := Facts(msg); len(fs) != 0 {
			t.Errorf("Facts(%q) = %v, want none: the text is someone else's", msg, fs)
		}
		if notes := notesOf(msg); len(notes) != 0 {
			t.Errorf("notes of %q = %v, want none", msg, notes)
		}
	}
}
