package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Whose words (the first of a turn's three questions, DESIGN.md): only what
// the user says about themselves teaches facts about them. Material they
// are working on (text to translate, proofread, rewrite, summarise or
// answer; a pasted letter or email), quotations, and stories, role-play and
// games are someone else's words, or nobody's: learned as the user's, they
// would ride with every later request as the user's home, allergy or name.
// ownWords cuts them from a message before anything is read in it; a frame
// (role-play, a story the user is in) opened in one message holds for the
// rest of the conversation (Framed) until the user steps out of it. The
// transcript keeps every word.
//
// The cues are data, one table per language read together (a message may
// mix them): what starts a task on material, what opens, steps out of and
// ends a frame, and how a letter begins and ends.

var (
	// taskStart is a request to work on material: it leads the sentence
	// (after a politeness) and names the work.
	taskStart = regexp.MustCompile(`(?i)^(?:(?:hi|hey|hello|ok|okay|so|please|pls|now|and|also)[,!]?\s+)*(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|(?:i\s+(?:need|want|would\s+like)\s+you\s+to|i'?d\s+like\s+you\s+to|help\s+me(?:\s+to)?|please)\s+)?` +
		// Work that always has material.
		`(?:(?:translate|proof-?read|re-?write|rephrase|paraphrase|reword|summari[sz]e|sum\s+up|tl;?dr|quote\s+of\s+the\s+day|respond\s+to|reply\s+to|draft\s+(?:a\s+)?(?:reply|response|answer)\s+to|continue|finish|complete|expand(?:\s+on)?|extend)\b` +
		// Work that has material when it names it.
		`|(?:correct|edit|polish|improve|shorten|simplify|reformat|format|review|critique|analy[sz]e|grade|check|fix|answer|explain|turn|make)\s+(?:(?:the|my|this|these|that)\s+)?(?:this|these|following|grammar|spelling|typos|text|email|e-mail|letter|message|essay|paragraph|draft|post|note|bio|wording|sentence|sentences)\b` +
		// Spanish, German, French, Portuguese.
		`|(?:(?:trad[úu]ce|corr[íi]ge|rev[íi]sa|res[úu]me|reescr[íi]be)(?:me|lo|la|melo|mela|nos)?|traduzca|traducir|corregir|responde\s+a|contesta\s+a` +
		`|übersetze?n?|korrigiere|korrekturlesen|fasse\s+(?:das|den|die|diesen|diese)|schreib(?:e)?\s+(?:das|den|die|diesen|diese)\s+um|antworte\s+auf` +
		`|traduis|traduire|traduisez|corrige[rz]?|relis|résume[rz]?|reformule[rz]?|réécris|réponds?\s+à` +
		`|traduza|traduzir|corrija|revise|resuma|reescreva|responda\s+(?:a|ao|à)|traduz|traduzi` +
		// Asked in so many words: "ayúdame a contestar", "tu peux relire".
		`|(?:ay[úu]dame\s+a|me\s+ayudas\s+a|puedes|podr[íi]as)\s+(?:contestar|responder|traducir|revisar|corregir|resumir|reescribir)` +
		`|(?:tu\s+peux|peux-tu|pourrais-tu|tu\s+pourrais|aide-moi\s+à)\s+(?:me\s+)?(?:relire|résumer|traduire|corriger|reformuler|répondre)` +
		`|(?:me\s+ajuda\s+a|ajuda-me\s+a|pode|podes|você\s+pode|dá\s+pra)\s+(?:me\s+)?(?:responder|traduzir|revisar|corrigir|resumir)` +
		`|(?:kannst\s+du|könntest\s+du|hilf\s+mir)\s+(?:\S+\s+){0,7}?(?:übersetzen|korrigieren|zusammenfassen|umschreiben|beantworten|korrekturlesen))\b)`)

	// hereIs presents pasted material by what it is: "Here's my friend's
	// bio:".
	hereIs = regexp.MustCompile(`(?i)^(?:(?:here(?:'s|\s+is|\s+are)|this\s+is|below\s+is|aquí\s+(?:está|tienes)|hier\s+ist|voici|aqui\s+está)\s+(?:[\p{L}'’]+\s+){0,3}(?:text|email|e-mail|mail|letter|message|note|paragraph|draft|essay|story|poem|bio|profile|review|post|cover\s+letter|speech|quote|chorus|verse|lyrics|song|caption|tweet|cv|resume|résumé|announcement|listing|texto|correo|carta|mensaje|letra|canción|estrofa|brief|nachricht|liedtext|strophe|refrain|lettre|courriel|message|texte|paroles|couplet|chanson|mensagem|carta|canção|refrão)\b[^:\n]*[:?]|quote\s+of\s+the\s+day\s*:)`)

	// letterOpen and letterClose are the salutation and sign-off lines of a
	// pasted letter or email; headers are its header lines.
	letterOpen  = regexp.MustCompile(`(?i)^(?:dear|hi|hello|hey|greetings|to\s+whom\s+it\s+may\s+concern|hola|querid[oa]s?|estimad[oa]s?|hallo|liebe[rs]?|sehr\s+geehrte[rs]?|bonjour|salut|cher|chère|madame|monsieur|olá|oi|prezad[oa]s?|car[oa]s?)\b[^.!?\n]{0,40}[,:!]?\s*$`)
	letterClose = regexp.MustCompile(`(?i)^(?:best|best\s+wishes|best\s+regards|kind\s+regards|warm\s+regards|regards|cheers|thanks|thank\s+you|many\s+thanks|sincerely|yours(?:\s+(?:truly|sincerely|faithfully))?|love|xoxo|all\s+the\s+best|talk\s+soon|saludos|un\s+saludo|atentamente|gracias|besos|abrazos|viele\s+grüße|liebe\s+grüße|mit\s+freundlichen\s+grüßen|beste\s+grüße|lg|vg|cordialement|bien\s+à\s+vous|bises|amitiés|merci|abraços|atenciosamente|beijos|obrigad[oa])\b[^.!?\n]{0,30}[,!.]?\s*$`)
	headers     = regexp.MustCompile(`(?im)^(?:from|to|cc|subject|date|sent|de|para|asunto|fecha|von|an|betreff|datum|objet|à|assunto|data)\s*:`)

	// frameOpen sets up a story, game or role-play the user takes part in;
	// frameOut steps out of one for a message (what follows is the user
	// again); frameEnd ends it.
	frameOpen = regexp.MustCompile(`(?i)(?:\blet'?s\s+play\s+(?:a|an|some)\s+(?:[\p{L}-]+\s+){0,3}(?:game|story|scene|adventure|rpg)\b|\b(?:interactive\s+fiction|text\s+adventure|choose\s+your\s+own\s+adventure)\b|\byou\s+narrate\b|\blet'?s\s+(?:do\s+|have\s+|try\s+)?(?:a\s+|an\s+)?(?:[\p{L}-]+\s+)?(?:role-?play|rp|play\s+(?:a\s+)?(?:game|pretend|role)|pretend)|\brole-?play(?:ing)?\s+(?:with\s+me|as|where|game)|\bpretend\s+(?:to\s+be|you(?:'re|\s+are)|that|i(?:'m|\s+am))|\bact\s+as\s+(?:a|an|my|the)\b|\bplay\s+the\s+(?:role|part)\s+of\b|\byou(?:'re|\s+are)\s+(?:a|an|the)\s+[\p{L} -]{1,30}\s+and\s+i(?:'m|\s+am|'ll\s+be|\s+will\s+be)\b|\bwrite\s+(?:me\s+)?(?:a|an)\s+(?:story|tale|poem|scene|dialogue|script|fanfic)\s+(?:where|in\s+which|about\s+me|starring\s+me)|\bin\s+this\s+(?:story|game|role-?play|scenario)\b|\bstay\s+in\s+character\b|\byou(?:'re|\s+are)\s+now\s+(?:a|an|the|my)\b|\b(?:can|could|will)\s+you\s+be\s+(?:my|a|an|the)\s+[\p{L} -]{1,30}(?:\s+for\s+(?:a|this|our)\s+(?:game|story|scene|campaign|role-?play))\b|\bi(?:'ll|\s+will)\s+be\s+(?:the|a|an)\s+[\p{L} -]{1,30}(?:,|\s+and)\s+you(?:'ll|\s+will)?\s+be\b|\bbe\s+my\s+(?:dungeon\s+master|dm|gm|game\s+master|narrator)\b|\blet'?s\s+(?:do\s+some\s+)?improv\b|\b(?:continue|resume)\s+(?:the|our)\s+(?:story|role-?play|rp|campaign|adventure|scene)\b|\bi(?:'m|\s+am)\s+writing\s+(?:a|an|my)\s+(?:[\p{L}-]+\s+){0,2}(?:novel|story|book|screenplay|script|fanfic|memoir\s+in\s+character)\b` +
		`|\bjuguemos\s+a\b|\b(?:jugar|hacer)\s+(?:a\s+)?(?:un\s+)?(?:rol|role-?play|juego\s+de\s+rol)\b|\b(?:hagamos|haz|hac[eé])\s+de\s+cuenta\s+que\b|\bhagamos\s+un\s+(?:juego\s+de\s+)?rol\b|\bjuego\s+de\s+rol\b|\bfinge\s+que\b|\bimagina\s+que\s+(?:eres|somos|soy)\b|\btú\s+eres\s+(?:un|una|el|la)\s+[\p{L} -]{1,30}\s+y\s+yo\s+(?:soy|seré)\b|\bescribe(?:me)?\s+(?:una|un)\s+(?:historia|cuento)\b` +
		`|\brollenspiel\b|\b(?:spielen\s+wir|lass\s+uns)\s+(?:eine?\s+)?(?:szene|spiel|rollenspiel)\b|\blass\s+uns\s+(?:so\s+tun|spielen)\b|\btu\s+so,?\s+als\b|\bstell\s+dir\s+vor,?\s+(?:du\s+bist|wir|ich\s+bin)\b|\bdu\s+bist\s+(?:ein|eine|der|die)\s+[\p{L} -]{1,30}\s+und\s+ich\s+bin\b|\bschreib(?:e)?\s+(?:mir\s+)?eine\s+geschichte\b` +
		`|\bjouons\s+(?:à|un\s+jeu)\b|\bjeu\s+de\s+rôle\b|\bfais\s+semblant\b|\bimagine\s+que\s+(?:tu\s+es|nous|je\s+suis)\b|\btu\s+es\s+(?:un|une|le|la)\s+[\p{L} -]{1,30}\s+et\s+je\s+suis\b|\bécris(?:-moi)?\s+une\s+histoire\b` +
		`|\b(?:vamos|bora)\s+(?:fazer\s+um\s+)?(?:role-?play|rpg|brincar\s+de|fingir)\b|\bjogo\s+de\s+(?:rpg|papéis)\b|\bfinja\s+que\b|\bimagine\s+que\s+(?:você\s+é|somos|eu\s+sou)\b|\bvocê\s+é\s+(?:um|uma|o|a)\s+[\p{L} -]{1,30}\s+e\s+eu\s+sou\b|\bescreva\s+uma\s+história\b)`)
	frameOut = regexp.MustCompile(`(?i)(?:\bout\s+of\s+character\b|\(?\booc\b|\(\(|\[\s*ooc\s*\]|\bstepping\s+out\s+of\s+(?:the\s+)?(?:story|game|character|rp|role-?play)\b|\b(?:pausing|pause)\s+(?:the\s+)?(?:story|game|rp|role-?play)\b|\breal\s+me\s+(?:here|now|for\s+a\s+sec)\b|\bnot\s+part\s+of\s+the\s+(?:story|game|rp)\b|\bfuera\s+de\s+rol\b|\bpausa\s+(?:el\s+)?(?:rol|juego|historia)\b|\ben\s+vrai\b|\bhors[- ]jeu\b|\bfora\s+do\s+(?:rp|jogo)\b|\bkurz\s+raus(?:\s+aus\s+der\s+rolle)?|\bin\s+real\s+life\b|\birl\b|\bseriously(?:,|\s+though)|\bfor\s+real(?:,|\s+though)|\bbreaking\s+character\b|\bfuera\s+del?\s+(?:personaje|rol|juego)\b|\bfora\s+do\s+(?:papel|rp)\b|\bhors\s+du\s+(?:jeu|rôle)\b|\baußerhalb\s+des\s+spiels\b|\bout\s+of\s+the\s+(?:game|role-?play)\b|\ben\s+la\s+vida\s+real\b|\bhablando\s+en\s+serio\b|\baußerhalb\s+der\s+rolle\b|\bim\s+echten\s+leben\b|\bim\s+ernst\b|\bhors\s+(?:personnage|rp|jeu)\b|\bdans\s+la\s+vraie\s+vie\b|\bsérieusement\b|\bfora\s+do\s+personagem\b|\bna\s+vida\s+real\b|\bfalando\s+sério\b|\bback\s+to\s+real\s+life\b|\breal\s+talk\b|\bjok(?:es|ing)\s+aside\b|\bon\s+a\s+serious\s+note\b|\bin\s+reality\b|\bthe\s+real\s+me\b|\boutside\s+the\s+(?:game|story|role-?play)\b|\bya\s+en\s+serio\b|\bfuera\s+de\s+broma\b|\bbromas\s+aparte\b|\bvolviendo\s+a\s+la\s+realidad\b|\bsaliendo\s+del\s+personaje\b|\bfora\s+da\s+brincadeira\b|\bbrincadeiras?\s+à\s+parte\b|\bagora\s+a\s+sério\b|\bna\s+real\b|\bsaindo\s+do\s+personagem\b|\bvoltando\s+à\s+realidade\b|\bspaß\s+beiseite\b|\bmal\s+ernsthaft\b|\bin\s+wirklichkeit\b|\bin\s+echt\b|\bzurück\s+zur\s+realität\b|\bblague\s+à\s+part\b|\btrêve\s+de\s+plaisanteries\b|\bplus\s+sérieusement\b|\bpour\s+de\s+vrai\b|\ben\s+réalité\b|\bretour\s+à\s+la\s+réalité\b)[\s:,)-]*`)
	frameEnd = regexp.MustCompile(`(?i)(?:\bend\s+(?:of\s+)?(?:the\s+)?scene\b|\blet'?s\s+stop\s+(?:here|there)\b|\bfin\s+de\s+la\s+partida\b|\b(?:let'?s\s+)?(?:stop|end|quit|exit|drop|finish)\s+(?:the|this|our)\s+(?:role-?play|game|story|pretending)\b|\b(?:ok(?:ay)?,?\s+)?enough\s+role-?play\b|\bback\s+to\s+reality\b|\bgame\s+over\b|\bfin\s+del\s+(?:juego|rol)\b|\bende\s+des\s+rollenspiels\b|\bfin\s+du\s+(?:jeu|rp)\b|\bfim\s+do\s+(?:jogo|roleplay)\b|\bback\s+to\s+real\s+life\b|\b(?:that'?s|ok(?:ay)?,?)\s+enough\s+(?:of\s+)?(?:the\s+)?(?:story|game|role-?play)\b|\bse\s+acabó\s+el\s+(?:juego|rol)\b|\bfin\s+de\s+la\s+historia\b|\bacabou\s+o\s+(?:jogo|rp)\b|\bfim\s+da\s+história\b|\bspiel\s+vorbei\b|\bschluss\s+mit\s+dem\s+(?:spiel|rollenspiel)\b|\bfin\s+de\s+l['’]histoire\b|\bon\s+arrête\s+(?:le\s+jeu|là)\b)`)
)

// maxFrameScan bounds the earlier messages Framed reads, and of each the
// bytes: a frame is set up near where it is played.
const (
	maxFrameScan  = 40
	maxFrameBytes = 2000
)

// Framed reports whether a conversation whose earlier user messages are
// msgs (oldest first) is inside a role-play or story at its next message:
// one of them opened a frame, and none since ended it.
func Framed(msgs []string) bool {
	if len(msgs) > maxFrameScan {
		msgs = msgs[len(msgs)-maxFrameScan:]
	}
	framed := false
	for _, m := range msgs {
		if len(m) > maxFrameBytes {
			m = m[:maxFrameBytes]
		}
		switch {
		case framed && holdsAny(m, frameEndWords) && frameEnd.MatchString(m):
			framed = false
		case !framed && action.MatchString(m):
			framed = true // "*sits at the bar*": a line played, not said
		case !framed:
			framed = frameAt(m) >= 0
		}
	}
	return framed
}

// action opens a line played in a role-play: "*sits at the bar* ...", or
// a line of dialogue as Spanish, French and Portuguese write it ("—Mire,
// soy viudo").
var action = regexp.MustCompile(`^\s*(?:\*[^*\n]{2,80}\*|[—–]\s*\p{L})`)

// frameAt is where a frame opens in text (frameOpen), -1 for none. The
// pattern is long and a pasted text is long: it reads only the sentences
// that hold one of the words every opener holds (mayFrame).
func frameAt(text string) int {
	if !mayFrame(text) {
		return -1
	}
	lower := strings.ToLower(text)
	if len(lower) != len(text) {
		lower = "" // a letter whose cases differ in length: each sentence folded alone
	}
	for start := 0; start < len(text); {
		end := start + sentenceEnd(text[start:])
		if end <= start {
			break
		}
		may := false
		if lower != "" {
			may = holdsAny(lower[start:end], frameWords)
		} else {
			may = mayFrame(text[start:end])
		}
		if s := text[start:end]; may {
			if loc := frameOpen.FindStringIndex(s); loc != nil {
				return start + loc[0]
			}
		}
		start = end
	}
	return -1
}

// mayFrame is a cheap look for a word every frame opener holds, before
// the pattern is run: most messages hold none. It runs for every earlier
// message of every request learned from, so it allocates nothing.
func mayFrame(m string) bool { return holdsAny(m, frameWords) }

// holdsAny reports whether m holds one of words (lower case), whatever
// the case of m's ASCII letters.
func holdsAny(m string, words []string) bool {
	lower := m
	for i := 0; i < len(m); i++ {
		if c := m[i]; 'A' <= c && c <= 'Z' {
			lower = strings.ToLower(m) // once, then each word is one search
			break
		}
	}
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds sub (lower case ASCII), whatever
// the case of s's ASCII letters.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for ; j < len(sub); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

var (
	frameWords = []string{"let's", "lets ", "role", "interactive fiction", "text adventure", "own adventure", "you narrate", "pretend", "you're now", "you are now", "you be", "be my", "improv", "continue the", "continue our", "resume", "act as", "play the", "you're a", "you are a",
		"you're the", "you are the", "write me a", "write a ", "in this ", "stay in", "writing a", "writing my", "juguemos", "hagamos", "haz de", "jugar a", "un rol", "szene", "spielen wir", "bora f", "juego de rol", "finge", "imagina", "tú eres", "escribe",
		"rollenspiel", "lass uns", "tu so", "stell dir", "du bist", "schreib", "jouons", "jeu de r", "semblant",
		"imagine", "tu es", "écris", "vamos", "jogo de", "finja", "você é", "escreva"}
	frameEndWords = []string{"stop", "end", "quit", "exit", "drop", "finish", "enough", "back to", "over", "fin ", "ende", "fim "}
)

// ownWords is text with what is not the user speaking about themselves
// cut out: material a task works on, pasted letters and quoted lines, and
// what is said inside a frame (the whole message when the conversation is
// framed, but for what follows a step out of it).
func ownWords(text string, framed bool) string {
	if framed || action.MatchString(text) {
		return steppedOut(text)
	}
	if at := frameAt(text); at >= 0 {
		// A frame opened here: what comes before is the user's.
		text = text[:sentenceStartBefore(text, at)]
	}
	text = cutLetters(text)
	if strings.ContainsAny(text, "\"“«'‘„‚") {
		text = cutQuoted(text)
	}
	return cutMaterial(text)
}

// taskHolds, hereHolds and theirHolds are what a sentence holds for
// taskStart, hereIs or theirText to match (prefilter.go): a message is
// read a sentence at a time, and most hold no request at all.
var (
	taskHolds  = mustHold(taskStart.String())
	hereHolds  = mustHold(hereIs.String())
	theirHolds = mustHold(theirText.String())
)

// quotedAfter is a quotation a colon introduces ('Saw this on twitter:
// "I'm moving to Mars"'), or that follows a sentence of its own, as a text
// pasted after the request to translate it does ("can you translate it?
// 'Sehr geehrte Frau Sharma, ich wohne in Köln ...'"). selfSaid is how the user introduces their own
// words, which stay theirs (speech.go).
var (
	quotedAfter = regexp.MustCompile(`(?:[:?!]\s*|\.\s+|(?:^|\n)[\s\p{So}\p{Sm}•*]*)(?:["“«„][^"”»“\n]{8,}(?:["”»“]|$)|['‘][^\n]{8,}?['’](?:\s|[.,!?]|$))`)
	selfSaid    = regexp.MustCompile(`(?i)(?:\bi\s+(?:just\s+|then\s+)?(?:said|say|told|tell|wrote|write|replied|answered|texted|messaged)\b[^:]{0,30}|\b(?:note\s+to\s+(?:self|myself)|reminder|for\s+the\s+record|my\s+(?:note|status|bio|update|motto))\s*)$`)
)

// cutQuoted cuts the quotations a colon introduces or that stand on lines
// of their own, but for the user's own words reported, and for a message
// that is one quotation and nothing else (the user quoting themselves:
// speech.go).
func cutQuoted(text string) string {
	if _, whole := wholeQuote(text); whole {
		return text
	}
	if !quoteOpensAfterBreak(text) {
		return text // the quotes are apostrophes or inside sentences
	}
	locs := quotedAfter.FindAllStringIndex(text, -1)
	if locs == nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		lineStart := strings.LastIndexByte(text[:loc[0]], '\n') + 1
		if selfSaid.MatchString(text[max(lineStart, loc[0]-60):loc[0]]) || speakerLabel(text[lineStart:loc[0]]) {
			continue // the user's own words; a speaker's line goes whole (speech.go)
		}
		b.WriteString(text[last:loc[0]])
		b.WriteString(".")
		last = loc[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// quoteOpensAfterBreak reports whether a quotation mark in text follows a
// colon, a sentence's end or a line's start (spaces between): the cheap
// first look before quotedAfter, which apostrophes in most texts would
// otherwise send through a regular expression.
func quoteOpensAfterBreak(text string) bool {
	for i, r := range text {
		if !strings.ContainsRune("\"“«„'‘", r) {
			continue
		}
		j := i
		for j > 0 {
			r, n := utf8.DecodeLastRuneInString(text[:j])
			if r != ' ' && r != '\t' && !unicode.In(r, unicode.So, unicode.Sm) && r != '•' && r != '*' {
				break
			}
			j -= n // spaces, and the stars or bullets a pasted review or list puts first
		}
		if j == 0 || strings.IndexByte(":?!.\n", text[j-1]) >= 0 {
			return true
		}
	}
	return false
}

// steppedOut is what a message said inside a frame says out of it: the
// words after a step out ("Out of character: I'm vegan"), to the end of
// its parenthesis or its line.
func steppedOut(text string) string {
	if !mayStepOut(text) {
		return ""
	}
	var b strings.Builder
	if loc := frameEnd.FindStringIndex(text); loc != nil {
		// "Okay, enough of the story. I'm vegan in real life.": what
		// follows the frame's end is the user's, to the message's end.
		b.WriteString(text[loc[1]:])
		b.WriteString("\n")
		return b.String()
	}
	for _, loc := range frameOut.FindAllStringIndex(text, -1) {
		rest := text[loc[1]:]
		open := strings.Contains(text[max(0, loc[0]-1):loc[1]], "(")
		end := len(rest)
		if open {
			if i := strings.IndexByte(rest, ')'); i >= 0 {
				end = i
			}
		} else if i := strings.IndexByte(rest, '\n'); i >= 0 {
			end = i
		}
		if back := frameBack.FindStringIndex(rest[:end]); back != nil {
			end = back[0] // "ok back in: I'm passionate about ..." is played again
		}
		b.WriteString(rest[:end])
		b.WriteString("\n")
	}
	return b.String()
}

// frameBack goes back into the frame a step out left: what follows is
// played again.
var frameBack = regexp.MustCompile(`(?i)\b(?:(?:ok(?:ay)?|anyway|right),?\s+back(?:\s+in(?:\s+character)?|\s+to\s+it)?\b|back\s+(?:in(?:to)?\s+(?:character|the\s+(?:game|story|scene|role-?play))|to\s+the\s+(?:game|story|scene|role-?play))\b|resuming\b|zurück\s+(?:ins|zum)\s+(?:spiel|rollenspiel)\b|weiter\s+im\s+(?:spiel|text)\b|(?:de\s+vuelta|volviendo|volvamos)\s+al\s+(?:juego|rol|personaje)\b|on\s+reprend\b|retour\s+(?:au\s+jeu|dans\s+le\s+r[ôo]le)\b|(?:voltando|de\s+volta)\s+ao\s+(?:jogo|personagem|rp)\b)|\s\*[^*\n]{2,80}\*`)

// mayStepOut is a cheap look for a word every step out of a frame holds.
func mayStepOut(m string) bool { return holdsAny(m, stepOutWords) }

var stepOutWords = []string{"character", "ooc", "real", "irl", "serious", "personaje", "vida", "serio", "rolle", "del rol", "del juego", "du jeu", "des spiels", "do papel", "of the game",
	"leben", "ernst", "hors", "vraie", "sérieu", "personagem", "sério", "((", "stepping out", "paus", "part of the",
	"de rol", "en vrai", "do rp", "do jogo", "raus", "aside", "aparte", "beiseite", "à part", "brincadeira", "outside",
	"wirklichkeit", "echt", "plaisanteries", "réalité", "realidad", "realidade", "broma", "enough", "over", "vorbei",
	"acabó", "acabou", "arrête", "fin ", "fim ", "schluss"}

// sentenceStartBefore is where the sentence holding text[i] starts.
func sentenceStartBefore(text string, i int) int {
	for j := i - 1; j > 0; j-- {
		switch text[j] {
		case '.', '!', '?', '\n':
			return j + 1
		}
	}
	return 0
}

// cutLetters cuts a pasted letter or email: from its header lines or
// salutation line to the name under its sign-off.
func cutLetters(text string) string {
	if !strings.Contains(text, "\n") {
		return text
	}
	lines := strings.Split(text, "\n")
	start, end := -1, -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case start < 0 && (headers.MatchString(t) || letterOpen.MatchString(t) && i+1 < len(lines)):
			start = i
		case start >= 0 && letterClose.MatchString(t):
			end = i + 1
			// The name under the sign-off, on a short line of its own.
			if end < len(lines) && len(strings.Fields(lines[end])) <= 3 && !strings.ContainsAny(lines[end], ".?!:") {
				end++
			}
		}
	}
	if start < 0 || end < 0 {
		return text
	}
	return strings.Join(append(append([]string(nil), lines[:start]...), lines[end:]...), "\n")
}

// cutMaterial cuts what a task works on, and quoted lines: a request to
// translate, proofread, summarise or answer something, or text presented as
// pasted ("Here's my friend's bio:"), is followed by its material (after a
// colon, in quotes, or on the lines after it) or, asked last of something
// ("Can you proofread that?"), follows it.
func cutMaterial(text string) string {
	lines := strings.Split(text, "\n")
	var kept []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(strings.TrimSpace(line), ">") {
			continue // a quoted line
		}
		at, end := taskIn(line)
		if at < 0 {
			kept = append(kept, line)
			continue
		}
		// What leads up to the task on its line is the user's; the task
		// itself (its quotes included) and its material are not.
		kept = append(kept, line[:at])
		task := line[at:end]
		if strings.ContainsAny(task, ":\"“") || strings.TrimSpace(line[end:]+strings.Join(lines[i+1:], "")) != "" {
			break // the material follows, to the end
		}
		if refersBack.MatchString(task) {
			return "" // asked last of what came before: all of it was the material
		}
		break // a request that names no material: only it goes
	}
	return strings.Join(kept, "\n")
}

// theirText presents what someone else wrote, or asked the user to look
// over: "Here's what my daughter wrote for her school bio, can you make
// it sound better?", "My friend asked me to check her dating profile:".
// What follows is theirs.
var theirText = regexp.MustCompile(`(?i)^(?:-+\s*)?(?:forwarded\s+message|begin\s+forwarded\s+message|fwd|mensaje\s+reenviado|weitergeleitete\s+nachricht|message\s+transf[ée]r[ée]|mensagem\s+encaminhada)\b[^\n]{0,20}?(?::|-+\s*$|$)` +
	`|^(?:(?:here(?:'s|\s+is)|this\s+is|below\s+is|look\s+at)\s+what\s+(?:[\p{L}'’-]+\s+){1,4}(?:wrote|said|sent|posted|texted|put|has\s+written)\b[^:\n?]*[:?.]` +
	`|(?:[\p{L}'’-]+\s+){1,3}asked\s+me\s+to\s+(?:check|read|look\s+(?:at|over)|proofread|edit|improve|review|go\s+over|fix|rewrite|polish)\b[^:\n]*:` +
	`|(?:esto\s+es\s+lo\s+que|aquí\s+está\s+lo\s+que|mira\s+lo\s+que)\s+(?:[\p{L}'’-]+\s+){1,4}(?:escribió|dijo|mandó|envió|puso|publicó)\b[^:\n?]*[:?.]` +
	`|(?:[\p{L}'’-]+\s+){1,3}me\s+(?:pidió|ha\s+pedido)\s+que\s+(?:revise|revisara|mire|mirara|corrija|corrigiera|lea|leyera)\b[^:\n]*:` +
	`|(?:das\s+hier\s+hat|hier\s+ist,?\s+was|schau,?\s+was)\s+(?:[\p{L}'’-]+\s+){1,4}(?:geschrieben|gesagt|geschickt|gepostet)\b[^:\n?]*[:?.]` +
	`|(?:[\p{L}'’-]+\s+){1,3}hat\s+mich\s+gebeten,?\s+(?:\S+\s+){0,5}(?:zu\s+)?(?:lesen|prüfen|korrigieren|checken|anzuschauen|durchzulesen)\b[^:\n]*:` +
	`|(?:voici|voilà)\s+ce\s+que\s+(?:[\p{L}'’-]+\s+){1,4}(?:a\s+écrit|a\s+dit|a\s+envoyé|a\s+posté)\b[^:\n?]*[:?.]` +
	`|(?:[\p{L}'’-]+\s+){1,3}m'a\s+demandé\s+de\s+(?:relire|vérifier|corriger|regarder|lire)\b[^:\n]*:` +
	`|(?:isso|isto|olha|aqui\s+está)\s+(?:é\s+|foi\s+)?o\s+que\s+(?:[\p{L}'’-]+\s+){1,4}(?:escreveu|disse|mandou|enviou|postou)\b[^:\n?]*[:?.]` +
	`|(?:[\p{L}'’-]+\s+){1,3}me\s+pediu\s+(?:pra|para)\s+(?:revisar|ler|corrigir|olhar|dar\s+uma\s+olhada)\b[^:\n]*:)`)

// refersBack is how a request asked last points at its material: "Can
// you proofread that?", "Translate the above".
var refersBack = regexp.MustCompile(`(?i)\b(?:this|that|these|it|the\s+above|above|the\s+text|my\s+text|esto|eso|esta|este|das|dies|diesen|diese|ça|cela|ceci|ce\s+texte|isso|isto|este\s+texto)\b`)

// taskIn finds the sentence of line that asks for work on material:
// where it starts and ends (-1, -1 for none).
func taskIn(line string) (at, end int) {
	for start := 0; start < len(line); {
		s := strings.TrimLeft(line[start:], " \t\"'“")
		off := start + len(line[start:]) - len(s)
		n := sentenceEnd(s)
		folded := fold(s[:n])
		if taskHolds.heldBy(folded) && taskStart.MatchString(s[:n]) || hereHolds.heldBy(folded) && hereIs.MatchString(s[:n]) ||
			theirHolds.heldBy(folded) && theirText.MatchString(s[:n]) {
			return off, off + n
		}
		if n >= len(s) {
			break
		}
		start = off + n
	}
	return -1, -1
}

// sentenceEnd is the end of the first sentence of s (after its mark), or
// of s; a colon ends it too, what follows being its material.
func sentenceEnd(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			return i + 1
		case '.', '!', '?':
			if i+1 == len(s) || s[i+1] == ' ' {
				return i + 1
			}
		}
	}
	return len(s)
}
