package extract

import (
	"strings"
	"testing"
)

// TestTranscriptKeepsOnlyTheUsersOwnWords: a turn's transcript rides with
// later requests as what the user said. What they pasted, quoted for a
// task or said in character is not theirs: it is left out (marked), the
// answer to it too, while what they said of themselves around it stays.
func TestTranscriptKeepsOnlyTheUsersOwnWords(t *testing.T) {
	cases := []struct {
		name, user string
		framed     bool
		keep, drop []string // substrings the transcript must and must not hold
		none       bool     // no transcript at all
	}{
		{name: "an email pasted inline, Spanish",
			user: "Ayúdame a contestar este correo, porfa: Estimado Ing. Rodrigo: Me presento, soy Valeria Gutiérrez. Vivo en Monterrey y soy vegetariana. Saludos cordiales, Valeria",
			keep: []string{"Ayúdame a contestar este correo"}, drop: []string{"Monterrey", "vegetariana"}},
		{name: "a letter to proofread in guillemets, French",
			user: "Tu peux relire la lettre de motivation de ma sœur ? Elle me l'a envoyée ce matin : « Madame, Monsieur, Je m'appelle Clémence Roux, j'ai 31 ans et je suis aide-soignante à Grenoble. »",
			drop: []string{"Clémence", "Grenoble"}},
		{name: "a text to translate, Portuguese",
			user: "traduz pro inglês esse texto do meu tio, é pro pedido de visto dele: 'Meu nome é Severino Alves, tenho 62 anos e moro em Caruaru.'",
			drop: []string{"Severino", "Caruaru"}},
		{name: "lyrics with a question",
			user: "Here's our chorus so far, what rhymes could work better? I was born in Memphis with a broken heart, I got a wife in Reno",
			keep: []string{"what rhymes could work better?"}, drop: []string{"Memphis", "Reno"}},
		{name: "the user's own words before the material stay",
			user: "I'm a teacher in Leeds. Can you proofread this for my neighbour? \"Hi, I'm Maria, I live in Rome and I'm vegan.\"",
			keep: []string{"teacher in Leeds"}, drop: []string{"Rome", "vegan"}},
		{name: "a line in character", framed: true,
			user: "—Mire, soy viudo y tengo tres bocas que alimentar. ¿Me fía hasta fin de mes?",
			none: true},
		{name: "a step out of a role-play keeps the step out", framed: true,
			user: "*sits at the bar* I'm a herbalist. (ooc: gotta go, I'm a paramedic and I'm on earlies tomorrow)",
			keep: []string{"paramedic"}, drop: []string{"herbalist"}},
		{name: "a letter in German quotes to translate",
			user: "Kannst du das für meine Oma ins Englische übersetzen? Sie schreibt an ihre Brieffreundin: „Liebe Margaret, ich bin jetzt 74 und wohne allein in Lübeck.“",
			drop: []string{"74", "Lübeck"}},
		{name: "a plain message is kept whole",
			user: "We moved to Porto last spring and I work from home now.",
			keep: []string{"We moved to Porto last spring and I work from home now."}},
		{name: "code is kept whole",
			user: "Why does this fail?\n```go\nfmt.Println(\"I live in Rome\")\n```",
			keep: []string{"I live in Rome"}},
	}
	for _, c := range cases {
		mems, _, _ := Learn(&Turn{User: c.user, Framed: c.framed, NewTurn: true, Conversation: "c", Turn: 1})
		transcript := ""
		for _, m := range mems {
			if m.Kind == "turn" {
				transcript = m.Content
			}
		}
		switch {
		case c.none && transcript != "":
			t.Errorf("%s: stored a transcript of words not the user's: %q", c.name, transcript)
		case !c.none && transcript == "":
			t.Errorf("%s: stored no transcript", c.name)
		}
		for _, k := range c.keep {
			if !strings.Contains(transcript, k) {
				t.Errorf("%s: the transcript %q lost the user's %q", c.name, transcript, k)
			}
		}
		for _, d := range c.drop {
			if strings.Contains(transcript, d) {
				t.Errorf("%s: the transcript %q holds %q, which is not the user's", c.name, transcript, d)
			}
		}
	}
}

// TestStepsOutOfAFrameAreTheUsers: the ways people step out of a
// role-play for a line of their own, in the five languages: what they say
// then is theirs, what they play is not.
func TestStepsOutOfAFrameAreTheUsers(t *testing.T) {
	cases := []struct{ msg, want, not string }{
		{"*draws my sword* Halt! I am Sir Gareth of Stormhold. ((brb, I'm a nurse and my shift starts at 7))", "nurse", "Gareth"},
		{"[OOC] gotta go, I live in Leeds and it's 2am here lol", "Leeds", ""},
		{"Stepping out of the story for a sec: I'm actually vegan, so no meat in the feast scenes please.", "vegan", ""},
		{"—Soy el capitán del barco. (fuera de rol: soy profe de historia en Sevilla, mañana madrugo)", "Sevilla", "capitán"},
		{"Je suis la reine des glaces. (en vrai je suis allergique aux chats, au cas où)", "cats|chats", "reine"},
		{"Eu sou o pirata Barba Ruiva! (fora do rp: moro em Recife, tô indo dormir)", "Recife", "pirata"},
		{"Ich bin der Zauberer Merlin. (kurz raus: ich bin Lehrerin in Kiel)", "Kiel", "Merlin"},
	}
	for _, c := range cases {
		fs := FactsIn("", c.msg, true)
		var got []string
		for _, f := range fs {
			got = append(got, f.Content)
		}
		all := strings.Join(got, " | ")
		if !matchAny(all, c.want) {
			t.Errorf("%q taught %q; want the step out's %q", c.msg, all, c.want)
		}
		if c.not != "" && strings.Contains(all, c.not) {
			t.Errorf("%q taught %q: %q is played, not the user's", c.msg, all, c.not)
		}
	}
	// A line that opens with an action, or with a dialogue dash, is
	// played, with no opener before it.
	for _, line := range []string{"—Mire, soy viudo y tengo tres bocas que alimentar.", "— Je suis Simone, chanteuse de jazz à Montmartre.", "– Sou o capitão, moro no navio."} {
		if fs := FactsIn("", line, false); len(fs) != 0 {
			t.Errorf("a line of dialogue taught %v", fs)
		}
	}
	if fs := FactsIn("", "*sits at the bar* I'm a herbalist, I can pay in remedies.", false); len(fs) != 0 {
		t.Errorf("a played line taught %v", fs)
	}
	if !Framed([]string{"*waves from the doorway* Evening, innkeeper."}) {
		t.Error("a conversation of played lines is not framed")
	}
}
