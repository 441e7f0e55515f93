package extract

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// A statement about the user is read from where its subject starts a
// clause: "I prefer tea" at the start of a sentence, after "Hi," or after
// "and", never "how I like my tea" or "the city I live in". A preference or
// a change is kept as its clause, in the third person, so the reason and
// the values given with it stay ("User avoids jumping exercises due to
// joint issues."); facts with a fixed shape (a name, an age) are written
// from their parts.

// fillers may precede a statement's subject without being part of it.
var fillers = map[string]bool{
	"please": true, "hi": true, "hello": true, "hey": true, "oh": true, "ok": true, "okay": true, "well": true,
	"yes": true, "yeah": true, "yep": true, "no": true, "so": true, "and": true, "but": true, "also": true,
	"actually": true, "honestly": true, "personally": true, "really": true, "now": true, "though": true,
	"anyway": true, "anyways": true, "btw": true, "by": true, "the": true, "way": true, "just": true, "fyi": true,
	"plus": true, "then": true, "generally": true, "basically": true, "as": true, "since": true, "because": true,
	"while": true, "although": true, "lately": true, "recently": true, "nowadays": true, "these": true, "days": true,
	"currently": true, "still": true, "again": true, "update": true, "quick": true, "news": true, "big": true,
	"good": true, "great": true, "thanks": true, "thank": true, "you": true, "sure": true, "right": true,
	"ah": true, "um": true, "uh": true, "hmm": true, "alright": true, "cool": true,
	"speaking": true, "of": true, "which": true, "otherwise": true, "besides": true, "furthermore": true,
	"moreover": true, "overall": true, "truthfully": true, "frankly": true, "sadly": true, "luckily": true,
	"fortunately": true, "unfortunately": true, "today": true, "yesterday": true, "finally": true,
}

// subjectAt reports whether a statement starting at i of s starts a
// clause: at the start, after punctuation that ends one, or after words
// that only introduce it ("Hi,", "and", "now that").
func subjectAt(s string, i int) bool {
	before := strings.TrimSpace(s[:i])
	if before == "" {
		return true
	}
	if r, _ := utf8.DecodeLastRuneInString(before); strings.ContainsRune(",;:!-–—(", r) {
		return true
	}
	words := strings.Fields(strings.ToLower(before))
	last := strings.Trim(words[len(words)-1], `"'`)
	switch last {
	case "and", "but", "so", "as", "since", "because", "although", "though", "while", "also", "now", "plus", "yet", "whereas":
		return true
	case "that":
		return len(words) > 1 && words[len(words)-2] == "now" // "now that I'm retired"
	case "why":
		return len(words) > 1 && (words[len(words)-2] == "that's" || words[len(words)-2] == "is") // "that's why I avoid"
	}
	for _, w := range words {
		if !fillers[strings.Trim(w, `"'.,!`)] {
			return false
		}
	}
	return true
}

// statementStart is where the first statement of s, whose subject is at
// i, begins: a short adverbial phrase ending in a comma ("Due to ethical
// concerns, I avoid ...") is part of it; greetings, fillers and requests
// ("Count to eight for me, I love counting") are not.
func statementStart(s string, i int) int {
	before := strings.TrimSpace(s[:i])
	if !strings.HasSuffix(before, ",") || len(strings.Fields(before)) > 8 || !adverbial.MatchString(before) {
		return i
	}
	return 0
}

// adverbial starts a phrase that qualifies the statement after it.
var adverbial = regexp.MustCompile(`(?i)^(?:due to|because of|owing to|thanks to|since|as a|as an|after|before|during|when|whenever|for|in|on|at|with|without|being|given|despite|although|though|while|most of the time|ever since|unlike|having|growing up|at home|at work|after work|on weekends|these days|nowadays|lately|in general|generally|usually|normally|typically|for health reasons|for ethical reasons|for religious reasons)\b`)

// connector ends text that leads from one statement to another joined to
// it: "I love coffee, but I hate tea" is two facts.
var connector = regexp.MustCompile(`(?i)(?:,\s*(?:and|but|or|yet|while|whereas)?|;|\s+(?:and|but|or|yet|while|whereas)|\s+[-–—])\s*$`)

// changeCue marks a sentence that states a change: what it says is kept
// whole, so the fact carries both what changed and what it is now.
var changeCue = regexp.MustCompile(`(?i)\b(?:now|anymore|any more|no longer|instead|switched|quit|stopped|left|moved|relocated|changed|broke up|split up|divorced|started|these days|again|from now on|gave up|given up|sold|replaced|upgraded|went|gone|became|become)\b`)

// clauseFact writes a clause about the user as a standalone fact, or ""
// when it would not read as one.
func clauseFact(clause string) string {
	clause = strings.TrimSpace(clause)
	clause = strings.TrimRight(clause, ".!,;:-–— ")
	if len(strings.Fields(clause)) < 2 {
		return ""
	}
	return sentence(coordinate(thirdPerson(clause)))
}

// coordinate conjugates the verbs that share the user as subject after
// "and", "but" or "or": "the user avoids X and prefer Y" becomes "... and
// prefers Y".
func coordinate(s string) string {
	if !strings.HasPrefix(s, "the user ") && !strings.Contains(s, " the user ") {
		return s
	}
	words := strings.Fields(s)
	for i := 0; i+1 < len(words); i++ {
		switch strings.ToLower(strings.TrimRight(words[i], ",")) {
		case "and", "but", "or":
		default:
			continue
		}
		j := i + 1
		for j < len(words)-1 && adverbWord(words[j]) {
			j++
		}
		if coordinatedVerbs[strings.ToLower(words[j])] {
			words[j] = conjugate(words[j])
		}
	}
	return strings.Join(words, " ")
}

// asks are how requests to the assistant begin.
var asks = regexp.MustCompile(`(?i)^(?:please\s+|so\s+|also\s+|and\s+|now\s+|ok\s+|okay\s+|then\s+)*(?:tell|suggest|recommend|give|help|show|explain|write|plan|list|find|make|create|describe|compare|convert|rewrite|translate|summari[sz]e|draft|generate|check|fix|review|calculate|name|share|teach|walk me|let me know|remind me|can you|could you|would you|will you|i'd like you to|i want you to|i need you to|i need help|i want to know|i'd like to know|i wonder|i was wondering|i'm wondering|any (?:ideas|suggestions|tips|recommendations|advice)|what about|how about|go on|continue|keep going|try again|do it|again)\b` +
	// Requests in the other languages the learners read.
	`|^(?:por\s+favor,?\s+|bitte,?\s+|s'il\s+te\s+plaît,?\s+)?(?:dame|dime|recomi[ée]ndame|recomienda|sugi[ée]reme|sugiere|ay[úu]dame|expl[íi]came|escr[íi]beme|escribe|hazme|haz|cu[ée]ntame|necesito\s+(?:ideas|una|un)|quiero\s+ideas|gib\s+mir|sag\s+mir|empfiehl|schlag(?:e)?\s+(?:mir\s+)?vor|hilf\s+mir|erklär|schreib|mach\s+mir|ideen\s+für|kannst\s+du|könntest\s+du|donne-moi|dis-moi|recommande-moi|recommande|conseille-moi|conseille|suggère|aide-moi|explique|écris|fais-moi|peux-tu|pourrais-tu|propose-moi|me\s+d[áaê]|d[áa]-me|me\s+diz|diz-me|me\s+recomenda|recomenda|me\s+sugere|sugere|me\s+ajuda|ajuda-me|explica|escreva|escreve|me\s+conta|quero\s+ideias)(?:-(?:me|te|nos|moi|nous|mir|uns))?(?:\s|$|[,.!])`)

// questionStart begins a question typed without its question mark ("whats
// the best time for me to hit the gym", "q me cocino esta noche").
var questionStart = regexp.MustCompile(`(?i)^¿?(?:(?:so|ok|okay|and|also|hey|hi)[\s,]+)?(?:(?:what|where|when|which|who|why|how)(?:s\b|'s\b|\s+(?:is|are|was|were|do|does|did|can|could|should|would|will|to|about|if)\b)|(?:is|are)\s+there\b|(?:can|could)\s+(?:i|we|you)\b|should\s+(?:i|we)\b|do\s+you\b|any\s+(?:good\s+)?(?:ideas?|tips?|suggestions?|recommendations?|advice)\b|(?:qu[ée]|q|c[óo]mo|d[óo]nde|cu[áa]ndo|cu[áa]l)\s+(?:me|te|le|nos|puedo|debo|hago|hacemos|es|son|va|tal)\b|(?:was|wie|wo|wann|welche[rsnm]?)\s+(?:kann|soll|mache|machen|ist|sind|gibt|würde|wäre)\b|(?:que|quoi|où|comment|quand|quel(?:le)?s?)\s+(?:faire|je|on|est|sont|me|te)\b|(?:qu['’])?est-ce\s+(?:que|qu['’])|(?:was|wie|wo|wann|welche[rsnm]?)\s+\p{L}+\s+(?:ich|wir)\b|(?:o\s+que|o\s+q|onde|como|quando|qual)\s+(?:eu|posso|devo|fa[çz]o|é|me|te|vale)\b)`)

// nounAsks are requests said as what is wanted, with no verb ("Gift ideas
// for my wife", "dicas pra minha prova", "Ideen für Sonntag", "un dessert
// pour moi ce soir"): the thing asked for, then whom or what it is for.
var nounAsks = regexp.MustCompile(`(?i)^(?:(?:ok|okay|so|also|and|hey|hi|hola|oi|olá|salut|hallo)[\s,!]+)?(?:(?:some|a\s+few|more|\d+|un(?:a|e|os|as)?|algun(?:a|o)s?|umas?|uns|des|quelques|ein\s+paar|paar)\s+)?(?:(?:quick|easy|simple|good|healthy|cheap|fun|new|rápid[ao]s?|fáciles|fáceis|schnelle|einfache|gute|rapides|simples|bonnes)\s+)?(?:(?:gift|present|recipe|dinner|lunch|breakfast|snack|date|weekend|name|business|book|movie|film|activity|workout|party|travel|trip)\s+)?(?:ideas?|tips|suggestions?|recommendations?|advice|recipes?|options|ideias?|dicas?|sugest(?:ão|ões|oes|ao)|receitas?|ideas|consejos?|sugerencias?|recomendaciones|recetas?|ideen|tipps?|vorschläge?|rezepte?|empfehlungen?|idées?|conseils?|recettes?|propositions?|un\s+(?:dessert|plat|menu|truc|cadeau|film|livre)|une\s+(?:idée|recette|activité|sortie)|algo\s+(?:para|pra|pa)|something\s+(?:to|for))\b(?:\s+(?:for|to|on|about|para|pra|pa|de|do|da|del|für|zum|zur|pour|à)\b|[\s,:]*$)`)

// passingState is a passing state, in the five languages ("I'm exhausted",
// "hoy estoy agotada", "estou mesmo cansada", "bin grad total kaputt",
// "je suis crevé", "I'm at the airport"): it says nothing that stands, so
// a message of it and a request only asks.
var passingState = regexp.MustCompile(`(?i)^(?:(?:so|ugh|man|honestly|well|ok|okay|today|tonight|right\s+now|hoy|ahora|hoje|agora|heute|gerade|grad|jetzt|aujourd'hui|ce\s+soir|bueno|pues|nossa|gente|ach|bon|pfff+|uff+)[\s,!]+)*` +
	`(?:i(?:'m|\s+am)|estoy|ando|estou|tô|to|bin\s+ich|ich\s+bin|bin|je\s+suis|j'suis|jsuis|chuis)\s+` +
	`(?:(?:so|really|super|very|totally|absolutely|kinda|a\s+bit|pretty|just|muy|re|bastante|un\s+poco|mega|mesmo|muito|bem|meio|tão|total|echt|sehr|voll|grad|gerade|ziemlich|trop|vraiment|tellement|hyper|complètement|un\s+peu)\s+)*` +
	`(?:tired|exhausted|knackered|shattered|sleepy|sick|ill|unwell|bored|hungry|starving|stressed|sore|hungover|jet-?lagged|freezing|running\s+late|stuck|at\s+the\s+airport|at\s+work|on\s+the\s+(?:train|bus|way)|in\s+(?:a\s+meeting|traffic)|off\s+sick|` +
	`cansad[oa]|agotad[oa]|enferm[oa]|aburrid[oa]|estresad[oa]|resfriad[oa]|reventad[oa]|hech[oa]\s+polvo|con\s+gripe|en\s+el\s+(?:aeropuerto|tren)|atascad[oa]|` +
	`exaust[oa]|doente|entediad[oa]|estressad[oa]|com\s+sono|cheia?o?\s+de\s+sono|gripad[oa]|no\s+aeroporto|no\s+(?:trem|comboio)|` +
	`müde|kaputt|erschöpft|krank|erkältet|gestresst|fertig|am\s+flughafen|im\s+zug|` +
	`fatigu[ée]e?|crev[ée]e?|épuis[ée]e?|malade|enrhum[ée]e?|stress[ée]e?|naze|à\s+l'aéroport|dans\s+le\s+train|coinc[ée]e?)(?:\s+(?:today|tonight|hoy|hoje|heute|aujourd'hui))?(?P<rest>[^.!?]*)`)

// passingOnly reports whether sentence s only states a passing state (and
// a few words more: "estou mesmo cansada, foi um dia longo").
func passingOnly(s string) bool {
	m := passingState.FindStringSubmatch(s)
	return m != nil && len(strings.Fields(m[passingState.SubexpIndex("rest")])) <= 5
}

// statesInside is a statement inside a sentence that starts as a request
// ("Recipes for my son, he's allergic to eggs"): that sentence still says
// something about someone.
var statesInside = regexp.MustCompile(`(?i)\b(?:i'm|i\s+am|i\s+have|i've|we're|we\s+are|we\s+have|he's|she's|he\s+is|she\s+is|they're|is\s+allergic|soy|estoy|tengo|somos|tenemos|es\s+(?:alérgic|celíac|vegan|vegetarian)|sou|estou|tenho|é\s+(?:alérgic|celíac|vegan|vegetarian)|ich\s+bin|ich\s+habe|wir\s+sind|ist\s+allergisch|je\s+suis|j'ai|nous\s+sommes|il\s+est|elle\s+est|est\s+allergique)\b`)

// askedWithin is a question a sentence goes on to ask after a comma or a
// dash, its mark left off: "my sister is visiting this weekend, where
// should we go for dinner around here".
var askedWithin = regexp.MustCompile(`(?i)[,;–—-]\s*¿?(?:so\s+|and\s+|but\s+)?(?:where|what|how|which|when|who|any\s+(?:ideas|tips|suggestions)|should\s+(?:i|we)|can\s+(?:i|we|you)|could\s+(?:i|we|you)|dónde|qué|cómo|wo|was|wie|où|que|quoi|comment|onde|o\s+que|como)\b`)

// passingThenAsks reports whether sentence s says only something of today
// (a word of the tables' passing) and then asks: it teaches nothing that
// stands.
func passingThenAsks(s string) bool {
	loc := askedWithin.FindStringIndex(s)
	if loc == nil {
		return false
	}
	before := strings.ToLower(s[:loc[0]])
	ws := noteTokens(before)
	return noteWords.passing.in(ws)
}

// wantsMore says more of what a request wants, in the languages read:
// "I want something special", "quiero algo rápido".
var wantsMore = regexp.MustCompile(`(?i)^(?:and\s+|but\s+|so\s+)?(?:i\s+(?:want|need|would\s+like|'d\s+like)\s+(?:something|some|a|an|it|them|ideas|options)\b|(?:quiero|necesito)\s+(?:algo|un|una|ideas)\b|je\s+(?:veux|voudrais)\s+(?:quelque|un|une|des)\b|ich\s+(?:möchte|will|brauche|hätte\s+gern)\s+(?:etwas|was|ein|eine|ideen)\b|(?:quero|preciso\s+de)\s+(?:algo|um|uma|ideias)\b)`)

// smallTalk are whole sentences that say nothing about anyone.
var smallTalk = regexp.MustCompile(`(?i)^(?:(?:hi|hello|hey|thanks|thank you|thanks a lot|many thanks|ok|okay|great|cool|nice|awesome|perfect|got it|sounds good|good|wonderful|excellent|amazing|sure|alright|yes|no|yeah|nope|interesting|wow|lol|haha|good morning|good evening|good night|bye|cheers|that helps|that's helpful|that's great|that's interesting|makes sense)[\s,!.]*)+$`)

// OnlyAsks reports whether a user's message only asks something (questions,
// requests, thanks): it teaches nothing about the user, so its transcript
// is no memory about them.
func OnlyAsks(text string) bool { return OnlyAsksIn(text, false) }

// OnlyAsksIn is OnlyAsks in a conversation that may be framed (Framed):
// what is not the user's own words (a role-play's lines, a text to
// translate) says nothing about them either, so a message that is only
// that, or that and a request, only asks.
func OnlyAsksIn(text string, framed bool) bool {
	if strings.TrimSpace(text) == "" {
		return false
	}
	text = ownWords(fenced.ReplaceAllString(text, "\n"), framed)
	if strings.TrimSpace(text) == "" {
		return true
	}
	n := 0
	asked := false // the sentence before asked something
	for _, s := range splitter.Split(text, -1) {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		n++
		if strings.HasSuffix(s, "?") || notStatement.MatchString(s) || asks.MatchString(s) || smallTalk.MatchString(s) || questionStart.MatchString(s) ||
			nounAsks.MatchString(s) && !statesInside.MatchString(s) || passingOnly(s) || wantsMore.MatchString(s) ||
			asked && len(strings.Fields(s)) <= 3 && !noteWords.self.in(noteTokens(strings.ToLower(s))) || // "¿Qué ceno? Algo rapidito."
			passingThenAsks(s) {
			asked = true
			continue
		}
		return false
	}
	return n > 0
}

// Against reports whether a fact states something the user avoids,
// refuses or dislikes: missed, it does more harm than a missed liking.
// It runs for every fact of every profile read, so it looks for words, not
// a pattern.
func Against(fact string) bool { return hasAny(strings.ToLower(fact), against) }

var against = []string{"n't", " not ", " never ", "dislike", "hate", "detest", "despise", "loathe", "avoid",
	"refuse", "reject", "fear", "stay away", "steer clear", "no longer", "allerg", "phobia", "aversion", "can't stand"}

// Retracts reports whether a health or diet fact says what the user no
// longer has or is not ("User is not allergic to nuts."): it replaces the
// constraint it retracts, and is not one itself.
func Retracts(fact string) bool { return retraction.MatchString(fact) }

var retraction = regexp.MustCompile(`(?i)\b(?:not|no longer|isn't|doesn't have|does not have)\s+(?:(?:actually|really|even|a|an|any)\s+)*(?:allergic|intolerant|allerg|[\p{L}-]+\s+allerg|` + diets + `)`)

// Liking reports whether a fact only says what the user likes or is
// interested in, which says less about what would help them than a stated
// preference does.
func Liking(fact string) bool { return hasAny(strings.ToLower(fact), likings) }

var likings = []string{" loves ", " likes ", " enjoys ", " adores ", " appreciates ", " tries ", " enjoyed ",
	" loved ", " is interested", " is really interested", " is particularly interested", " is very interested",
	" is into ", " is really into ", " is keen", " is fond", " is passionate", " is fascinated", " is obsessed",
	" is excited", " is curious", " is a fan", " is a big fan", " is a huge fan", " is definitely interested",
	" is also interested", " is especially interested"}

func hasAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
