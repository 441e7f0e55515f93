package extract

import (
	"regexp"
	"strings"
)

// Someone else's words in a user's message are not statements about the
// user: "My friend said: I'm allergic to shellfish", a pasted exchange
// ("Customer: I am allergic to latex"), a line of a story ("the narrator
// says "I live in Tokyo"") or a character's. Taken as the user's, they ride
// in every later request as the user's allergy, home or diet, so they are
// cut out before the rules read the message. (The transcript keeps them.)

var (
	// reporting ends words that introduce someone's speech; what follows a
	// colon or an opening quote is theirs. Without either ("my doctor told
	// me I'm pre-diabetic") the words are the user's own report.
	reporting = `\b(?:said|says|say|saying|wrote|writes|write|asked|asks|replied|replies|answered|answers|told\s+(?:me|us|him|her|them)|tells\s+(?:me|us|him|her|them)|texted|texts|messaged|emailed|posted|tweeted|goes|went|exclaimed|yelled|shouted|claims|claimed|insists|insisted|added|adds|explained|explains|reads|read)`
	// reportedSpeech is such speech: a quote up to where it closes, or
	// after a colon the rest of the line.
	reportedSpeech = regexp.MustCompile(`(?i)` + reporting + `(?:\s+(?:to\s+)?(?:me|us|him|her|them))?\s*(?:,\s*)?(?:["“][^"”\n]*(?:["”]|$)|:[^\n]*)`)
	// selfReport ends what leads up to the user reporting their own words.
	selfReport = regexp.MustCompile(`(?i)\bi(?:\s+(?:just|once|always|then|had|have|'ve|would|'d))?\s*$`)
	// speaker is a label that starts a line of a pasted exchange or script
	// and names someone other than the user: "Customer:", "Dr. Lee:", "Q:".
	// ("Update:", "Diet:" or "Me:" introduce the user's own words.)
	speaker = regexp.MustCompile(`(?im)^[ \t]*(?:(?:the|my|our|his|her|their|a)\s+)?(?:customer|client|patient|caller|guest|visitor|interviewer|interviewee|candidate|applicant|student|teacher|doctor|dr\.?(?:\s+\p{L}+)?|nurse|agent|support|rep|representative|assistant|bot|ai|chatgpt|gpt|claude|character|narrator|hero|heroine|villain|protagonist|he|she|they|him|her|mom|mum|dad|mother|father|wife|husband|partner|boyfriend|girlfriend|son|daughter|brother|sister|friend|boss|colleague|co-?worker|manager|q|a|person|speaker|player|npc|mr\.?\s+\p{L}+|mrs\.?\s+\p{L}+|ms\.?\s+\p{L}+)(?:\s+[\dA-Z]|\d)?[ \t]*:[^\n]*`)
	// fiction starts a sentence said within a story, game or role-play.
	fiction = regexp.MustCompile(`(?i)^(?:(?:ok|okay|so|now|and|alright)[,\s]+)?(?:(?:in|for|within)\s+(?:this|the|my|our|a|your)\s+(?:[\p{L}&-]+\s+)?(?:story|stories|game|novel|book|script|screenplay|scene|scenario|role-?play|campaign|fiction|fanfic|dream|play|universe|world|simulation)\b|(?:as|playing)\s+(?:my|the|a|your)\s+character\b|(?:my|our|the)\s+character\b|let'?s\s+(?:say|pretend|imagine|role-?play|play)\b|role-?play(?:ing)?\b|pretend(?:ing)?\b|in\s+character\b)`)
)

// othersWords cuts from text the words that are someone else's: speech
// reported with a colon or in quotes, and the lines of a pasted exchange
// under another speaker's label.
func othersWords(text string) string {
	var b strings.Builder
	last := 0
	for _, loc := range reportedSpeech.FindAllStringIndex(text, -1) {
		if selfReport.MatchString(text[:loc[0]]) {
			continue // "I told him: I'm vegan now" is the user's own
		}
		b.WriteString(text[last:loc[0]])
		b.WriteString(leadOf(text[loc[0]:loc[1]]) + ".\n")
		last = loc[1]
	}
	b.WriteString(text[last:])
	return speaker.ReplaceAllString(b.String(), "\n")
}

// leadOf is the reporting words that start reported speech s, without the
// speech.
func leadOf(s string) string {
	if i := strings.IndexAny(s, `:"“`); i >= 0 {
		return s[:i]
	}
	return s
}

// fictional reports whether a sentence is said within a story, game or
// role-play: what "I" am there is not what the user is.
func fictional(s string) bool { return fiction.MatchString(s) }
