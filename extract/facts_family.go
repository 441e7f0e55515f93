package extract

import (
	"slices"
	"strconv"
	"strings"
)

// The slots of the user's household: partners, children and relatives by name, pets: each builder makes its slot's
// fact from a match (slotCtx).

func init() {
	register(buildHousehold, "household")
	register(buildKidsAges, "kids-ages")
	register(buildChildUnnamed, "child-unnamed")
	register(buildBorn, "born")
	register(buildMember, "member", "member-age")
	register(buildPronounAge, "pronoun-age")
	register(buildMemberAllergy, "member-allergy", "member-intolerance", "member-cond")
	register(buildCount, "count")
	register(buildPets, "pets")
	register(buildPet, "pet")
	register(buildMarried, "married")
	register(buildNamedAge, "named-age", "named-diet", "named-cond", "named-allergy")
	register(buildPronounCond, "pronoun-cond", "pronoun-allergy")
	register(buildDied, "died")
	register(buildBreakup, "breakup")
	register(buildDating, "dating")
}

func buildHousehold(sc *slotCtx) (Fact, bool) {
	rel := sc.rel
	name := sc.name
	if rel == "" {
		return Fact{}, false
	}
	who := joinName(rel, name)
	return newFact("family", "family:household:"+rel, "User's "+who+" lives with the user.")
}

func buildKidsAges(sc *slotCtx) (Fact, bool) {
	g := sc.g
	ages := strings.Join(strings.Fields(strings.NewReplacer(",", " , ", "&", " and ").Replace(g["ages"])), " ")
	ages = strings.ReplaceAll(ages, " ,", ",")
	return newFact("family", "family:ages:child", "User's "+strings.ToLower(g["kids"])+" are "+ages+".")
}

func buildChildUnnamed(sc *slotCtx) (Fact, bool) {
	g := sc.g
	x := strings.ToLower(strings.Join(strings.Fields(g["x"]), " "))
	what := x
	if r := strings.ToLower(g["rel"]); r != "" {
		what += " " + r
	}
	return newFact("family", "family:child:"+strings.ReplaceAll(what, " ", "-"), "User has "+withArticle(what)+".")
}

func buildBorn(sc *slotCtx) (Fact, bool) {
	g := sc.g
	name := sc.name
	when := sc.when
	if name == "" || notNames[name] {
		return Fact{}, false
	}
	rel := "child"
	switch strings.ToLower(g["sex"] + g["rel"]) {
	case "girl", "daughter":
		rel = "daughter"
	case "boy", "son":
		rel = "son"
	}
	return newFact("family", "family:"+relationKey(rel, name), "User's "+rel+" "+name+" was born"+when+".")
}

func buildMember(sc *slotCtx) (Fact, bool) {
	m := sc.m
	rel := sc.rel
	name := sc.name
	if rel == "" || name == "" || notNames[name] {
		return Fact{}, false
	}
	content := "User's " + rel + " is named " + name + "."
	if n := m.number(); n > 0 && n < 120 {
		content = "User's " + rel + " " + name + " is " + strconv.Itoa(n) + " years old."
	}
	return newFact("family", "family:"+relationKey(rel, name), content)
}

func buildPronounAge(sc *slotCtx) (Fact, bool) {
	m := sc.m
	last := sc.last
	n := m.number()
	if n <= 0 || n > 120 {
		return Fact{}, false
	}
	lrel, lname, pet := m.referent(last)
	if lname == "" {
		return Fact{}, false
	}
	if pet != "" {
		return newFact("family", "family:pet:"+strings.ToLower(lname), "User has "+withArticle(pet)+" named "+lname+", "+strconv.Itoa(n)+" years old.")
	}
	return newFact("family", "family:"+relationKey(lrel, lname), "User's "+lrel+" "+lname+" is "+strconv.Itoa(n)+" years old.")
}

func buildMemberAllergy(sc *slotCtx) (Fact, bool) {
	m := sc.m
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	rel := sc.rel
	name := sc.name
	if rel == "" {
		return Fact{}, false
	}
	who := joinName(rel, name)
	key := "health:" + relationKey(rel, name)
	switch m.slot {
	case "member-cond":
		c := en(t.conditions, g["cond"])
		return newFact("health", key+":condition:"+head(c), "User's "+who+" has "+c+".")
	case "member-intolerance":
		what := m.allergen()
		return newFact("health", key+":allergy:"+head(what), "User's "+who+" is "+what+" intolerant.")
	}
	what := m.allergen()
	if what == "" {
		return Fact{}, false
	}
	return newFact("health", key+":allergy:"+head(what), "User's "+who+" is allergic to "+what+".")
}

func buildCount(sc *slotCtx) (Fact, bool) {
	m := sc.m
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	n := m.number()
	kids := en(t.children, g["kids"])
	if g["kids"] == "" { // "a mom of three"
		kids, g["kids"] = "kids", "kids"
	}
	if n <= 0 || n > 20 || kids == "" {
		return Fact{}, false
	}
	// As said, in English; counted in digits otherwise.
	num, noun := strings.ToLower(g["num"]), strings.ToLower(g["kids"])
	if t != english {
		num, noun = strconv.Itoa(n), kids
		if n == 1 {
			noun = singularOf(kids)
		}
	}
	return newFact("family", "family:count:"+countKey(kids), "User has "+num+" "+noun+".")
}

func buildPets(sc *slotCtx) (Fact, bool) {
	m := sc.m
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	n := m.number()
	pet := en(t.pets, g["pet"])
	if n <= 0 || n > 20 {
		return Fact{}, false
	}
	noun := singularOf(pet)
	if n > 1 {
		noun = plural(noun)
	}
	return newFact("family", "family:count:"+singularOf(pet), "User has "+strconv.Itoa(n)+" "+noun+".")
}

func buildPet(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	name := sc.name
	when := sc.when
	pet := singularOf(en(t.pets, g["pet"]))
	if name == "" || notNames[name] {
		return Fact{}, false
	}
	if g["died"] != "" {
		return newFact("family", "family:pet:"+strings.ToLower(name), "User's "+pet+" "+name+" has died.")
	}
	return newFact("family", "family:pet:"+strings.ToLower(name), "User has "+withArticle(pet)+" named "+name+when+".")
}

func buildMarried(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	rel := sc.rel
	name := sc.name
	when := sc.when
	status := strings.ToLower(en(t.statuses, g["status"]))
	if status == "divorced" || status == "separated" {
		// A partner no more: it replaces the partner named before.
		with := ""
		if name != "" {
			with = " from " + name
		}
		return newFact("family", "family:partner", "User is "+status+with+when+".")
	}
	if status == "engaged" || status == "married" {
		// Engaged or married, a partner's name said before is no
		// longer "girlfriend": it replaces it.
		with := ""
		if name != "" {
			with = " to " + name
		}
		if rel != "" && name != "" {
			return newFact("family", "family:partner", "User and their "+rel+" "+name+" got "+status+when+".")
		}
		return newFact("family", "family:partner", "User got "+status+with+when+".")
	}
	return newFact("identity", "identity:relationship", "User got "+status+when+".")
}

func buildNamedAge(sc *slotCtx) (Fact, bool) {
	m := sc.m
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	name := sc.name
	// A person the user named, by name alone ("Anika turned 6", "Kez
	// has been vegan for years"): theirs, keyed by the name.
	if name == "" || notNames[name] || t.jobs[strings.ToLower(name)] != "" {
		return Fact{}, false
	}
	key := "family:" + relationKey("", name)
	switch m.slot {
	case "named-age":
		n := m.number()
		if n <= 0 || n > 120 {
			return Fact{}, false
		}
		return newFact("family", key, name+" (of the user's family) is "+strconv.Itoa(n)+" years old.")
	case "named-diet":
		return newFact("health", "health:"+relationKey("", name)+":diet", name+" (someone close to the user) is "+en(t.diets, g["diet"])+".")
	case "named-cond":
		c := en(t.conditions, g["cond"])
		key := "health:" + relationKey("", name) + ":condition:" + head(c)
		if n := g["type"]; n != "" && !strings.Contains(c, "type") {
			c = "type " + n + " " + c
		}
		return newFact("health", key, name+" (someone close to the user) has "+c+".")
	}
	what := m.allergen()
	if what == "" {
		return Fact{}, false
	}
	return newFact("health", "health:"+relationKey("", name)+":allergy:"+head(what), name+" (someone close to the user) is allergic to "+what+".")
}

func buildPronounCond(sc *slotCtx) (Fact, bool) {
	m := sc.m
	last := sc.last
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	// "she's allergic to eggs" after "my daughter Zoe is 7": whom the
	// message named last.
	lrel, lname, pet := m.referent(last)
	if lrel == "" || pet != "" {
		return Fact{}, false
	}
	who := joinName(lrel, lname)
	if m.slot == "pronoun-allergy" {
		what := m.allergen()
		if what == "" {
			return Fact{}, false
		}
		return newFact("health", "health:"+relationKey(lrel, lname)+":allergy:"+head(what), "User's "+who+" is allergic to "+what+".")
	}
	c := en(t.conditions, g["cond"])
	return newFact("health", "health:"+relationKey(lrel, lname)+":condition:"+head(c), "User's "+who+" has "+c+".")
}

func buildDied(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	name := sc.name
	when := sc.when
	if notNames[name] {
		return Fact{}, false
	}
	who := name
	if p := g["pet"]; p != "" {
		who = "User's " + singularOf(en(t.pets, p)) + " " + name
	}
	return newFact("family", "family:pet:"+strings.ToLower(name), who+" has died"+when+".")
}

func buildBreakup(sc *slotCtx) (Fact, bool) {
	name := sc.name
	when := sc.when
	// A partner no more: it replaces the partner named before.
	relWord := sc.g["rel"]
	if name != "" && sc.t.relations[strings.ToLower(name)] != "" {
		relWord, name = name, "" // "Meine Frau und ich": German capitalises the relation
	}
	if name == "" && relWord != "" {
		// "me and my wife split up": the partner by what they were.
		rel := sc.m.lang.en(sc.t.relations, relWord)
		if !onePartner[rel] {
			return Fact{}, false
		}
		return newFact("family", "family:partner", "User and their "+rel+" split up"+when+"; the user no longer has a "+rel+".")
	}
	if name == "" || slices.ContainsFunc(strings.Fields(name), func(w string) bool { return notNames[w] }) {
		return Fact{}, false // "Meine Frau und ich": the relation's pattern reads it
	}
	return newFact("family", "family:partner", "User and "+name+" split up"+when+"; "+name+" is no longer the user's partner.")
}

func buildDating(sc *slotCtx) (Fact, bool) {
	g := sc.g
	name := sc.name
	if name == "" || notNames[name] {
		return Fact{}, false
	}
	verb := strings.ToLower(g["verb"])
	if verb == "" {
		verb = "seeing"
	}
	return newFact("family", "family:partner", "User is "+verb+" "+name+".")
}
