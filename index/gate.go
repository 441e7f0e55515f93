package index

import (
	"strings"

	"github.com/caddy-memory/memory/internal/norm"
)

// Focus is what a question asks memory to look through, judged from its
// words before anything is searched (the gate).
type Focus int

// Foci.
const (
	// FocusAll searches everything: facts and episodes (ranked a little
	// above raw turns, see Rank) and turns.
	FocusAll Focus = iota
	// FocusNone searches nothing: a greeting or small talk.
	FocusNone
	// FocusIdentity ranks the owner's identity facts first: "what's my
	// name", "where do I live".
	FocusIdentity
	// FocusConversation ranks episodes and turns first: "what did we
	// discuss", "remember when".
	FocusConversation
	// FocusVerbatim searches turns only: "my exact words".
	FocusVerbatim
)

// Kinds are the memory kinds a focus searches (only; nil for all) and
// those it ranks first (prefer). A question often asks more than its
// focus ("where do I live, and a snack without peanuts?"), so a focus
// prefers kinds rather than dropping the others; only a verbatim request
// is about transcripts alone.
func (f Focus) Kinds() (only, prefer []string) {
	switch f {
	case FocusIdentity:
		return nil, []string{"identity"}
	case FocusConversation:
		return nil, []string{"episode", "turn"}
	case FocusVerbatim:
		return []string{"turn"}, nil
	}
	return nil, nil
}

// phrases of each focus, matched within the normalised question (words
// separated by single spaces, lowercase, no punctuation).
var (
	identityPhrases = []string{
		"who am i", "what is my name", "whats my name", "what s my name", "do you know my name", "my name again",
		"how old am i", "where do i live", "where am i from", "where do i come from", "what do i do for a living",
		"what is my job", "what are my pronouns", "what language do i speak", "what do you know about me",
		"tell me about myself", "what do you remember about me",
	}
	conversationPhrases = []string{
		"we discussed", "we talked about", "we spoke about", "did we discuss", "did we talk", "remember when",
		"do you remember", "last time", "you told me", "i told you", "did i tell you", "did i mention",
		"i mentioned", "earlier conversation", "previous conversation", "our conversation", "what did we",
	}
	verbatimPhrases = []string{
		"exact words", "word for word", "verbatim", "quote me", "exactly what i said", "what exactly did i say",
		"my own words",
	}
	smallTalk = map[string]bool{
		"hi": true, "hello": true, "hey": true, "hiya": true, "yo": true, "thanks": true, "thank": true, "you": true,
		"ok": true, "okay": true, "k": true, "bye": true, "goodbye": true, "good": true, "morning": true,
		"afternoon": true, "evening": true, "night": true, "how": true, "are": true, "doing": true, "cool": true,
		"great": true, "nice": true, "yes": true, "yeah": true, "yep": true, "no": true, "nope": true, "sure": true,
		"lol": true, "haha": true, "please": true, "cheers": true, "there": true, "much": true, "very": true,
		"alright": true, "fine": true, "awesome": true, "perfect": true, "got": true, "it": true, "see": true, "ya": true,
		"welcome": true, "sounds": true, "a": true, "s": true, "what": true, "up": true, "whats": true, "sup": true,
		"that": true, "all": true, "for": true, "today": true, "tonight": true, "now": true, "later": true, "soon": true,
		"talk": true, "to": true, "enough": true, "done": true, "again": true,
		// Greetings and thanks in the other languages the learners read.
		"danke": true, "schon": true, "bis": true, "spater": true, "tschuss": true, "hallo": true, "servus": true,
		"gracias": true, "hola": true, "adios": true, "hasta": true, "luego": true, "pronto": true, "buenas": true,
		"merci": true, "bonjour": true, "salut": true, "bonsoir": true, "au": true, "revoir": true, "plus": true,
		"obrigado": true, "obrigada": true, "ola": true, "oi": true, "ate": true, "mais": true, "tchau": true, "valeu": true,
		"ciao": true, "grazie": true, "schön": true, "später": true, "tschüss": true, "adiós": true, "olá": true,
		"até": true, "à": true, "bientôt": true, "bientot": true,
	}
)

// moreSmallTalk are more words of greetings, thanks and goodbyes, as
// people type them in the five languages (slang and abbreviations too).
func init() {
	for _, w := range strings.Fields(`thx ty tysm ta tq thanx thnx appreciate appreciated legend brilliant lovely amazing
		wonderful helpful helped really so lot lots this was is you re youre the best take care have day weekend chat
		catch cya ttyl gn gm gnight nite everything well going mate guys folks bud buddy dear xx xoxo
		muchas muchisimas mil genial perfecto vale chao chau nos vemos buen dia noche tarde igualmente saludos besos
		viel vielen vielmal dank super toll gute nacht guten morgen tag bald dann schonen abend wochenende no gell
		bonne nuit journee soiree top parfait bisous ca va coucou
		beijos bjs abraco abracos boa noite dia show massa demais muito obg brigada brigado tmj falou tudo bem beleza
		wie gehts geht s es dir que tal como estas e ai tomorrow tmrw just saying checking dropping by one alles gut roule gente blz noch dir dich euch schönen soirée journée ça qué día estás abraço abraços está
		far howzit gday hows wassup whatsup mornin evenin hiya heya quoi neuf läuft läufts vai fala onda cómo como
		anything new things life treating g va todo`) {
		smallTalk[w] = true
	}
}

// maxSmallTalk is the most words a message of small talk has.
const maxSmallTalk = 6

// greetings are the words that make a short message a greeting, thanks or
// goodbye, however else it is typed.
var greetings = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`hi hello hey hiya heya yo morning evening thanks thank thx ty tysm ta cheers bye goodbye
		cya gn gm hola buenas gracias adios chao chau danke hallo servus tschuss tschüss moin merci bonjour bonsoir salut coucou
		obrigado obrigada valeu oi ola olá tchau ciao howzit gday wassup whatsup sup hows läufts aí`) {
		greetings[w] = true
	}
}

// smallTalkOnly reports whether a short message only greets, thanks or
// says goodbye: every word small talk, or a greeting with at most two
// words of three letters or fewer that are not ("good morning o, how you
// dey?", "cheers, ta-ra", "hey thanks, have a good one!"); a longer word
// ("hi, recipe for tonight?") may ask something.
func smallTalkOnly(words []string) bool {
	greets, other := false, 0
	for _, w := range words {
		greets = greets || greetings[w]
		if smallTalk[w] || greetings[w] {
			continue
		}
		if len(w) > 3 || strings.ContainsAny(w, "0123456789") {
			return false
		}
		other++
	}
	return other == 0 || greets && other <= 2
}

// Gate judges what a question asks memory to look through.
func Gate(question string) Focus {
	q := norm.Normalize(question)
	if q == "" {
		return FocusNone
	}
	words := strings.Fields(q)
	if len(words) <= maxSmallTalk && smallTalkOnly(words) {
		return FocusNone
	}
	padded := " " + q + " "
	has := func(phrases []string) bool {
		for _, p := range phrases {
			if strings.Contains(padded, " "+p+" ") {
				return true
			}
		}
		return false
	}
	switch {
	case has(verbatimPhrases):
		return FocusVerbatim
	case has(identityPhrases):
		return FocusIdentity
	case has(conversationPhrases):
		return FocusConversation
	}
	return FocusAll
}
