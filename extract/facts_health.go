package extract

import (
	"strings"
)

// The slots of the user's diet, allergies, intolerances and conditions: each builder makes its slot's
// fact from a match (slotCtx).

func init() {
	register(buildAvoid, "avoid")
	register(buildPregnant, "pregnant")
	register(buildDiet, "diet")
	register(buildDietNeg, "diet-neg")
	register(buildEatsAgain, "eats-again")
	register(buildAllergy, "allergy", "allergy-neg", "intolerance", "cleft-allergy")
	register(buildCondition, "condition")
	register(buildAllergyFix, "allergy-fix")
}

func buildAvoid(sc *slotCtx) (Fact, bool) {
	m := sc.m
	g := sc.g
	what := m.allergen()
	if what == "" {
		return Fact{}, false
	}
	verb := strings.ToLower(g["verb"])
	if verb == "do" || verb == "handle" || verb == "stomach" {
		verb = "have" // "I can't do dairy"
	}
	return newFact("health", "health:avoid:"+head(what), "User can't "+verb+" "+what+".")
}

func buildPregnant(sc *slotCtx) (Fact, bool) {
	return newFact("health", "health:pregnancy", "User is pregnant.")
}

func buildDiet(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	return newFact("identity", "identity:diet", "User is "+en(t.diets, g["diet"])+".")
}

func buildDietNeg(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	return newFact("identity", "identity:diet", "User is no longer "+en(t.diets, g["diet"])+".")
}

func buildEatsAgain(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	what := strings.ToLower(en(t.foods, g["food"]))
	if what == "" {
		what = "everything"
	}
	if g["again"] == "" {
		return newFact("identity", "identity:diet", "User eats "+what+".")
	}
	return newFact("identity", "identity:diet", "User eats "+what+" again.")
}

func buildAllergy(sc *slotCtx) (Fact, bool) {
	m := sc.m
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
}

func buildCondition(sc *slotCtx) (Fact, bool) {
	t := sc.t
	g := sc.g
	en := sc.m.lang.en
	c := en(t.conditions, g["cond"])
	if n := g["type"]; n != "" && !strings.Contains(c, "type") {
		c = "type " + n + " " + c
	}
	key := strings.TrimPrefix(strings.TrimPrefix(c, "type 1 "), "type 2 ")
	return newFact("health", "health:condition:"+head(key), "User has "+c+".")
}

func buildAllergyFix(sc *slotCtx) (Fact, bool) {
	m := sc.m
	g := sc.g
	// "It isn't latex, it's nickel": said over the old allergy, so it
	// replaces it.
	what, y := m.allergen(), cleanValue(g["y"])
	if what == "" || y == "" {
		return Fact{}, false
	}
	y = m.lang.en(sc.t.allergens, y) // "marisco": shellfish
	return newFact("health", "health:allergy:"+head(what), "User is allergic to "+y+", not "+what+".")
}
