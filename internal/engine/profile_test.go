package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/llm/llmtest"
	"github.com/caddy-memory/memory/store"
)

// say learns one proxied turn of owner in its own conversation, and waits.
func say(t *testing.T, e *Engine, owner, text string) {
	t.Helper()
	conversations.n++
	e.Enqueue(&Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", Conversation: fmt.Sprintf("c-%d", conversations.n), Turn: 1,
		NewTurn: true, User: text, Response: chatJSON("Noted."), ContentType: "application/json", Time: time.Now()}})
	settle(t, e)
}

var conversations struct{ n int }

// recallFor is the proxy's recall, profile on, for a question of owner.
func recallFor(t *testing.T, e *Engine, owner, q string, profileTokens int) Recalled {
	t.Helper()
	rec, err := e.Recall(context.Background(), RecallRequest{
		SearchRequest: SearchRequest{Owner: owner, Query: q, Limit: 10, MinScore: DefaultMinScore, Gate: true},
		Profile:       true, ProfileTokens: profileTokens, MaxTokens: 800, MaxItems: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// The profile rides with a question that names none of it, constraints
// first; the retrieved part does not repeat it; small talk gets nothing.
func TestProfileRidesWithEveryQuestion(t *testing.T) {
	for _, local := range []bool{true, false} {
		t.Run(fmt.Sprintf("records=%v", local), func(t *testing.T) {
			cfg := Config{Dir: t.TempDir(), Shards: 2, LockTimeout: 200 * time.Millisecond}
			if !local {
				cfg.LocalSearchMax = 1 // searched, and its profile kept up, through the index and the change log
			}
			e, err := openConfig(t, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer closeEngine(t, e)
			owner := e.OwnerID("maria")
			say(t, e, owner, "I prefer vegetarian food and I cycle to work.")
			say(t, e, owner, "Hi, I am Maria. I'm allergic to shellfish.")
			rec := recallFor(t, e, owner, "Suggest a snack for me.", 0)
			if rec.Block == "" || len(rec.Memories) < 3 {
				t.Fatalf("no profile for an unrelated question: %+v", rec)
			}
			if first := rec.Memories[0].Memory.Content; first != "User is allergic to shellfish." || !rec.Memories[0].Profile {
				t.Errorf("the block starts with %q, want the allergy", first)
			}
			for _, want := range []string{"User's name is Maria.", "User prefers vegetarian food.", "User cycles to work."} {
				if !strings.Contains(rec.Block, want) {
					t.Errorf("the block lacks %q:\n%s", want, rec.Block)
				}
			}
			// A question that finds the allergy does not show it twice, nor
			// the turn it was learned from.
			rec = recallFor(t, e, owner, "Which shellfish dishes should I avoid?", 0)
			if n := strings.Count(rec.Block, "allergic to shellfish"); n != 1 {
				t.Errorf("the allergy shows %d times:\n%s", n, rec.Block)
			}
			if got := recallFor(t, e, owner, "good morning!", 0); got.Block != "" || got.Nothing != NothingSmallTalk {
				t.Errorf("small talk got %+v", got)
			}
			// A later fact joins it.
			say(t, e, owner, "I live in Porto.")
			if rec := recallFor(t, e, owner, "Suggest a snack for me.", 0); !strings.Contains(rec.Block, "User lives in Porto.") {
				t.Errorf("the new fact is not in the profile:\n%s", rec.Block)
			}
		})
	}
}

// Within its budget the profile drops preferences before it drops a
// health constraint, whatever the order things were said in.
func TestProfileBudgetKeepsConstraints(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	owner := e.OwnerID("ana")
	say(t, e, owner, "I have a severe nut allergy and must avoid all nuts and nut byproducts.")
	for _, p := range []string{"I prefer window seats on long flights.", "I love jazz music from the fifties.",
		"I prefer hiking in the mountains over lying on the beach.", "I usually prefer tea over coffee in the morning."} {
		say(t, e, owner, p)
	}
	say(t, e, owner, "I follow a strict gluten-free diet.")
	for _, budget := range []int{20, 40, 60, 200} {
		rec := recallFor(t, e, owner, "Any ideas for the weekend?", budget)
		shown := 0
		for _, m := range rec.Memories {
			if m.Profile {
				shown += block.EstimateTokens("- " + m.Memory.Content + "\n")
			}
		}
		if shown > budget {
			t.Errorf("budget %d: the profile takes about %d tokens", budget, shown)
		}
		if budget >= 40 && (!strings.Contains(rec.Block, "nut allergy") || !strings.Contains(rec.Block, "gluten-free")) {
			t.Errorf("budget %d: the constraints were cut:\n%s", budget, rec.Block)
		}
		if budget < 60 && strings.Contains(rec.Block, "jazz") {
			t.Errorf("budget %d: a liking took the room of a constraint:\n%s", budget, rec.Block)
		}
		if budget == 200 && !strings.Contains(rec.Block, "window seats") {
			t.Errorf("budget 200 has room for the preferences:\n%s", rec.Block)
		}
	}
}

// What the user no longer has or is ("not allergic to nuts", "not vegan
// anymore") replaces a constraint but is none: it never takes a
// constraint's room.
func TestProfileRetractionIsNoConstraint(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	owner := e.OwnerID("ana")
	say(t, e, owner, "I follow a strict gluten-free diet.")
	say(t, e, owner, "I'm not allergic to nuts.")
	rec := recallFor(t, e, owner, "Any ideas for the weekend?", 12)
	if !strings.Contains(rec.Block, "gluten-free") || strings.Contains(rec.Block, "not allergic") {
		t.Errorf("a retraction took the room of the diet:\n%s", rec.Block)
	}
}

// A question the user once asked is no memory about them; a turn saying
// what a later fact changed is not injected as current.
func TestRecallLeavesOutEchoesAndSupersededTurns(t *testing.T) {
	for _, local := range []bool{true, false} {
		t.Run(fmt.Sprintf("records=%v", local), func(t *testing.T) {
			cfg := Config{Dir: t.TempDir(), Shards: 1, LockTimeout: 200 * time.Millisecond}
			if !local {
				cfg.LocalSearchMax = -1
			}
			e, err := openConfig(t, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer closeEngine(t, e)
			owner := e.OwnerID("ana")
			say(t, e, owner, "I live in Lisbon, close to the river.")
			say(t, e, owner, "Thanks! Also, what's the weather like in spring by the river?")
			say(t, e, owner, "I moved to Porto last month.")
			rec := recallFor(t, e, owner, "What's the weather like where I live, by the river?", 0)
			if !strings.Contains(rec.Block, "Porto") {
				t.Errorf("the new home is not in the block:\n%s", rec.Block)
			}
			if strings.Contains(rec.Block, "Lisbon") {
				t.Errorf("the old home is presented as current:\n%s", rec.Block)
			}
			if strings.Contains(rec.Block, "what's the weather like in spring") {
				t.Errorf("the user's own question came back as a memory:\n%s", rec.Block)
			}
			// Asked what was discussed, the question is what was said.
			rec = recallFor(t, e, owner, "What did we discuss about the weather in spring?", 0)
			if !strings.Contains(rec.Block, "what's the weather like in spring") {
				t.Errorf("what was discussed lacks the question:\n%s", rec.Block)
			}
			// History stays readable.
			found := false
			for _, r := range search(t, e, owner, "Lisbon river") {
				found = found || strings.Contains(r.Memory.Content, "I live in Lisbon")
			}
			if !found {
				t.Error("the Lisbon turn is gone from search")
			}
		})
	}
}

// TestASupersededTurnInAnotherLanguageStaysOut: a turn said in Spanish
// that stated what a fact said before it changed is not injected as
// current either, though it shares no word with the fact's English but
// the name ("Tengo un perro, Toby" once "Toby has died").
func TestASupersededTurnInAnotherLanguageStaysOut(t *testing.T) {
	e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 1, LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	owner := e.OwnerID("lola")
	say(t, e, owner, "Tengo un perro, Toby, un mestizo de 12 años, y le cuesta subir las escaleras.")
	say(t, e, owner, "Se nos murió Toby en febrero. Hemos adoptado una gata, se llama Luna.")
	rec := recallFor(t, e, owner, "¿Qué le compro a mi mascota para su cumpleaños?", 0)
	if !strings.Contains(rec.Block, "Luna") {
		t.Errorf("the new pet is not in the block:\n%s", rec.Block)
	}
	if strings.Contains(rec.Block, "Tengo un perro, Toby") {
		t.Errorf("the turn saying what changed rides as current:\n%s", rec.Block)
	}
}

// A standing fact the budget left out still reaches a question of its
// domain, after the profile; it moves nothing the question's words found.
func TestBridgeBringsBackAFactTheBudgetLeftOut(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	owner := e.OwnerID("many")
	say(t, e, owner, "I prefer cruelty-free beauty products.")
	for _, p := range []string{"I prefer aisle seats on flights.", "I prefer boutique hotels to chains.",
		"I prefer hiking over beaches.", "I prefer board games over video games.", "I prefer audiobooks to paper books.",
		"I prefer jazz over pop.", "I prefer linen shirts in summer.", "I prefer tea over coffee."} {
		say(t, e, owner, p)
	}
	const q = "Can you recommend a nourishing lip balm?"
	rec := recallFor(t, e, owner, q, 40)
	if !strings.Contains(rec.Block, "cruelty-free beauty products") {
		t.Fatalf("the left-out beauty preference did not reach a question about lip balm:\n%s", rec.Block)
	}
	for _, m := range rec.Memories {
		if strings.Contains(m.Memory.Content, "beauty") && m.Profile {
			t.Errorf("the bridged fact is counted in the profile's budget")
		}
	}
	// Nothing in another domain is brought back.
	if rec := recallFor(t, e, owner, "Which laptop should I buy for programming?", 40); strings.Contains(rec.Block, "beauty") {
		t.Errorf("a question about laptops got the beauty preference:\n%s", rec.Block)
	}
}

// With a model, the distiller is shown the head of the profile among what
// is known, so a session that changes a standing fact can replace it even
// when the facts most like the session are others.
func TestTheDistillerSeesTheProfile(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	e, _ := withModel(t, t.TempDir(), srv, 100*time.Millisecond)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-home")
	puts := []OwnedPut{{owner, store.Put{Kind: "identity", Key: "home", Content: "The user lives in Lisbon.", Source: store.SourceAPI}}}
	for i := range 14 {
		puts = append(puts, OwnedPut{owner, store.Put{Kind: "note", Content: fmt.Sprintf("The user settled near the Douro on trip %d.", i), Source: store.SourceAPI}})
	}
	if _, err := e.Remember(context.Background(), puts...); err != nil {
		t.Fatal(err)
	}
	srv.Answer(func(c llmtest.Call) llmtest.Answer {
		m := regexp.MustCompile(`(?m)^(\d+)\. The user lives in Lisbon\.$`).FindStringSubmatch(c.Text())
		if m == nil {
			return llmtest.Answer{Content: `{"facts": []}`}
		}
		return llmtest.Answer{Content: `{"episode": {"summary": "A move."}, "facts": [
			{"content": "The user lives in Porto.", "category": "identity", "importance": 8, "replaces": ` + m[1] + `}]}`}
	})
	said(t, e, owner, "s1", 1, "Finally settled near the Douro, in Porto.", "Lovely!")
	waitFor(t, "the distillation", func() bool { return e.distiller.running() != nil && len(srv.Calls()) > 0 })
	if err := e.WaitDistilled(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec := recallFor(t, e, owner, "Any weekend plans?", 0); !strings.Contains(rec.Block, "Porto") || strings.Contains(rec.Block, "Lisbon") {
		t.Errorf("the profile after the model's update:\n%s", rec.Block)
	}
}

// A large owner's profile is read as the search postings are built after
// a start, not by its first request; a small owner's waits to be asked.
func TestLargeOwnersProfileIsReadAtStart(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, Shards: 1, LockTimeout: 200 * time.Millisecond, LocalSearchMax: 8}
	e, err := openConfig(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	large, small := e.OwnerID("sk-large"), e.OwnerID("sk-small")
	var puts []store.Put
	for i := range 20 {
		puts = append(puts, store.Put{Kind: "note", Key: fmt.Sprint("n", i), Content: fmt.Sprint("Note ", i, " about the allotment.")})
	}
	puts = append(puts, store.Put{Kind: "health", Key: "health:allergy", Content: "User is allergic to shellfish."})
	remember(t, e, large, puts...)
	remember(t, e, small, store.Put{Kind: "health", Key: "health:allergy", Content: "User is allergic to peanuts."})
	closeEngine(t, e)

	e, err = openConfig(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := e.postings.wait(ctx, e.store.LastSeq(), true); err != nil {
		t.Fatal(err)
	}
	if !e.recall.HoldsProfile(large) {
		t.Fatal("the large owner's profile was not read as the postings were built")
	}
	if e.recall.HoldsProfile(small) {
		t.Error("a small owner's profile was read before it was asked for")
	}
	if rec := recallFor(t, e, large, "Suggest a dinner", 0); !strings.Contains(rec.Block, "shellfish") {
		t.Errorf("the block after the start:\n%s", rec.Block)
	}
}

// TestATurnNamingWhatEndedStaysOut: once the user says they gave up,
// sold or switched from something, what they said of it before comes back
// no more as current, though no rule read a fact from it ("I drive a 2012
// Ford Focus"; "my Galaxy S21 dies by 3pm"); the turn that says the change
// still can.
func TestATurnNamingWhatEndedStaysOut(t *testing.T) {
	for _, c := range []struct {
		before, change, ask, old, new string
	}{
		{"I can't start my mornings without my coffee, two cups at least.", "I gave up coffee last month, tea only now.",
			"What should I drink at breakfast?", "without my coffee", "gave up coffee"},
		{"I drive a 2012 Ford Focus and the clutch is slipping.", "Sold the Ford in the end!",
			"When should my car be serviced?", "Ford Focus and the clutch", "sold"},
		{"my Galaxy S21 battery is dead by 3pm every day, any tips?", "finally switched to a Pixel 8",
			"how do i set screen time limits on my phone?", "Galaxy S21", "Pixel 8"},
		{"Je joue au foot en club le dimanche matin, en vétérans.", "J'ai arrêté le foot, les genoux ne suivaient plus.",
			"Comment je m'échauffe avant mon match de foot?", "Je joue au foot", "foot"},
	} {
		t.Run(c.old, func(t *testing.T) { wantChanged(t, afterAChange(t, c.before, c.change, c.ask).Block, c.old, c.new) })
	}
}

// TestAChangedFactHidesItsOldTurnInAnyLanguage: once a fact changes, the
// turn that stated its old value in the user's own language is not shown
// as current, though the fact is written in English and the turn shares
// only a stem with it ("vegetariana", "allergique").
func TestAChangedFactHidesItsOldTurnInAnyLanguage(t *testing.T) {
	for _, c := range []struct{ before, change, ask, old string }{
		{"Soy vegetariana desde hace cinco años, nada de carne.", "He vuelto a comer pescado, me lo recomendó la médica.",
			"¿Qué me recomiendas para cenar?", "Soy vegetariana"},
		{"Je suis allergique aux noix, attention aux desserts.", "En fait ce n'est pas aux noix que je suis allergique, c'est aux noisettes.",
			"Un dessert pour dimanche ?", "allergique aux noix, attention"},
		{"Ich bin Vegetarierin, esse aber noch Käse.", "Seit Januar lebe ich vegan, also kein Käse mehr.",
			"Was kann ich heute Abend kochen?", "Ich bin Vegetarierin"},
		{"Je m'appelle Camille, j'habite à Lyon, je suis prof de piano et végétarienne depuis dix ans.",
			"Petite mise à jour : je ne suis plus végétarienne, j'ai recommencé à manger du poisson.",
			"Qu'est-ce que je pourrais cuisiner ce soir ?", "végétarienne depuis dix ans"},
	} {
		t.Run(c.old, func(t *testing.T) {
			if rec := afterAChange(t, c.before, c.change, c.ask); strings.Contains(rec.Block, c.old) {
				t.Errorf("the old value is presented as current:\n%s", rec.Block)
			}
		})
	}
}

// wantChanged fails unless block shows the new value and not the old.
func wantChanged(t *testing.T, block, old, new string) {
	t.Helper()
	if strings.Contains(block, old) {
		t.Errorf("the old value %q rides as current:\n%s", old, block)
	}
	if !strings.Contains(block, new) {
		t.Errorf("the new value %q is not in the block:\n%s", new, block)
	}
}

// afterAChange is the recall for ask of a new owner who said before, then
// change, in conversations of their own.
func afterAChange(t *testing.T, before, change, ask string) Recalled {
	t.Helper()
	e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 1, LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	owner := e.OwnerID("u")
	say(t, e, owner, before)
	time.Sleep(2 * time.Millisecond) // the change is said after
	say(t, e, owner, change)
	return recallFor(t, e, owner, ask, 0)
}

// TestWhatNoRuleReadsRidesWithTheProfile: a standing thing said in a form
// no rule reads reaches a question that shares no word with it, in the
// user's own words, as the facts do.
func TestWhatNoRuleReadsRidesWithTheProfile(t *testing.T) {
	for _, c := range []struct{ said, ask, want string }{
		{"Ha, there's a bake-off in the staffroom. I can never eat any of it (coeliac, joys) but I'm expected to enter.",
			"Fancy a treat this afternoon, what can I grab from a café?", "coeliac"},
		{"Trabajo de guía turística en Granada y los fines de semana hago rutas por la Alpujarra.",
			"¿Qué hago este sábado?", "Granada"},
	} {
		t.Run(c.want, func(t *testing.T) {
			e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 1, LockTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer closeEngine(t, e)
			owner := e.OwnerID("u")
			say(t, e, owner, c.said)
			if rec := recallFor(t, e, owner, c.ask, 0); !strings.Contains(rec.Block, c.want) {
				t.Errorf("what the user said is not in the block:\n%s", rec.Block)
			}
		})
	}
}

// TestANoteSaidBeforeAChangeStopsRiding: what the user said in their own
// words of where they live, work or whom they are with stops riding once a
// later fact of the same thing says the value now, whether or not a rule
// read the old sentence, in any language; a note of something else stays.
func TestANoteSaidBeforeAChangeStopsRiding(t *testing.T) {
	for _, c := range []struct{ before, change, ask, old, new string }{
		{"I work in a call centre for an energy company, honestly it's soul destroying most days.",
			"I'm driving buses for a living now and I actually like going to work.",
			"How do I stay alert at work?", "call centre", "buses"},
		{"Je travaille chez Carrefour, au siège à Massy, dans la logistique depuis huit ans.",
			"Je travaille chez Decathlon maintenant.", "Des conseils pour mon boulot ?", "Carrefour", "Decathlon"},
		{"We live in Denver and I've been trying to get back into running but the altitude makes it twice as hard.",
			"We moved to Asheville last month!", "Where can I go running this weekend?", "Denver", "Asheville"},
		{"Mein Freund Lukas und ich planen im Sommer einen Wanderurlaub in Tirol mit seinen Eltern.",
			"Ich bin jetzt mit Jonah zusammen.", "Was schenke ich meinem Freund?", "Lukas", "Jonah"},
		// A change said in a form no rule reads ends what was said of
		// its topic before, a note or a fact.
		{"I'm in my second year of a physio degree at Cardiff Met, it's intense but I love it.",
			"Switched unis over the summer, I'm at Bristol now and the campus is gorgeous.",
			"How should I plan my study week?", "Cardiff Met", "Bristol"},
		{"I use a Pixel 7 for everything.", "Been on an iPhone 15 for a month now, honestly the camera is unreal.",
			"Which apps should I get for my phone?", "Pixel 7", "iPhone 15"},
		// The turn that says a job ended names it, and says what came
		// after: it rides, though what ended does not.
		{"Ich arbeite als Ingenieurin bei Airbus in Hamburg und pendle jeden Tag.",
			"Neuigkeiten: Ich habe bei Airbus gekündigt und fange am 1. als Produktmanagerin bei Otto an.",
			"Wie stelle ich mich im neuen Team vor?", "Ingenieurin", "Otto"},
		// A move said in words no rule reads, in Portuguese, ends the
		// home a rule read.
		{"oi moro em Salvador com meu marido e sou técnica de enfermagem.", "mudamos pra lauro de freitas mes passado, casa maior, mais perto da praia",
			"o que fazer no sábado perto de casa?", "Salvador", "lauro de freitas"},
		// What a later fact says ended, under another key than the fact
		// that said it.
		{"I'm studying law at Edinburgh.", "Dropped law, I'm doing a history degree at Glasgow now.",
			"How do I plan my reading week?", "law at Edinburgh", "history"},
		// A change of car said without its subject, after a lead word.
		{"I drive a 2015 Honda Civic.", "Finally upgraded the car, it's a Tesla Model 3 now!",
			"How often should I service my car?", "Civic", "Tesla"},
		// A partner who is no longer one, said of the relation.
		{"I live with my wife Grace and our son Leo, he's 5.", "Me and my wife split up in March, so it's just me and Leo now.",
			"Ideas for a weekend with my son?", "Grace", "split up"},
		// An age that changed: the turn that said the old one names it
		// by a number only.
		{"My daughter Isla is 6 and obsessed with dinosaurs, like properly obsessed.", "Isla turned 7 last week!",
			"Ideas for a weekend with my daughter?", "Isla is 6", "7"},
		{"Unser Sohn Jonas ist 4 und geht seit Herbst in die Kita um die Ecke.", "Jonas ist jetzt 5!",
			"Was kann ich mit meinem Sohn am Wochenende machen?", "Jonas ist 4", "5"},
		// An allergy corrected in the user's language: the old note's
		// words are the tables' ("amendoim": peanuts).
		{"Sou alérgica a amendoim, então nada de paçoca pra mim haha.",
			"Fiz os exames e descobri que sou alérgica a camarão, não a amendoim!",
			"O que posso comer no lanche?", "nada de paçoca", "shellfish"},
		{"Soy alérgico a los cacahuetes, así que nada de turrón en Navidad.",
			"Resulta que soy alérgico al marisco, no a los cacahuetes.",
			"¿Qué puedo cenar hoy?", "nada de turrón", "shellfish"},
		{"Ich studiere Maschinenbau in Aachen, im vierten Semester.", "Hab inzwischen an die Uni in München gewechselt, gleiches Fach.",
			"Wie plane ich mein Semester am besten?", "Aachen", "München"},
	} {
		t.Run(c.old, func(t *testing.T) { wantChanged(t, afterAChange(t, c.before, c.change, c.ask).Block, c.old, c.new) })
	}
	// "now" beside no new value changes nothing: the job rides on.
	rec := afterAChange(t, "I'm a nurse at St Mary's on the cardiac ward.", "I work nights now, honestly it's killing me.",
		"How do I stay awake at work?")
	if !strings.Contains(rec.Block, "nurse") {
		t.Errorf("a job stopped riding with 'I work nights now':\n%s", rec.Block)
	}
	rec = afterAChange(t, "I can never eat anything at bake-offs (coeliac, joys), and our allotment keeps me sane.",
		"We moved to Asheville last month!", "What should I bake for the party?")
	if !strings.Contains(rec.Block, "coeliac") {
		t.Errorf("a note of something else stopped riding with a move:\n%s", rec.Block)
	}
}

// TestANewDietKeepsAHealthCondition: "I'm diabetic" is a condition, not a
// diet a later "I've gone vegan" replaces: both ride.
func TestANewDietKeepsAHealthCondition(t *testing.T) {
	rec := afterAChange(t, "fyi I'm diabetic (type 1), so keep the carbs sensible.", "I've gone vegan!", "What should I cook tonight?")
	for _, want := range []string{"diabetic", "vegan"} {
		if !strings.Contains(rec.Block, want) {
			t.Errorf("%q is not in the block:\n%s", want, rec.Block)
		}
	}
}
