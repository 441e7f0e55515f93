package extract

import (
	"regexp"
	"strings"
)

// What a fact ended: "User gave up coffee.", "User sold their Ford.",
// "User switched to a Pixel 8.", "User is divorced from Gareth." say what
// the user no longer does, has or is with. The words the user said before
// it that name the old value ("I can't start the day without coffee",
// "I drive a 2012 Ford Focus", "my Galaxy S21 battery dies by 3pm") say
// what is no longer so, though no rule read a fact from them: a recall
// does not show them as current (NamesEnded).

var ended = regexp.MustCompile(`^User (?:gave up|gave away|has given up|dropped|quit|stopped|sold|left|is divorced from|switched from|no longer works at)\s+(?:the user's\s+|their\s+|my\s+|the\s+|an?\s+)?(?P<old>.+?)(?:\s+(?:for|to)\s+.+)?\.$` +
	`|^User and (?P<old>\S+(?:\s\S+)?) split up|^User takes \S+ \(switched from (?P<old>[^)]+)\)`)

// genericDevices are the words of a device class that name no one device:
// "buying a new phone" says nothing of which phone.
var genericDevices = map[string]bool{"phone": true, "smartphone": true, "android": true, "tablet": true, "laptop": true,
	"notebook computer": true, "desktop": true, "pc": true, "smartwatch": true, "car": true, "auto": true, "coche": true,
	"carro": true, "voiture": true, "wagen": true, "motorbike": true, "motorcycle": true, "scooter": true, "e-reader": true}

// Ends reports whether fact says what the user no longer does, has or is
// with.
func Ends(fact string) bool {
	return ended.MatchString(fact) || strings.HasPrefix(fact, "User switched to ")
}

// NamesEnded reports whether the user's words said, before fact (keyed
// key), name what fact ended: the old value's words, or, for a device
// replaced ("User switched to a Pixel 8.", key possession:phone), another
// device of its class by name. Words that teach a fact of key themselves
// (the turn fact was learned from, or one saying it again) are not what it
// ended: the caller, which reads the turn's facts anyway, checks that.
func NamesEnded(fact, key, said string) bool {
	if !Ends(fact) {
		return false
	}
	folded := " " + strings.Join(strings.FieldsFunc(fold(said), notWordRune), " ") + " "
	named := false
	if loc := ended.FindStringSubmatch(fact); loc != nil {
		for i, name := range ended.SubexpNames() {
			if name != "old" || loc[i] == "" {
				continue
			}
			for _, w := range strings.FieldsFunc(fold(loc[i]), notWordRune) {
				if len(w) > 2 && !stopWords[strings.ToLower(w)] && strings.Contains(folded, " "+w+" ") {
					named = true
				}
			}
		}
	}
	if class, ok := strings.CutPrefix(key, "possession:"); ok && !named && strings.HasPrefix(fact, "User switched to ") {
		now := fold(fact)
		for _, d := range deviceClasses {
			if d.class != class && !(class == "phone" && d.class == "samsung") {
				continue
			}
			for _, w := range d.re.FindAllString(said, -1) {
				if !genericDevices[strings.ToLower(w)] && !strings.Contains(now, fold(w)) {
					named = true
				}
			}
		}
	}
	return named
}

func notWordRune(r rune) bool {
	return !(r == '-' || r == '\'' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r >= 0x80 && r != '’')
}

// stopWords are words an ended value may hold that name nothing.
var stopWords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "user": true, "user's": true, "their": true,
	"old": true, "new": true, "from": true, "lol": true, "now": true}
