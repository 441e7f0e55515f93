package extract

import (
	"regexp"
	"strings"
)

type rule struct {
	kind string
	re   *regexp.Regexp
	// build returns the fact's key suffix and content from the submatches
	// and the rest of the sentence after the match, or ok=false to skip. An
	// empty content makes the fact the statement's clause (see clauseFact).
	build func(m []string, rest string) (key, content string, ok bool)
	// clause: the fact is always the statement's clause, in the third
	// person, whatever build wrote.
	clause bool
	// free: the rule may match anywhere in a sentence, not only where a
	// clause starts ("you can call me Al").
	free bool
	// fixed: the fact keeps its shape even in a sentence stating a change
	// (a name is a name).
	fixed bool
	// whole: the statement is its whole sentence, its subject not the user
	// ("Loud bars make me anxious").
	whole bool
	// needs, when set, are words one of which a sentence must hold, in
	// lower case, for the rule to state anything, where the pattern alone
	// does not require them.
	needs []string
	// holds are the strings a sentence must hold for the rule to state
	// anything: read from the pattern, with needs (see prefilter.go).
	holds literals
}

func init() {
	for i := range rules {
		r := &rules[i]
		r.holds = mustHold(r.re.String())
		if r.needs != nil {
			var g []string
			for _, w := range r.needs {
				g = append(g, fold(w))
			}
			r.holds = append(r.holds, g)
		}
	}
}

// re compiles a rule's pattern.
func re(pattern string) *regexp.Regexp { return regexp.MustCompile(pattern) }

// keyed makes a clause rule's build: key is the fact's key suffix for the
// object that follows the match, or "" to skip.
func keyed(key func(m []string, obj string) string) func([]string, string) (string, string, bool) {
	return func(m []string, rest string) (string, string, bool) {
		words := strings.Fields(rest)
		obj, ok := object(strings.Join(words[:min(len(words), maxObjectWords)], " "))
		if !ok {
			return "", "", false
		}
		k := key(m, obj)
		return k, "", k != ""
	}
}

// byHead keys a clause rule's fact by the head of what follows it,
// prefixed.
func byHead(prefix string) func([]string, string) (string, string, bool) {
	return keyed(func(_ []string, obj string) string {
		if h := head(obj); h != "" {
			return prefix + h
		}
		return ""
	})
}

// conditionDiet reports whether a word of diets is a health condition
// (diabetic, celiac, lactose intolerant), which a diet does not replace.
func conditionDiet(w string) bool {
	return strings.Contains(w, "diabetic") || strings.Contains(w, "celiac") || strings.Contains(w, "coeliac") || strings.Contains(w, "intolerant")
}

// fixedKey keys every fact of a clause rule alike (the user's diet, home).
func fixedKey(key string) func([]string, string) (string, string, bool) {
	return func([]string, string) (string, string, bool) { return key, "", true }
}

// The rules are English. Other languages are still remembered as transcript
// turns and found by full-text search; only fact extraction needs the rules.
var rules = []rule{
	// Explicit requests come first: "remember that ..." wins over the other
	// rules for the same sentence.
	{kind: "note", re: re(`(?i)^(?:please\s+)?(?:remember|don'?t forget|do not forget|keep in mind|note)(?:\s+that|\s*:)\s+(.+)$`),
		build: func(m []string, _ string) (string, string, bool) {
			c := sentence(thirdPerson(m[1]))
			return contentKey(c), c, c != ""
		}},

	// Who the user is.
	{kind: "identity", free: true, fixed: true, re: re(`(?i:\b(?:my name is|my name's|call me|i am called|i'm called|i go by))\s+(\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+)?)`),
		build: func(m []string, _ string) (string, string, bool) { return "name", "User's name is " + m[1] + ".", true }},
	{kind: "identity", fixed: true, re: re(`(?i:\bi(?:'m|\s+am))\s+(\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)?)(?:\s*$|\s*[,.!;]|\s+(?:and|from|here|by|btw|but|nice)\b|\s+[-–—])`),
		build: func(m []string, _ string) (string, string, bool) {
			for _, w := range strings.Fields(m[1]) {
				if notNames[w] {
					return "", "", false
				}
			}
			return "name", "User's name is " + m[1] + ".", true
		}},
	{kind: "identity", fixed: true, re: re(`(?i)\bi(?:'m| am)\s+(\d{1,3})\s+(?:years old|yrs old|year old)`),
		build: func(m []string, _ string) (string, string, bool) {
			return "age", "User is " + m[1] + " years old.", true
		}},

	// Diets and health: what would harm the user if missed.
	{kind: "identity", re: re(`(?i)\bi(?:'m| am)\s+(?:(?:now|fully|strictly|completely|mostly|also|a|an)\s+)*(` + diets + `)\b`),
		build: func(m []string, _ string) (string, string, bool) {
			w := strings.ToLower(m[1])
			if conditionDiet(w) {
				// A condition is no diet a newer diet replaces: "I'm
				// diabetic" stays when the user goes vegan.
				return "diet:" + strings.NewReplacer(" ", "-", "coeliac", "celiac").Replace(w), "User is " + w + ".", true
			}
			return "diet", "User is " + w + ".", true
		}},
	{kind: "identity", clause: true, re: re(`(?i)\bi(?:'ve| have)?\s+(?:went|gone|became|become|turned|switched to being|decided to go|started being)\s+(?:(?:fully|completely|totally|strictly)\s+)?(?:` + diets + `)\b`),
		build: fixedKey("diet")},
	{kind: "identity", clause: true, free: true, re: re(`(?i)\bi(?:'m| am)\s+(?:not\s+(?:a\s+)?(?:` + diets + `)\s+(?:anymore|any more)|no longer\s+(?:a\s+)?(?:` + diets + `))\b`),
		build: fixedKey("diet")},
	{kind: "identity", clause: true, re: re(`(?i)\bi(?:'m| am)?\s+(?:follow|following|eat|eating|keep|stick to|on|doing)\s+(?:a\s+|an\s+)?(?:(?:strict|mostly|fully|completely|very|mainly)\s+)?(?:[\p{L}-]+\s+){0,2}?diet\b`),
		build: fixedKey("diet")},
	{kind: "identity", clause: true, re: re(`(?i)\bi(?:'m| am)\s+(?:on|doing)\s+(?:a\s+)?(?:` + diets + `|whole30|intermittent fasting)\b`),
		build: fixedKey("diet")},
	{kind: "health", clause: true, re: re(`(?i)\bi(?:'m| am)\s+(?:(?:very|severely|highly|mildly|extremely|also)\s+)?(?:allergic|intolerant)\s+to\s+`),
		build: byHead("allergy:")},
	{kind: "health", clause: true, re: re(`(?i)\bi\s+(?:have|'ve got|have got|suffer from)\s+(?:a\s+|an\s+)?(?:(?:severe|mild|serious|bad|life-threatening|slight|strong|terrible|deadly)\s+)*((?:[\p{L}-]+\s+){1,2}?)(?:allerg(?:y|ies)|intolerance|sensitivity)\b`),
		build: func(m []string, _ string) (string, string, bool) {
			return "allergy:" + head(m[1]), "", head(m[1]) != ""
		}},
	{kind: "health", clause: true, re: re(`(?i)\bi\s+(?:have|'ve got|have got|suffer from)\s+(?:a\s+|an\s+)?(?:(?:severe|mild|serious|bad|life-threatening|slight|strong|terrible|deadly)\s+)*(?:allerg(?:y|ies)|intolerance|sensitivity)\s+to\s+`),
		build: byHead("allergy:")},
	{kind: "health", clause: true, re: re(`(?i)\bi\s+(?:have|suffer from|deal with|struggle with|live with)\s+(?:a\s+|an\s+)?(?:(?:very|extremely|severe|chronic|serious|mild|bad|really)\s+)*((?:[\p{L}-]+\s+){0,2}?)(?:issues|problems|disorder|disease|condition|skin|injury|injuries|tolerance)\b`),
		build: func(m []string, _ string) (string, string, bool) { return "condition:" + head(m[1]), "", true }},
	{kind: "health", clause: true, re: re(`(?i)\bi\s+(?:have|suffer from|was diagnosed with|live with|'ve got|have got)\s+(?:type\s+[12]\s+|chronic\s+|severe\s+)?(diabetes|asthma|celiac disease|coeliac disease|epilepsy|arthritis|migraines?|ibs|crohn's|hypertension|high blood pressure|a heart condition|heart disease|adhd|autism|anxiety|depression|dyslexia|lupus|gout|eczema|psoriasis|sleep apnea|insomnia|joint (?:issues|problems|pain)|back (?:issues|problems|pain)|bad knees|a bad back|knee (?:issues|problems)|chronic pain|a disability|limited mobility|motion sickness|seasickness)\b`),
		build: func(m []string, _ string) (string, string, bool) { return "condition:" + head(m[1]), "", true }},
	{kind: "health", clause: true, re: re(`(?i)\bi\s+(?:can(?:'t|not| not)|must not|mustn't|shouldn't|am not allowed to|'m not allowed to|(?:have|need) to avoid|must avoid)\s+(?:eat|drink|consume|digest|tolerate)\s+`),
		build: byHead("avoid:")},
	// Retractions: what the user no longer is or has takes the key of what
	// said it, so the old value stops riding as current.
	{kind: "health", clause: true, re: re(`(?i)\bi(?:'m| am)\s+(?:not|no longer)\s+(?:(?:actually|really|even|at all)\s+)?(?:allergic|intolerant)\s+to\s+`),
		build: byHead("allergy:"), needs: []string{"allergic", "intolerant"}},
	{kind: "health", clause: true, re: re(`(?i)\bi\s+(?:don't|do not|no longer)\s+have\s+(?:a\s+|an\s+|any\s+)?((?:[\p{L}-]+\s+){1,2}?)(?:allerg(?:y|ies)|intolerance)\b`),
		build: func(m []string, _ string) (string, string, bool) {
			return "allergy:" + head(m[1]), "", head(m[1]) != ""
		}, needs: []string{"allerg", "intolerance"}},
	{kind: "identity", clause: true, re: re(`(?i)\bi\s+(?:(?:no longer|have stopped|'ve stopped|stopped|quit|gave up|have given up|'ve given up)\s+(?:eat(?:ing)?\s+)?|(?:don't|do not)\s+eat\s+(?:[\p{L}-]+\s+){1,2}?(?:anymore|any more)\b|(?:now\s+)?(?:eat|started eating|have started eating|'ve started eating)\s+(?:[\p{L}-]+\s+){1,2}?(?:again|now)\b)(?:red\s+)?(?:meat|fish|seafood|dairy|eggs|pork|beef|chicken|animal products|gluten|sugar|carbs)?`),
		build: func(m []string, _ string) (string, string, bool) {
			return "diet", "", foodWord.MatchString(m[0])
		}, needs: foodWords},
	{kind: "identity", clause: true, re: re(`(?i)\bi(?:'m| am)\s+(?:not\s+(?:a|an)\s+(?:[\p{L}-]+\s+){0,2}?(?:` + professions + `)\s+(?:anymore|any more)|no longer\s+(?:a|an)\s+(?:[\p{L}-]+\s+){0,2}?(?:` + professions + `))\b`),
		build: fixedKey("job"), needs: noLonger},
	{kind: "identity", clause: true, re: re(`(?i)\bi\s+(?:no longer\s+work\s+as\s+|(?:don't|do not)\s+work\s+as\s+.{1,40}?\s+(?:anymore|any more)\b)`),
		build: fixedKey("job"), needs: noLonger},
	{kind: "identity", clause: true, re: re(`(?i)\bi\s+(?:no longer\s+work\s+(?:at|for)\s+|(?:don't|do not)\s+work\s+(?:at|for)\s+.{1,40}?\s+(?:anymore|any more)\b)`),
		build: fixedKey("job"), needs: noLonger},
	{kind: "health", re: re(`(?i)\bi\s+(?:don't|do not|never)\s+drink(?:\s+alcohol)?\s*[.!]*$`),
		build: func([]string, string) (string, string, bool) { return "alcohol", "User does not drink alcohol.", true }},

	// Where the user lives and comes from.
	{kind: "identity", re: re(`(?i)\bi(?:'m|\s+am|'ve been|\s+have been)?\s+(?:currently\s+|still\s+|now\s+|actually\s+|really\s+|also\s+)?(?:live|living|reside|residing|based)\s+in\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[1])
			// A partner lived with is the partner's slot's: a home fact
			// naming them would outlive a breakup.
			o = withPartner.ReplaceAllString(o, "")
			return "location", "User lives in " + thirdPerson(o) + ".", ok
		}},
	{kind: "identity", re: re(`(?i)\b(?:i|we)(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+to\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[1])
			if !ok || deviceClass(o) != "" {
				return "", "", false
			}
			return "location", "User moved to " + thirdPerson(o) + " and lives there.", ok
		}},
	{kind: "identity", clause: true, free: true, re: re(`(?i)\bi\s+(?:don't|do not|no longer)\s+live\s+in\s+`),
		build: fixedKey("location")},
	{kind: "identity", re: re(`(?i)\bi(?:'m| am)\s+(?:originally\s+)?from\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[1])
			return "origin", "User is from " + thirdPerson(o) + ".", ok
		}},

	// Work and study.
	{kind: "identity", re: re(`(?i)\bi(?:'m|\s+am)?\s+(?:currently\s+|still\s+|now\s+)?(?:work|working)\s+as\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[1])
			return "job", "User works as " + thirdPerson(o) + ".", ok
		}},
	{kind: "identity", re: re(`(?i)\bmy (?:job|profession|occupation) is\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[1])
			return "job", "User's job is " + thirdPerson(o) + ".", ok
		}},
	{kind: "identity", clause: true, re: re(`(?i)\bi(?:'m| am)\s+(?:now\s+|currently\s+|still\s+)?(?:a|an)\s+(?:[\p{L}-]+\s+){0,2}?(?:` + professions + `)\b`),
		build: fixedKey("job")},
	{kind: "identity", clause: true, re: re(`(?i:\bi(?:'m| am)\s+(?:a|an)\s+[\p{L}-]+(?:\s+[\p{L}-]+)?\s+at\s+)\p{Lu}`),
		build: fixedKey("job")},
	{kind: "identity", clause: true, re: re(`(?i)\bi(?:'m| am| have| just| recently)*\s+retired\b`),
		build: fixedKey("job")},
	{kind: "identity", clause: true, re: re(`(?i)\b(?:my\s+new\s+(?:job|role|position)\s+as|i\s+(?:just\s+|recently\s+)?(?:started|got|landed|took|accepted|began)\s+(?:a\s+|my\s+)?(?:new\s+)?(?:job|role|position|career)\s+as)\s+`),
		build: fixedKey("job")},
	{kind: "identity", re: re(`(?i)\bi(?:'m|\s+am)?\s+(?:currently\s+|still\s+|now\s+)?(?:work|working)\s+(?:at|for)\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[1])
			return "job", "User works at " + thirdPerson(o) + ".", ok
		}},
	{kind: "identity", clause: true, free: true, re: re(`(?i)\b(?:my\s+(?:new\s+)?(?:job|role|position)\s+(?:is\s+)?(?:at|with)|i\s+(?:just\s+|recently\s+)?(?:started|got|landed|took|accepted|began)\s+(?:a\s+)?(?:new\s+)?(?:job|role|position)\s+(?:at|with)|i(?:'ve| have)?\s+(?:just\s+)?(?:quit|left)\s+my\s+(?:old\s+)?job)\b`),
		build: fixedKey("job")},
	{kind: "identity", clause: true, re: re(`(?i)\b(?:i(?:'m| am)\s+(?:currently\s+|now\s+|still\s+)?(?:studying|doing a (?:degree|masters|master's|phd|bachelor's) in|majoring in|a\s+(?:[\p{L}-]+\s+){1,2}?student)|i\s+(?:study|major in)|my\s+(?:major|degree|course)\s+is(?:\s+in)?|i\s+(?:changed|switched)\s+my\s+(?:major|degree|course|studies)\s+to)\s+`),
		build: fixedKey("study")},

	// The people (and pets) in the user's life.
	{kind: "family", re: re(`(?i:\bmy\s+(wife|husband|partner|spouse|girlfriend|boyfriend|fiancee?|son|daughter|mother|mom|mum|father|dad|brother|sister|grandmother|grandfather|grandma|grandpa|dog|cat|puppy|kitten|best friend|boss)(?:'s name)?\s+is\s+(?:called\s+|named\s+)?)(\p{Lu}[\p{L}'-]+)`),
		build: func(m []string, _ string) (string, string, bool) {
			rel := strings.ToLower(m[1])
			return relationKey(rel, m[2]), "User's " + rel + " is named " + m[2] + ".", true
		}},
	{kind: "family", clause: true, re: re(`(?i:\bi(?:'m| am)\s+(?:now\s+)?(?:dating|seeing|engaged to|married to|in a relationship with|going out with)\s+)\p{Lu}`),
		build: fixedKey("partner")},
	{kind: "family", clause: true, free: true, re: re(`(?:(?i:\bi\s+(?:just\s+)?(?:broke up with|split up with|divorced)\s+)\p{Lu}|\b\p{Lu}[\p{L}'-]+(?i:\s+and\s+i\s+(?:broke up|split up|split|divorced|separated))|(?i:\bi\s+married\s+)\p{Lu})`),
		build: fixedKey("partner")},
	{kind: "identity", re: re(`(?i)\bi(?:'m| am)\s+(married|single|divorced|engaged|widowed|in a relationship)\b`),
		build: func(m []string, _ string) (string, string, bool) {
			return "relationship", "User is " + strings.ToLower(m[1]) + ".", true
		}},
	{kind: "identity", clause: true, re: re(`(?i)\bi\s+(?:just\s+)?got\s+(?:married|engaged|divorced)\b`),
		build: fixedKey("relationship")},
	{kind: "family", re: re(`(?i)\bi have\s+(a|an|one|two|three|four|five|six|\d{1,2})\s+(kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|dogs?|cats?|pets?|grandchildren|grandkids?)\b`),
		build: func(m []string, _ string) (string, string, bool) {
			noun := strings.ToLower(m[2])
			return "count:" + countKey(noun), "User has " + strings.ToLower(m[1]) + " " + noun + ".", true
		}},

	// What the user owns and uses, and how they get around.
	{kind: "possession", clause: true, re: re(`(?i)\bi(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+|now\s+)?(?:have|own|use|got|bought|switched to|upgraded to|moved to|changed to|drive|replaced\s+.{1,40}?\s+with)\s+`),
		build: keyed(func(_ []string, obj string) string { return deviceClass(obj) })},
	{kind: "possession", clause: true, free: true, re: re(`(?i)\bmy\s+(?:new\s+|old\s+|current\s+)?(phone|laptop|computer|tablet|car|watch)\s+is\s+`),
		build: func(m []string, _ string) (string, string, bool) { return strings.ToLower(m[1]), "", true }},
	{kind: "habit", clause: true, re: re(`(?i)\bi\s+` + adverbs + `(?:drive|cycle|bike|ride (?:my|a) bike|walk|run|commute|take the (?:bus|train|tube|subway|metro|tram)|carpool)\s+(?:to|into)\s+(?:work|the office|school|university|college|class|my job)\b`),
		build: fixedKey("commute")},

	// Changes of what the user uses or does.
	{kind: "preference", clause: true, re: re(`(?i)\bi(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:switched|changed|moved|converted|went)\s+from\s+(.{1,40}?)\s+to\s+`),
		build: func(m []string, _ string) (string, string, bool) { return head(m[1]), "", head(m[1]) != "" }},
	{kind: "habit", clause: true, re: re(`(?i)\bi(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:quit|stopped|gave up|given up|dropped)\s+`),
		build: byHead("")},
	{kind: "habit", clause: true, re: re(`(?i)\bi\s+` + adverbs + `(?:play|practice|practise)\s+`),
		build: byHead("")},

	// Preferences and standing instructions.
	{kind: "preference", re: re(`(?i)\bmy\s+favou?rite\s+([\p{L} ]{2,30}?)\s+(?:is|are)\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[2])
			what := strings.ToLower(strings.TrimSpace(m[1]))
			return "favorite:" + what, "User's favorite " + what + " is " + thirdPerson(o) + ".", ok
		}},
	{kind: "instruction", free: true, fixed: true, re: re(`(?i)^(?:please\s+)?((?:always|never|from now on,?|in future,?|going forward,?)\s+(?:please\s+)?(?:answer|reply|respond|use|write|give|talk|speak|format|include|keep|show|explain|address|mention|add|list|assume|remind|suggest|recommend|be|avoid)\b.*)`),
		build: func(m []string, _ string) (string, string, bool) {
			c := strings.TrimRight(strings.TrimSpace(m[1]), ".! ")
			return contentKey(c), "User's standing instruction: " + strings.ToLower(c[:1]) + c[1:] + ".", true
		}},
	{kind: "preference", clause: true, re: re(`(?i)\b(?:i(?:'ve| have)?|as\s+(?:someone|somebody|a person|one)\s+who)\s+` + adverbs + `(?:prefer|preferred|love|loved|like|liked|enjoy|enjoyed|adore|hate|hated|dislike|disliked|detest|despise|loathe|avoid|refuse|reject|favou?r|value|appreciate|cherish|drink|eat|wear|use|buy|shop|fear|watch|read|listen to|choose|support|travel|stay|book|fly|(?:need|have|want|must|should) to avoid|must avoid|(?:learn|work|study|focus|sleep|perform|do)\s+(?:best|better)|find\s+it\s+(?:(?:very|really|extremely|quite|so|too|much)\s+)?[\p{L}-]+\s+(?:to|when|if)|(?:get|feel|become)\s+(?:(?:very|really|extremely|quite|so|too)\s+)?(?:anxious|nervous|uncomfortable|sick|claustrophobic|overwhelmed|bored|stressed|dizzy|nauseous|seasick|motion sick|irritated)\s+(?:in|on|with|around|when|by|during|at)|only\s+(?:use|buy|wear|eat|drink|watch|play|read|listen|travel|stay|book|fly|shop|support|choose|want|like|enjoy|trust)|can(?:'t|not| not)\s+(?:stand|tolerate|handle|bear|stomach)|(?:don't|do not|never|won't|will not|would never|wouldn't)\s+(?:like|enjoy|eat|drink|consume|wear|want|use|watch|play|buy|support|trust|care for|tolerate|fly|travel|stay|go|take|book|own|read|listen)|would rather|'d rather|stay away from|steer clear of|stick (?:to|with)|opt for|lean towards?|gravitate towards?|believe in|find|follow)(?:s|es)?\s+`),
		build: keyed(func(m []string, obj string) string {
			if reacting(m[0], obj) {
				return "" // "I love the idea of a scavenger hunt" answers the assistant
			}
			return head(obj)
		})},
	{kind: "preference", clause: true, re: re(`(?i)\bi(?:'m|\s+am)\s+` + adverbs + `(?:not\s+` + adverbs + `(?:a\s+(?:big\s+|huge\s+)?fan\s+of|into|interested\s+in|keen\s+on|fond\s+of|comfortable\s+(?:with|in|using))|(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of|(?:strongly\s+)?(?:opposed|averse)\s+to|against|(?:afraid|scared|terrified|wary)\s+of|uncomfortable\s+(?:with|in|around|using)|passionate\s+about|fascinated\s+by|obsessed\s+with|into|keen\s+on|fond\s+of|partial\s+to|sensitive\s+to|(?:picky|particular)\s+about|(?:only|most)\s+comfortable\s+(?:with|in|using)|(?:very\s+|really\s+)?interested\s+in)\s+`),
		build: keyed(func(m []string, obj string) string {
			if reacting(m[0], obj) {
				return ""
			}
			return head(obj)
		})},
	{kind: "preference", clause: true, re: re(`(?i)\bi\s+(?:have|'ve got|have got)\s+(?:a\s+|an\s+|no\s+|some\s+)?(?:(?:strong|deep|deep-seated|real|severe|serious|ethical|mild|slight|huge|big|particular|personal|strict|firm|moral|lifelong|genuine|intense|major|absolute|great)\s+)*(?:aversion|dislike|preference|phobia|fear|objection|interest|passion|hatred|distaste|weakness|soft spot|stance)\s+(?:to|for|of|in|against|toward|towards)\s+`),
		build: keyed(func(_ []string, obj string) string { return head(obj) })},
	{kind: "preference", clause: true, free: true, whole: true, re: re(`(?i)\b(?:(?:don't|doesn't|do not|does not|never|won't)\s+(?:really\s+)?(?:appeal to|interest|agree with|suit)\s+me|makes?\s+me\s+(?:feel\s+)?(?:(?:very|really|so|too|a bit|quite)\s+)?(?:uncomfortable|sick|nauseous|anxious|dizzy|disoriented|queasy|ill|nervous|itchy|sneeze)|(?:is|are)\s+(?:a\s+)?(?:strict\s+|total\s+|complete\s+|hard\s+)?(?:no-go|dealbreaker|deal-breaker|deal breaker)s?\s+for\s+me|(?:is|are)\s+not\s+(?:really\s+)?(?:for me|my thing|my cup of tea))\b`),
		build: func([]string, string) (string, string, bool) { return "whole", "", true }},
	{kind: "habit", clause: true, re: re(`(?i)\bi\s+(?:usually|always|often|normally|typically|generally|regularly|never|rarely|sometimes|tend to)\s+`),
		build: keyed(func(_ []string, obj string) string { return head(obj) })},
	{kind: "habit", re: re(`(?i)^(every\s+(?:morning|evening|night|day|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\s*,?\s+i\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[2])
			return head(o), strings.ToUpper(m[1][:1]) + m[1][1:] + ", the user " + conjugateFirst(thirdPerson(o)) + ".", ok
		}},

	// Decisions and plans.
	{kind: "decision", re: re(`(?i)\b(?:i|we)(?:'ve| have)?\s+decided\s+(to|on|that|against)\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[2])
			return head(o), "User decided " + strings.ToLower(m[1]) + " " + thirdPerson(o) + ".", ok
		}},
	{kind: "decision", re: re(`(?i)\b(?:let's|we'll|we will|i'll|i will|i'm going to|we're going to)\s+(go with|use|stick with|choose|pick|switch to)\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[2])
			return head(o), "User chose to " + strings.ToLower(m[1]) + " " + thirdPerson(o) + ".", ok
		}},
	{kind: "plan", re: re(`(?i)\bi(?:'m| am)?\s+(?:planning|plan|going|intending|hoping)\s+to\s+(.+)`),
		build: func(m []string, _ string) (string, string, bool) {
			o, ok := object(m[1])
			// "going to the store" is a destination, not a plan to do something.
			if first := strings.ToLower(strings.Fields(o + " x")[0]); skipHead[first] {
				return "", "", false
			}
			return head(o), "User plans to " + thirdPerson(o) + ".", ok
		}},
}

// reaction starts an object that, liked, answers the assistant rather than
// says something about the user: "I love the idea of a scavenger hunt".
var reaction = regexp.MustCompile(`(?i)^(?:the|that|this|these|those|your|all the|all these)\s+(?:idea|ideas|suggestion|suggestions|tip|tips|recommendation|recommendations|advice|list|plan|concept|approach|option|options|way you)\b`)

// emphatic are the adverbs of a reaction to something just shown: "I'm
// particularly interested in the canopic jars".
var emphatic = regexp.MustCompile(`(?i)\b(?:particularly|especially|definitely|really|so|very)\b`)

// reacting reports whether a liking (cue, then obj) answers the assistant
// rather than says something that stands about the user.
func reacting(cue, obj string) bool {
	if negative.MatchString(cue) {
		return false
	}
	return reaction.MatchString(obj) || emphatic.MatchString(cue) && strings.HasPrefix(strings.ToLower(obj), "the ")
}

// negative are the words of a statement against something.
var negative = regexp.MustCompile(`(?i)(?:n't|\bnot\b|\bnever\b|dislike|hate|detest|despise|loathe|avoid|refuse|reject|fear|stay away|steer clear)`)

// partners are the relations a person has one of at a time, whatever they
// call it: "my boyfriend is Tom" is superseded by "I'm dating Sara now".
var partners = map[string]bool{
	"wife": true, "husband": true, "partner": true, "spouse": true, "girlfriend": true, "boyfriend": true,
	"fiance": true, "fiancee": true,
}

// Other relations a person has at most one of at a time.
var singular = map[string]bool{
	"mother": true, "mom": true, "mum": true, "father": true, "dad": true, "boss": true, "best friend": true,
}

// relationKey keys a relation: one key for the partner, one for each
// singular relation, one per name for the others (several sons, dogs).
func relationKey(rel, name string) string {
	switch {
	case partners[rel]:
		return "partner"
	case singular[rel]:
		return rel
	case english.pets[rel] != "":
		return "pet:" + strings.ToLower(name) // one key however the pet is called
	case name == "":
		return rel
	}
	// A person by their name, whatever the relation said: "Anika turned 6"
	// replaces "my daughter Anika is 5".
	return "person:" + strings.ToLower(name)
}

// withPartner is "with my husband Gareth" and what follows it in a home.
var withPartner = regexp.MustCompile(`(?i)\s+(?:together\s+)?with\s+my\s+(?:husband|wife|partner|boyfriend|girlfriend|fianc[ée]e?|spouse|hubby|bf|gf|other\s+half)\b.*$`)
