package extract

import (
	"strings"
)

// The slots of what the user owns, supports, does and prefers, and how that changed: each builder makes its slot's
// fact from a match (slotCtx).

func init() {
	register(buildSold, "sold")
	register(buildTeam, "team")
	register(buildSwitched, "switched")
	register(buildHabit, "habit")
	register(buildPossess, "possess")
	register(buildSwapped, "swapped")
	register(buildQuitHabit, "quit-habit")
	register(buildTookUp, "took-up")
	register(buildDoneWith, "done-with")
	register(buildRather, "rather")
	register(buildActivity, "activity")
	register(buildInstrument, "instrument", "plays")
	register(buildNoDrive, "no-drive")
	register(buildGaveAway, "gave-away")
	register(buildMedication, "medication", "med-switch")
}

// buildGaveAway: "Gave the HP to my brother": a device the user no longer
// has (a thing of no class they could give is no fact).
func buildGaveAway(sc *slotCtx) (Fact, bool) {
	x := cleanValue(sc.g["x"])
	class := deviceClass(x)
	if x == "" || class == "" {
		return Fact{}, false
	}
	return newFact("possession", "possession:"+class, "User gave away their "+x+".")
}

// buildMedication: "I'm on sertraline", "my GP switched me from
// sertraline to citalopram": the medicine the user takes now.
func buildMedication(sc *slotCtx) (Fact, bool) {
	y := strings.ToLower(sc.g["y"])
	if y == "" {
		return Fact{}, false
	}
	if x := strings.ToLower(sc.g["x"]); x != "" {
		return newFact("health", "health:medication", "User takes "+y+" (switched from "+x+").")
	}
	return newFact("health", "health:medication", "User takes "+y+".")
}

// buildInstrument: "I started learning the guitar last month", "ich
// spiele Posaune", "toco violão": what the user plays or is learning,
// keyed by the instrument, so they can play several.
func buildInstrument(sc *slotCtx) (Fact, bool) {
	x := strings.ToLower(sc.g["x"])
	en, ok := instruments[x]
	if !ok {
		return Fact{}, false
	}
	if sc.m.slot == "plays" {
		return newFact("habit", "habit:instrument:"+en, "User plays the "+en+".")
	}
	what := "User is learning the " + en
	if sc.when != "" {
		what = "User started learning the " + en + sc.when
	}
	return newFact("habit", "habit:instrument:"+en, what+".")
}

// buildNoDrive: "I don't drive": how the user gets about.
func buildNoDrive(*slotCtx) (Fact, bool) {
	return newFact("preference", "preference:transport:drive", "User does not drive.")
}

func buildSold(sc *slotCtx) (Fact, bool) {
	m := sc.m
	g := sc.g
	if soldFor.MatchString(m.rest) {
		return Fact{}, false // "sold the Golf and got a Tesla": a switch
	}
	x := g["x"] // "the Ford": a name keeps its capital
	class := deviceClass(x)
	if class == "" {
		class = strings.ToLower(x)
	}
	return newFact("possession", "possession:"+class, "User sold their "+x+".")
}

func buildTeam(sc *slotCtx) (Fact, bool) {
	g := sc.g
	if c := strings.ToLower(g["club"]); c != "" {
		// "soy culé", "sou flamenguista": the club the word names.
		return newFact("preference", "preference:favorite:team", "User supports "+clubs[c]+" ("+g["club"]+").")
	}
	org := cleanValue(g["org"])
	if org == "" || !startsUpper(org) {
		return Fact{}, false
	}
	return newFact("preference", "preference:favorite:team", "User supports "+org+".")
}

func buildSwitched(sc *slotCtx) (Fact, bool) {
	g := sc.g
	to := cleanValue(g["y"])
	class := deviceClass(to)
	if class == "" {
		class = deviceClass(g["x"])
	}
	if to == "" || class == "" {
		return Fact{}, false
	}
	if from := cleanValue(g["x"]); from != "" {
		return newFact("possession", "possession:"+class, "User switched from "+from+" to "+to+".")
	}
	return newFact("possession", "possession:"+class, "User switched to "+to+".")
}

func buildHabit(sc *slotCtx) (Fact, bool) {
	g := sc.g
	x := strings.ToLower(cleanValue(g["x"]))
	if x == "" {
		return Fact{}, false
	}
	verb := "does "
	if x == "gym" || x == "pool" || x == "climbing wall" || strings.HasPrefix(x, "spin") {
		verb = "goes to the "
	}
	return newFact("habit", "habit:"+head(x), strings.TrimSpace("User "+verb+x+" "+strings.TrimSpace(g["freq"]))+".")
}

func buildPossess(sc *slotCtx) (Fact, bool) {
	g := sc.g
	y := cleanValue(g["y"])
	class := deviceClass(y)
	if y == "" || class == "" {
		return Fact{}, false
	}
	return newFact("possession", "possession:"+class, "User has "+withArticle(y)+".")
}

func buildSwapped(sc *slotCtx) (Fact, bool) {
	g := sc.g
	// "I gave up the gym, I'm into bouldering now": the old pastime
	// keyed as it was said, so the new one replaces it.
	x, y := cleanValue(g["x"]), cleanValue(g["y"])
	if x == "" || y == "" {
		return Fact{}, false
	}
	if class := deviceClass(y); class != "" {
		return newFact("possession", "possession:"+class, "User switched from "+x+" to "+y+".")
	}
	return newFact("habit", "habit:"+head(x), "User gave up "+x+" for "+y+".")
}

func buildQuitHabit(sc *slotCtx) (Fact, bool) {
	g := sc.g
	x := strings.ToLower(cleanValue(g["x"]))
	if x == "" {
		return Fact{}, false
	}
	return newFact("habit", "habit:"+head(x), "User gave up "+x+".")
}

func buildTookUp(sc *slotCtx) (Fact, bool) {
	g := sc.g
	y := strings.ToLower(cleanValue(g["y"]))
	if y == "" {
		return Fact{}, false
	}
	return newFact("habit", "habit:"+head(y), "User took up "+y+".")
}

func buildDoneWith(sc *slotCtx) (Fact, bool) {
	g := sc.g
	x := cleanValue(g["x"])
	if x == "" {
		return Fact{}, false
	}
	return newFact("preference", "preference:"+head(x), "User is done with "+x+".")
}

func buildRather(sc *slotCtx) (Fact, bool) {
	g := sc.g
	x, y := cleanValue(g["x"]), cleanValue(g["y"])
	if x == "" || y == "" {
		return Fact{}, false
	}
	return newFact("preference", "preference:"+head(x), "User would rather "+thirdPerson(x)+" than "+thirdPerson(y)+".")
}

func buildActivity(sc *slotCtx) (Fact, bool) {
	g := sc.g
	en := sc.m.lang.en
	x := cleanValue(g["x"])
	if x == "" {
		return Fact{}, false
	}
	verb := strings.ToLower(g["verb"])
	return newFact("habit", "habit:"+head(x), "User has been "+en(activityVerbs, verb)+" "+x+" "+g["since"]+".")
}
