package extract

import (
	"regexp"
	"strconv"
	"strings"
)

// The slots of who the user is: name, age, home, work, study, languages: each builder makes its slot's
// fact from a match (slotCtx).

func init() {
	register(buildName, "name")
	register(buildAge, "age")
	register(buildHome, "home")
	register(buildJoined, "joined")
	register(buildRetired, "retired")
	register(buildSelfEmployed, "self-employed")
	register(buildAgeRange, "age-range")
	register(buildHomeIn, "home-in")
	register(buildMoved, "moved")
	register(buildMovedThere, "moved-there")
	register(buildHomeNeg, "home-neg")
	register(buildOrigin, "origin")
	register(buildProperty, "property")
	register(buildField, "field")
	register(buildJob, "job")
	register(buildJobNeg, "job-neg")
	register(buildEmployer, "employer")
	register(buildEmployerNeg, "employer-neg")
	register(buildStudy, "study")
	register(buildLanguages, "languages")
	register(buildTurning, "turning")
	register(buildBornYear, "born-year")
	register(buildLearning, "learning")
	register(buildJobDoing, "job-doing")
}

func buildName(sc *slotCtx) (Fact, bool) {
	t := sc.t
	name := sc.name
	if notNames[name] || t.jobs[strings.ToLower(name)] != "" || t.diets[strings.ToLower(name)] != "" {
		return Fact{}, false
	}
	for _, w := range strings.Fields(name) {
		if notNames[w] || t.jobs[strings.ToLower(w)] != "" {
			return Fact{}, false // "Deutsche Staatsbürgerin", "Freie Journalistin"
		}
	}
	return newFact("identity", "identity:name", "User's name is "+name+".")
}

func buildAge(sc *slotCtx) (Fact, bool) {
	m := sc.m
	n := m.number()
	if n < 5 || n > 110 {
		return Fact{}, false
	}
	return newFact("identity", "identity:age", "User is "+strconv.Itoa(n)+" years old.")
}

func buildHome(sc *slotCtx) (Fact, bool) {
	g := sc.g
	return newFact("identity", "identity:location", "User lives in "+g["place"]+".")
}

func buildJoined(sc *slotCtx) (Fact, bool) {
	g := sc.g
	when := sc.when
	org := cleanValue(g["org"])
	if org == "" || notNames[org] {
		return Fact{}, false
	}
	return newFact("identity", "identity:job", "User joined "+org+when+".")
}

func buildRetired(sc *slotCtx) (Fact, bool) {
	when := sc.when
	return newFact("identity", "identity:job", "User retired"+when+".")
}

func buildSelfEmployed(sc *slotCtx) (Fact, bool) {
	when := sc.when
	return newFact("identity", "identity:job", "User became self-employed"+when+".")
}

func buildAgeRange(sc *slotCtx) (Fact, bool) {
	g := sc.g
	x := strings.ToLower(cleanValue(g["x"]))
	if x == "" {
		return Fact{}, false
	}
	return newFact("identity", "identity:age", "User is in their "+x+".")
}

func buildHomeIn(sc *slotCtx) (Fact, bool) {
	m := sc.m
	g := sc.g
	// "I'm in Joburg (Randburg side)": home, unless the sentence says
	// the user is passing through.
	if passing.MatchString(m.in) {
		return Fact{}, false
	}
	return newFact("identity", "identity:location", "User lives in "+g["place"]+".")
}

func buildMoved(sc *slotCtx) (Fact, bool) {
	g := sc.g
	when := sc.when
	return newFact("identity", "identity:location", "User moved to "+g["place"]+when+" and lives there.")
}

// buildMovedThere: a move whose place the sentence named before it ("Me
// han dado plaza en Toledo, así que nos mudamos el mes pasado", "got a
// job in Leeds so we moved in May"): the last place named before the verb.
func buildMovedThere(sc *slotCtx) (Fact, bool) {
	places := placeBefore.FindAllStringSubmatch(sc.m.before, -1)
	if len(places) == 0 {
		return Fact{}, false
	}
	place := places[len(places)-1][1]
	if notNames[place] {
		return Fact{}, false
	}
	return newFact("identity", "identity:location", "User moved to "+place+sc.when+" and lives there.")
}

var placeBefore = regexp.MustCompile(`(?:^|[^\p{L}])(?:en|in|em|no|na|à|a|nach|to)\s+(\p{Lu}[\p{Ll}'’-]+(?:\s+\p{Lu}[\p{Ll}'’-]+)?)`)

func buildHomeNeg(sc *slotCtx) (Fact, bool) {
	g := sc.g
	return newFact("identity", "identity:location", "User no longer lives in "+g["place"]+".")
}

func buildOrigin(sc *slotCtx) (Fact, bool) {
	g := sc.g
	return newFact("identity", "identity:origin", "User is from "+g["place"]+".")
}

func buildProperty(sc *slotCtx) (Fact, bool) {
	g := sc.g
	what := strings.TrimSpace(g["num"] + " " + strings.ToLower(g["x"]))
	if g["place"] != "" {
		what += " in " + g["place"]
	}
	return newFact("identity", "identity:property", "User owns "+what+".")
}

func buildField(sc *slotCtx) (Fact, bool) {
	g := sc.g
	x := cleanValue(g["x"])
	if x == "" {
		return Fact{}, false
	}
	return newFact("identity", "identity:job", "User works in "+x+".")
}

func buildJob(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	if v := strings.ToLower(g["verb"]); v != "" {
		x := cleanValue(thirdPerson(g["x"])) // "a bakery with my sister": the user's
		if x == "" {
			return Fact{}, false
		}
		if v == "promoted" {
			return newFact("identity", "identity:job", "User was promoted to "+x+".")
		}
		return newFact("identity", "identity:job", "User "+conjugate(v)+" "+x+".")
	}
	job := en(t.jobs, g["job"])
	said := strings.TrimSpace(g["x"])
	at := strings.TrimSpace(g["at"])
	switch {
	case job != "" && t == english:
		if said == "" {
			said = job
		}
		return newFact("identity", "identity:job", strings.TrimSpace("User is "+withArticle(said)+" "+at)+".")
	case job != "":
		// In English, with what was said beside it.
		asSaid := strings.TrimSpace(said + " " + at)
		if strings.EqualFold(asSaid, g["job"]) {
			return newFact("identity", "identity:job", "User is "+withArticle(job)+".")
		}
		return newFact("identity", "identity:job", "User is "+withArticle(job)+" ("+asSaid+").")
	}
	said = cleanValue(strings.TrimSpace(said + " " + at))
	if said == "" {
		return Fact{}, false
	}
	verb := "works as "
	if g["training"] != "" {
		verb = "is training as "
	}
	return newFact("identity", "identity:job", "User "+verb+withArticle(said)+".")
}

func buildJobNeg(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	return newFact("identity", "identity:job", "User is no longer "+withArticle(en(t.jobs, g["job"]))+".")
}

func buildEmployer(sc *slotCtx) (Fact, bool) {
	m := sc.m
	g := sc.g
	org := m.workplace()
	if org == "" {
		return Fact{}, false
	}
	if since := g["since"]; since != "" {
		return newFact("identity", "identity:job", "User has worked at "+org+" "+since+".")
	}
	how := ""
	if h := strings.ToLower(g["how"]); h != "" {
		how = " " + h
	}
	return newFact("identity", "identity:job", "User works"+how+" at "+org+".")
}

func buildEmployerNeg(sc *slotCtx) (Fact, bool) {
	m := sc.m
	org := m.workplace()
	if org == "" {
		return Fact{}, false
	}
	return newFact("identity", "identity:job", "User no longer works at "+org+".")
}

func buildStudy(sc *slotCtx) (Fact, bool) {
	g := sc.g
	x := cleanValue(g["x"])
	if x == "" {
		return Fact{}, false
	}
	if g["place"] != "" {
		x += " in " + g["place"]
	}
	return newFact("identity", "identity:study", "User studies "+x+".")
}

func buildLanguages(sc *slotCtx) (Fact, bool) {
	m := sc.m
	langs := m.languageList()
	if langs == "" {
		return Fact{}, false
	}
	return newFact("identity", "identity:languages", "User speaks "+langs+".")
}

func buildTurning(sc *slotCtx) (Fact, bool) {
	m := sc.m
	n := m.number()
	if n < 5 || n > 110 {
		return Fact{}, false
	}
	return newFact("identity", "identity:age", "User is turning "+strconv.Itoa(n)+".")
}

func buildBornYear(sc *slotCtx) (Fact, bool) {
	g := sc.g
	return newFact("identity", "identity:age", "User was born in "+g["year"]+".")
}

func buildLearning(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	l := en(t.languages, g["l"])
	if l == "" {
		return Fact{}, false
	}
	// One language learned at a time is what people mean by "I'm
	// learning X": a new one replaces it ("I dropped Italian, I'm
	// learning Korean now").
	return newFact("habit", "habit:learning:language", "User is learning "+l+".")
}

func buildJobDoing(sc *slotCtx) (Fact, bool) {
	g := sc.g
	x := strings.ToLower(cleanValue(g["x"]))
	if d, ok := drivingJobs[x]; ok {
		x = d
	}
	if x == "" {
		return Fact{}, false
	}
	return newFact("identity", "identity:job", "User is "+x+" for a living now.")
}
