package extract

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/caddy-memory/memory/internal/norm"
)

// slotfacts.go writes what a slot's match says as a fact: in English, in
// the third person, keyed by the slot (and, for one of several, by whom):
// a newer statement of the same slot, in any language, has the same key
// and so replaces the older (the third question).

// build is what m states; last is the family member or pet the
// sentence named last ("our son Leo, he's 5").
func (m *slotMatch) build(last *slotMatch) []Fact {
	f, ok := m.fact(last)
	out := []Fact(nil)
	if ok {
		out = append(out, f)
	}
	switch m.slot {
	case "count", "pets", "member", "pet":
		out = append(out, m.named()...)
	case "cleft-allergy":
		if not := m.lang.en(m.lang.t.allergens, m.g["not"]); not != "" {
			out = append(out, Fact{Kind: "health", Key: "health:allergy:" + head(strings.ToLower(not)), Content: "User is not allergic to " + strings.ToLower(not) + "."})
		}
	}
	return out
}

// en is a word of the language in English, as said when the table does
// not have it.
func (l *language) en(words map[string]string, w string) string {
	if e, ok := words[strings.ToLower(w)]; ok {
		return e
	}
	return w
}

// fact is the one fact m states, if any.
func (m *slotMatch) fact(last *slotMatch) (Fact, bool) {
	t, g := m.lang.t, m.g
	en := m.lang.en
	rel := en(t.relations, g["rel"])
	name := nameOnly(g["name"])
	when := ""
	if d := g["when"]; d != "" {
		if a := agoEnglish(d); a != "" {
			when = " " + a
		} else {
			when = " " + en(t.relDates, d)
		}
	}
	switch m.slot {
	case "name":
		if notNames[name] || t.jobs[strings.ToLower(name)] != "" || t.diets[strings.ToLower(name)] != "" {
			return Fact{}, false
		}
		return newFact("identity", "identity:name", "User's name is "+name+".")
	case "age":
		n := m.number()
		if n < 5 || n > 110 {
			return Fact{}, false
		}
		return newFact("identity", "identity:age", "User is "+strconv.Itoa(n)+" years old.")
	case "home":
		return newFact("identity", "identity:location", "User lives in "+g["place"]+".")
	case "joined":
		org := cleanValue(g["org"])
		if org == "" || notNames[org] {
			return Fact{}, false
		}
		return newFact("identity", "identity:job", "User joined "+org+when+".")
	case "retired":
		return newFact("identity", "identity:job", "User retired"+when+".")
	case "self-employed":
		return newFact("identity", "identity:job", "User became self-employed"+when+".")
	case "household":
		if rel == "" {
			return Fact{}, false
		}
		who := rel
		if name != "" {
			who += " " + name
		}
		return newFact("family", "family:household:"+rel, "User's "+who+" lives with the user.")
	case "kids-ages":
		ages := strings.Join(strings.Fields(strings.NewReplacer(",", " , ", "&", " and ").Replace(g["ages"])), " ")
		ages = strings.ReplaceAll(ages, " ,", ",")
		return newFact("family", "family:ages:child", "User's "+strings.ToLower(g["kids"])+" are "+ages+".")
	case "child-unnamed":
		x := strings.ToLower(strings.Join(strings.Fields(g["x"]), " "))
		what := x
		if r := strings.ToLower(g["rel"]); r != "" {
			what += " " + r
		}
		return newFact("family", "family:child:"+strings.ReplaceAll(what, " ", "-"), "User has "+withArticle(what)+".")
	case "age-range":
		x := strings.ToLower(cleanValue(g["x"]))
		if x == "" {
			return Fact{}, false
		}
		return newFact("identity", "identity:age", "User is in their "+x+".")
	case "home-in":
		// "I'm in Joburg (Randburg side)": home, unless the sentence says
		// the user is passing through.
		if passing.MatchString(m.in) {
			return Fact{}, false
		}
		return newFact("identity", "identity:location", "User lives in "+g["place"]+".")
	case "moved":
		return newFact("identity", "identity:location", "User moved to "+g["place"]+when+" and lives there.")
	case "home-neg":
		return newFact("identity", "identity:location", "User no longer lives in "+g["place"]+".")
	case "origin":
		return newFact("identity", "identity:origin", "User is from "+g["place"]+".")
	case "property":
		what := strings.TrimSpace(g["num"] + " " + strings.ToLower(g["x"]))
		if g["place"] != "" {
			what += " in " + g["place"]
		}
		return newFact("identity", "identity:property", "User owns "+what+".")
	case "field":
		x := cleanValue(g["x"])
		if x == "" {
			return Fact{}, false
		}
		return newFact("identity", "identity:job", "User works in "+x+".")
	case "avoid":
		what := m.allergen()
		if what == "" {
			return Fact{}, false
		}
		return newFact("health", "health:avoid:"+head(what), "User can't "+strings.ToLower(g["verb"])+" "+what+".")
	case "pregnant":
		return newFact("health", "health:pregnancy", "User is pregnant.")
	case "sold":
		if soldFor.MatchString(m.rest) {
			return Fact{}, false // "sold the Golf and got a Tesla": a switch
		}
		x := strings.ToLower(g["x"])
		class := deviceClass(x)
		if class == "" {
			class = x
		}
		return newFact("possession", "possession:"+class, "User sold their "+x+".")
	case "job":
		if v := strings.ToLower(g["verb"]); v != "" {
			x := cleanValue(g["x"])
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
	case "job-neg":
		return newFact("identity", "identity:job", "User is no longer "+withArticle(en(t.jobs, g["job"]))+".")
	case "employer":
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
	case "employer-neg":
		org := m.workplace()
		if org == "" {
			return Fact{}, false
		}
		return newFact("identity", "identity:job", "User no longer works at "+org+".")
	case "study":
		x := cleanValue(g["x"])
		if x == "" {
			return Fact{}, false
		}
		if g["place"] != "" {
			x += " in " + g["place"]
		}
		return newFact("identity", "identity:study", "User studies "+x+".")
	case "born":
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
	case "diet":
		return newFact("identity", "identity:diet", "User is "+en(t.diets, g["diet"])+".")
	case "diet-neg":
		return newFact("identity", "identity:diet", "User is no longer "+en(t.diets, g["diet"])+".")
	case "eats-again":
		what := strings.ToLower(en(t.foods, g["food"]))
		if what == "" {
			what = "everything"
		}
		if g["again"] == "" {
			return newFact("identity", "identity:diet", "User eats "+what+".")
		}
		return newFact("identity", "identity:diet", "User eats "+what+" again.")
	case "allergy", "allergy-neg", "intolerance", "cleft-allergy":
		what := m.allergen()
		if what == "" {
			return Fact{}, false
		}
		key := "health:allergy:" + head(what)
		switch m.slot {
		case "allergy-neg":
			return newFact("health", key, "User is not allergic to "+what+".")
		case "intolerance":
			return newFact("health", key, "User is "+what+" intolerant.")
		}
		return newFact("health", key, "User is allergic to "+what+".")
	case "condition":
		c := en(t.conditions, g["cond"])
		if n := g["type"]; n != "" && !strings.Contains(c, "type") {
			c = "type " + n + " " + c
		}
		key := strings.TrimPrefix(strings.TrimPrefix(c, "type 1 "), "type 2 ")
		return newFact("health", "health:condition:"+head(key), "User has "+c+".")
	case "member", "member-age":
		if rel == "" || name == "" || notNames[name] {
			return Fact{}, false
		}
		content := "User's " + rel + " is named " + name + "."
		if n := m.number(); n > 0 && n < 120 {
			content = "User's " + rel + " " + name + " is " + strconv.Itoa(n) + " years old."
		}
		return newFact("family", "family:"+relationKey(rel, name), content)
	case "pronoun-age":
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
	case "member-allergy", "member-intolerance", "member-cond":
		if rel == "" {
			return Fact{}, false
		}
		who := rel
		if name != "" {
			who += " " + name
		}
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
	case "count":
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
	case "pets":
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
	case "pet":
		pet := singularOf(en(t.pets, g["pet"]))
		if name == "" || notNames[name] {
			return Fact{}, false
		}
		if g["died"] != "" {
			return newFact("family", "family:pet:"+strings.ToLower(name), "User's "+pet+" "+name+" has died.")
		}
		return newFact("family", "family:pet:"+strings.ToLower(name), "User has "+withArticle(pet)+" named "+name+when+".")
	case "languages":
		langs := m.languageList()
		if langs == "" {
			return Fact{}, false
		}
		return newFact("identity", "identity:languages", "User speaks "+langs+".")
	case "turning":
		n := m.number()
		if n < 5 || n > 110 {
			return Fact{}, false
		}
		return newFact("identity", "identity:age", "User is turning "+strconv.Itoa(n)+".")
	case "born-year":
		return newFact("identity", "identity:age", "User was born in "+g["year"]+".")
	case "team":
		if c := strings.ToLower(g["club"]); c != "" {
			// "soy culé", "sou flamenguista": the club the word names.
			return newFact("preference", "preference:favorite:team", "User supports "+clubs[c]+" ("+g["club"]+").")
		}
		org := cleanValue(g["org"])
		if org == "" || !startsUpper(org) {
			return Fact{}, false
		}
		return newFact("preference", "preference:favorite:team", "User supports "+org+".")
	case "married":
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
	case "named-age", "named-diet", "named-cond", "named-allergy":
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
	case "pronoun-cond", "pronoun-allergy":
		// "she's allergic to eggs" after "my daughter Zoe is 7": whom the
		// message named last.
		lrel, lname, pet := m.referent(last)
		if lrel == "" || pet != "" {
			return Fact{}, false
		}
		who := lrel
		if lname != "" {
			who += " " + lname
		}
		if m.slot == "pronoun-allergy" {
			what := m.allergen()
			if what == "" {
				return Fact{}, false
			}
			return newFact("health", "health:"+relationKey(lrel, lname)+":allergy:"+head(what), "User's "+who+" is allergic to "+what+".")
		}
		c := en(t.conditions, g["cond"])
		return newFact("health", "health:"+relationKey(lrel, lname)+":condition:"+head(c), "User's "+who+" has "+c+".")
	case "died":
		if notNames[name] {
			return Fact{}, false
		}
		who := name
		if p := g["pet"]; p != "" {
			who = "User's " + singularOf(en(t.pets, p)) + " " + name
		}
		return newFact("family", "family:pet:"+strings.ToLower(name), who+" has died"+when+".")
	case "switched":
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
	case "breakup":
		// A partner no more: it replaces the partner named before.
		if name == "" || notNames[name] {
			return Fact{}, false
		}
		return newFact("family", "family:partner", "User and "+name+" split up"+when+"; "+name+" is no longer the user's partner.")
	case "dating":
		if name == "" || notNames[name] {
			return Fact{}, false
		}
		verb := strings.ToLower(g["verb"])
		if verb == "" {
			verb = "seeing"
		}
		return newFact("family", "family:partner", "User is "+verb+" "+name+".")
	case "habit":
		x := strings.ToLower(cleanValue(g["x"]))
		if x == "" {
			return Fact{}, false
		}
		verb := "does "
		if x == "gym" || x == "pool" || x == "climbing wall" || strings.HasPrefix(x, "spin") {
			verb = "goes to the "
		}
		return newFact("habit", "habit:"+head(x), strings.TrimSpace("User "+verb+x+" "+strings.TrimSpace(g["freq"]))+".")
	case "allergy-fix":
		// "It isn't latex, it's nickel": said over the old allergy, so it
		// replaces it.
		what, y := m.allergen(), cleanValue(g["y"])
		if what == "" || y == "" {
			return Fact{}, false
		}
		return newFact("health", "health:allergy:"+head(what), "User is allergic to "+y+", not "+what+".")
	case "learning":
		l := en(t.languages, g["l"])
		if l == "" {
			return Fact{}, false
		}
		// One language learned at a time is what people mean by "I'm
		// learning X": a new one replaces it ("I dropped Italian, I'm
		// learning Korean now").
		return newFact("habit", "habit:learning:language", "User is learning "+l+".")
	case "possess":
		y := cleanValue(g["y"])
		class := deviceClass(y)
		if y == "" || class == "" {
			return Fact{}, false
		}
		return newFact("possession", "possession:"+class, "User has "+withArticle(y)+".")
	case "swapped":
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
	case "quit-habit":
		x := strings.ToLower(cleanValue(g["x"]))
		if x == "" {
			return Fact{}, false
		}
		return newFact("habit", "habit:"+head(x), "User gave up "+x+".")
	case "took-up":
		y := strings.ToLower(cleanValue(g["y"]))
		if y == "" {
			return Fact{}, false
		}
		return newFact("habit", "habit:"+head(y), "User took up "+y+".")
	case "job-doing":
		x := strings.ToLower(cleanValue(g["x"]))
		if d, ok := drivingJobs[x]; ok {
			x = d
		}
		if x == "" {
			return Fact{}, false
		}
		return newFact("identity", "identity:job", "User is "+x+" for a living now.")
	case "done-with":
		x := cleanValue(g["x"])
		if x == "" {
			return Fact{}, false
		}
		return newFact("preference", "preference:"+head(x), "User is done with "+x+".")
	case "rather":
		x, y := cleanValue(g["x"]), cleanValue(g["y"])
		if x == "" || y == "" {
			return Fact{}, false
		}
		return newFact("preference", "preference:"+head(x), "User would rather "+thirdPerson(x)+" than "+thirdPerson(y)+".")
	case "activity":
		x := cleanValue(g["x"])
		if x == "" {
			return Fact{}, false
		}
		verb := strings.ToLower(g["verb"])
		return newFact("habit", "habit:"+head(x), "User has been "+en(activityVerbs, verb)+" "+x+" "+g["since"]+".")
	}
	return Fact{}, false
}

// nameOnly is a name without the capitalised word that only starts its
// sentence ("Sadly Rex" is Rex).
func nameOnly(name string) string {
	if first, rest, ok := strings.Cut(name, " "); ok && (fillers[strings.ToLower(first)] || notNames[first]) {
		return rest
	}
	return name
}

// workplace is where a match says the user works: a workplace the table
// names, in English ("a pharmacy"), else the name as said.
func (m *slotMatch) workplace() string {
	org := cleanValue(m.g["org"])
	if w, ok := m.lang.t.workplaces[strings.ToLower(org)]; ok {
		return w
	}
	return org
}

// named are the facts of the names a count, or a member, goes on to list:
// "two kids, Paul (9) and Lina (6)", "two cats, Mango and Pepper".
func (m *slotMatch) named() []Fact {
	rel := ""
	switch m.slot {
	case "count", "member":
		rel = singularOf(m.lang.en(m.lang.t.children, m.g["kids"]))
		if m.slot == "member" {
			rel = m.lang.en(m.lang.t.relations, m.g["rel"])
		}
		if rel == "children" || rel == "kid" || rel == "kids" || rel == "twins" {
			rel = "child"
		}
	}
	pet := ""
	if m.slot == "pets" || m.slot == "pet" {
		pet = singularOf(m.lang.en(m.lang.t.pets, m.g["pet"]))
	}
	names := namesIn(m.rest, m.lang)
	if n := m.g["names"]; n != "" {
		names = append(namesIn(n, m.lang), names...)
	}
	if m.slot == "member" || m.slot == "pet" {
		// The first name is the match's own; more may follow ("our twins
		// Kofi and Esi").
		if len(names) == 0 || m.slot == "pet" && len(names) < 2 {
			return nil
		}
	}
	var out []Fact
	for _, n := range names {
		if n.name == m.g["name"] {
			continue
		}
		switch {
		case pet != "":
			content := "User has " + withArticle(pet) + " named " + n.name + "."
			out = append(out, Fact{Kind: "family", Key: "family:pet:" + strings.ToLower(n.name), Content: content})
		case rel != "":
			content := "User's " + rel + " is named " + n.name + "."
			if n.age > 0 {
				content = "User's " + rel + " " + n.name + " is " + strconv.Itoa(n.age) + " years old."
			}
			out = append(out, Fact{Kind: "family", Key: "family:" + relationKey(rel, n.name), Content: content})
		}
	}
	return out
}

// namedAge is a name a list gives, with an age if it says one.
type namedAge struct {
	name string
	age  int
}

// listWord skips what joins a list of names and ages: commas, "and",
// articles, brackets, the words of an age.
var listWords = wordSet(`and y e und et a o la el der die le the aged de von years year old años anos jahre jahren ans ano
	baby youngest eldest oldest little one`)

// ageVerbs lead an age in a list ("Kayden is 12 Brielle is 9"): a name
// after one ("Gerhard ist Koch") ends the list.
var ageVerbs = wordSet(`is are was just turned turns who's whos now ist est é tiene tem hat`)

// namesIn reads the list of names (with ages) that starts s, stopping at
// the first word that is neither.
func namesIn(s string, l *language) []namedAge {
	var out []namedAge
	verb := false // an age verb was read: only an age may follow
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == ',' || r == '(' || r == ')' || r == ':' || r == '—' || r == '–' || r == '&'
	}) {
		low := strings.ToLower(strings.Trim(w, ".!?;"))
		switch {
		case low == "":
		case ageVerbs[low] && len(out) > 0:
			verb = true
		case listWords[low] || l.t.joins != nil && slices.Contains(l.t.joins, low):
		case isNumber(low, l):
			verb = false
			if len(out) > 0 && out[len(out)-1].age == 0 {
				n, _ := strconv.Atoi(low)
				if n == 0 {
					n = l.t.numbers[low]
				}
				out[len(out)-1].age = n
			}
		case startsUpper(w) && !notNames[w] && len([]rune(w)) > 1 && len(out) < 6 && !verb:
			out = append(out, namedAge{name: strings.Trim(w, ".!?;")})
		default:
			return out
		}
		if strings.ContainsAny(w, ".!?;") {
			return out
		}
	}
	return out
}

func isNumber(w string, l *language) bool {
	if _, err := strconv.Atoi(w); err == nil {
		return true
	}
	_, ok := l.t.numbers[w]
	return ok
}

// plural is an English noun's plural.
func plural(noun string) string {
	if strings.HasSuffix(noun, "s") || strings.HasSuffix(noun, "sh") || strings.HasSuffix(noun, "ch") {
		return noun + "es"
	}
	return noun + "s"
}

// countKey is the key of a count of children, however they are called.
func countKey(kids string) string {
	switch k := singularOf(strings.ToLower(kids)); k {
	case "kid", "children", "child":
		return "child"
	default:
		return k
	}
}

func newFact(kind, key, content string) (Fact, bool) {
	return Fact{Kind: kind, Key: key, Content: content}, true
}

// activityVerbs are the English forms of what the user has been doing.
var activityVerbs = map[string]string{"aprendiendo": "learning", "estudiando": "studying", "tocando": "playing",
	"lerne": "learning", "spiele": "playing", "apprends": "learning", "joue": "playing", "aprendendo": "learning",
	"estudando": "studying", "tocando violão": "playing"}

// number is the match's number, 0 for none.
func (m *slotMatch) number() int {
	if v := m.g["num"]; v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		return m.lang.t.numbers[strings.ToLower(v)]
	}
	return 0
}

// allergen is what the match says an allergy is to, in English when the
// language names it, else as said.
func (m *slotMatch) allergen() string {
	if a := m.g["allergen"]; a != "" {
		if e, ok := m.lang.t.allergens[strings.ToLower(a)]; ok {
			return e
		}
		return strings.ToLower(a)
	}
	x := cleanValue(m.g["x"])
	if x == "" || len(strings.Fields(x)) > 4 {
		return ""
	}
	return strings.ToLower(x)
}

// languageList is the languages a match lists, in English, joined.
func (m *slotMatch) languageList() string {
	var names []string
	seen := map[string]bool{}
	for _, w := range splitList(m.g["langs"], m.lang.t.joins) {
		e, ok := m.lang.t.languages[strings.ToLower(w)]
		where := ""
		if first, rest, cut := strings.Cut(w, " "); !ok && cut {
			// "isiZulu at home": the language, and where it is spoken.
			e, ok = m.lang.t.languages[strings.ToLower(first)]
			where = " (" + rest + ")"
		}
		if !ok || seen[e] {
			continue
		}
		seen[e] = true
		names = append(names, e+where)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// splitList splits "Portuguese, English and Spanish" into its items.
func splitList(s string, joins []string) []string {
	s = strings.ReplaceAll(s, ",", " , ")
	var out []string
	var cur []string
	for _, w := range strings.Fields(s) {
		sep := w == ","
		for _, j := range joins {
			sep = sep || strings.EqualFold(w, j)
		}
		if sep {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, " "))
			}
			cur = nil
			continue
		}
		cur = append(cur, w)
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

// cleanValue trims an open value of the words that lead or trail it
// without naming anything: articles, "now", "anymore".
func cleanValue(v string) string {
	v = strings.TrimSpace(strings.Trim(v, ".,;:!?\"'“”"))
	for {
		l := strings.ToLower(v)
		cut := false
		for _, w := range []string{" now", " anymore", " any more", " again", " too", " as well", " these days", " currently"} {
			if strings.HasSuffix(l, w) {
				v, cut = strings.TrimSpace(v[:len(v)-len(w)]), true
			}
		}
		if !cut {
			break
		}
	}
	if norm.Normalize(v) == "" || pronounObjects[strings.ToLower(strings.Fields(v + " x")[0])] {
		return ""
	}
	return v
}

// withArticle is a noun with "a" or "an" (a job, a pet).
func withArticle(noun string) string {
	if noun == "" {
		return noun
	}
	l := strings.ToLower(noun)
	for _, a := range []string{"a ", "an ", "the "} {
		if strings.HasPrefix(l, a) {
			return noun
		}
	}
	r, _ := utf8.DecodeRuneInString(l)
	if strings.ContainsRune("aeiou", unicode.ToLower(r)) && !strings.HasPrefix(l, "uni") && !strings.HasPrefix(l, "eu") {
		return "an " + noun
	}
	return "a " + noun
}

// referent is whom a pronoun ("she's 7", "he is diabetic") refers to: the
// nearest relation said before it in its sentence, since the person named
// last ("My husband Arjun and our two kids. My mother-in-law also stays
// with us, she is diabetic"), else the family member or pet the message
// named last; either only when the pronoun's gender fits. rel is in
// English; pet is set for a pet.
func (m *slotMatch) referent(last *slotMatch) (rel, name, pet string) {
	want := pronounGender[strings.ToLower(m.g["pron"])]
	fits := func(rel string) bool { return want == "" || relationGender[rel] == "" || relationGender[rel] == want }
	before := m.before
	if last != nil && last != m && last.in == m.in && last.end <= m.start {
		before = m.before[last.end:] // said after the last one named, in this sentence
	}
	words := strings.FieldsFunc(strings.ToLower(before), func(r rune) bool { return !unicode.IsLetter(r) })
	for i := len(words) - 1; i >= 0; i-- {
		for n := min(3, i+1); n >= 1; n-- { // "mother in law"
			if r := m.lang.t.relations[strings.Join(words[i+1-n:i+1], " ")]; r != "" && fits(r) {
				return r, "", ""
			}
		}
	}
	if last == nil || last == m {
		return "", "", ""
	}
	name = nameOnly(last.g["name"])
	if p := last.g["pet"]; p != "" {
		return "", name, last.lang.en(last.lang.t.pets, p)
	}
	rel = last.lang.en(last.lang.t.relations, last.g["rel"])
	if !fits(rel) {
		return "", "", ""
	}
	return rel, name, ""
}

// pronounGender and relationGender say whom a pronoun can refer to.
var (
	pronounGender  = map[string]string{"he": "m", "she": "f", "er": "m", "sie": "f", "il": "m", "elle": "f", "ele": "m", "ela": "f", "él": "m", "ella": "f"}
	relationGender = map[string]string{}
)

func init() {
	for _, r := range strings.Fields(`husband son father brother grandfather uncle nephew stepson stepfather father-in-law brother-in-law boyfriend`) {
		relationGender[r] = "m"
	}
	for _, r := range strings.Fields(`wife daughter mother sister grandmother aunt niece stepdaughter stepmother mother-in-law sister-in-law girlfriend`) {
		relationGender[r] = "f"
	}
}

// drivingJobs are what "ich fahre jetzt Bus" says the user does, in English.
var drivingJobs = map[string]string{"bus": "driving a bus", "taxi": "driving a taxi", "lkw": "driving a truck",
	"lastwagen": "driving a truck", "straßenbahn": "driving a tram", "zug": "driving trains"}

// soldFor follows a sale that is half of a switch.
var soldFor = regexp.MustCompile(`(?i)^\s*(?:(?:,|and)\s+)?(?:then\s+)?(?:got|bought|picked\s+up|replaced|y\s+(?:me\s+)?compr|et\s+(?:j['’]ai\s+)?achet|e\s+comprei|und\s+(?:habe\s+)?(?:mir\s+)?(?:ein|gekauft))`)

// passing says a stay is not home: "I'm in Rome for the weekend".
var passing = regexp.MustCompile(`(?i)\b(?:visit(?:ing)?|trip|holiday|vacation|for\s+work|business|this\s+week|today|tonight|this\s+weekend|for\s+the\s+weekend|conference|airport|layover|stuck|transit|hotel|hostel|a\s+few\s+days|staying\s+at|traffic|queue|line|meeting|class|lecture|office|shower|bed|kitchen|car|bus|train|hospital\s+waiting)\b`)

// clubs are the clubs a supporter's own name for themselves names.
var clubs = map[string]string{"culé": "FC Barcelona", "cule": "FC Barcelona", "madridista": "Real Madrid", "merengue": "Real Madrid",
	"colchonero": "Atlético de Madrid", "colchonera": "Atlético de Madrid", "bético": "Real Betis", "bética": "Real Betis",
	"sevillista": "Sevilla FC", "xeneize": "Boca Juniors", "millonario": "River Plate", "millonaria": "River Plate",
	"valencianista": "Valencia CF", "periquito": "Espanyol", "periquita": "Espanyol", "flamenguista": "Flamengo",
	"corinthiano": "Corinthians", "corinthiana": "Corinthians", "corintiano": "Corinthians", "corintiana": "Corinthians",
	"palmeirense": "Palmeiras", "são-paulino": "São Paulo", "são-paulina": "São Paulo", "sampaulino": "São Paulo",
	"sampaulina": "São Paulo", "vascaíno": "Vasco da Gama", "vascaína": "Vasco da Gama", "gremista": "Grêmio",
	"colorado": "Internacional", "colorada": "Internacional", "benfiquista": "Benfica", "portista": "FC Porto",
	"sportinguista": "Sporting CP", "santista": "Santos", "cruzeirense": "Cruzeiro", "atleticano": "Atlético Mineiro",
	"atleticana": "Atlético Mineiro", "botafoguense": "Botafogo", "tricolor": "Fluminense"}
