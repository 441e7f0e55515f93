package main

// Journeys: people talking to a chat model through the proxy as users do,
// then asked, each question in a new conversation, something that needs
// what they said about themselves without naming it. The block each
// question brings is graded: is the fact it needs there, and does it show
// a replaced value as current, another person's fact as the user's, or the
// user's own question echoed back.
//
// A journey file is JSON:
//
//	{"about": "what the set is (free text)",
//	 "people": [{
//	   "id": "grace-household",                 // unique; the owner key is journeys-<id>
//	   "tags": ["household", "family"],         // categories of every probe of the person
//	   "note": "free text, for the reader",
//	   "conversations": [                       // in order; each a list of user messages,
//	     ["We live in Glasgow with our dog Biscuit.", "What's a good lead for a puppy?"],
//	     ["I moved to Bristol last month."]     // sent with the conversation so far
//	   ],
//	   "must_not": {"other": ["Tomasz"]},       // optional: holds for every probe
//	   "probes": [{                             // each asked in a new conversation
//	     "ask": "What should I pack for a weekend at home?",
//	     "tags": ["relative-date"],             // added to the person's
//	     "must": ["Bristol", ["dog", "Biscuit"]],
//	     "must_not": {"stale": ["Glasgow"], "other": ["\\bRome\\b"], "echo": ["good lead"]}
//	   }, {
//	     "ask": "hi, how are you?", "empty": true   // small talk: no block at all
//	   }]
//	 }]}
//
// Patterns are case-insensitive regular expressions (RE2; a plain word is a
// substring), matched against each line of the block, its date left out.
// A must entry is a group: a string, or a list of which one is enough;
// every group must be in the block (on any line) for the probe to hit.
// must_not patterns say why a line is wrong:
//   - stale: a replaced value. A line counts only when it presents it as
//     current: not marked "(earlier", not saying it ended ("moved from",
//     "no longer", "ya no", "nicht mehr"...: see ended), and not holding
//     one of the probe's must patterns beside it (a line saying the change).
//   - other: another person's fact (a pasted letter's writer, a role-play
//     character, the user's daughter's allergy written as the user's). Any
//     line holding it counts, a transcript line too: the probe asks about
//     the user, and a pasted stranger's home in its block is the same false
//     fact to a model. Write the pattern to the attribution where the value
//     may rightly appear ("User is allergic to eggs", not "eggs").
//   - echo: what the user asked, coming back as a memory. Besides these, a
//     line holding an earlier message of the person that only asks (every
//     sentence of it a question), or an earlier probe's question, is an
//     echo.
//
// In patterns, {month-1} (any offset) stands for that month of the run's
// date with its year: "April 2026" (or "April, 2026", "April of 2026"; the
// month in English, Spanish, German, French or Portuguese: "abril de
// 2026"), "2026-04" or "04/2026"; {year-1} for the year. "I moved to
// Bristol last month" must become a date, not stay "last month". The proxy stamps each turn with the time it
// sees it, so a message cannot be dated in the past; relative dates are
// graded against the day of the run.
//
// Every person's messages are sent in rounds: the first message of every
// person, then learning settles (proxy.settle), then the second, and so
// on, the probes last. What a probe finds then never depends on how fast
// the machine learned.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-memory/memory/internal/block"
)

type journeySet struct {
	About  string    `json:"about,omitempty"`
	People []*person `json:"people"`
}

type person struct {
	ID            string     `json:"id"`
	Tags          []string   `json:"tags,omitempty"`
	Note          string     `json:"note,omitempty"`
	Conversations [][]string `json:"conversations"`
	// MustNot holds for every probe of the person.
	MustNot mustNot  `json:"must_not"`
	Probes  []*probe `json:"probes"`
}

type probe struct {
	Ask     string   `json:"ask"`
	Tags    []string `json:"tags,omitempty"`
	Must    []anyOf  `json:"must,omitempty"`
	MustNot mustNot  `json:"must_not"`
	Empty   bool     `json:"empty,omitempty"`

	must               [][]*regexp.Regexp
	stale, other, echo []*regexp.Regexp
}

// mustNot are the patterns no line of a block may hold, by why.
type mustNot struct {
	Stale []string `json:"stale,omitempty"`
	Other []string `json:"other,omitempty"`
	Echo  []string `json:"echo,omitempty"`
}

// anyOf is a must group: a pattern, or a list of patterns one of which is
// enough.
type anyOf []string

func (a *anyOf) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*a = anyOf{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("a must group is a pattern or a list of patterns: %s", b)
	}
	*a = many
	return nil
}

// loadJourneys reads a journey file and compiles its patterns for a run on
// the day now.
func loadJourneys(path string, now time.Time) (*journeySet, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var set journeySet
	if err := dec.Decode(&set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(set.People) == 0 {
		return nil, fmt.Errorf("%s: no people", path)
	}
	seen := map[string]bool{}
	for _, pe := range set.People {
		if err := pe.compile(now); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if seen[pe.ID] {
			return nil, fmt.Errorf("%s: person %q twice", path, pe.ID)
		}
		seen[pe.ID] = true
	}
	return &set, nil
}

func (pe *person) compile(now time.Time) error {
	if pe.ID == "" || len(pe.Conversations) == 0 || len(pe.Probes) == 0 {
		return fmt.Errorf("person %q needs an id, conversations and probes", pe.ID)
	}
	for _, c := range pe.Conversations {
		if len(c) == 0 {
			return fmt.Errorf("person %s: an empty conversation", pe.ID)
		}
	}
	for i, pr := range pe.Probes {
		at := fmt.Sprintf("person %s, probe %d", pe.ID, i+1)
		if strings.TrimSpace(pr.Ask) == "" {
			return fmt.Errorf("%s: nothing to ask", at)
		}
		if pr.Empty && len(pr.Must) > 0 {
			return fmt.Errorf("%s: a probe expecting no block needs no fact", at)
		}
		no := mustNot{Stale: append(slices.Clone(pe.MustNot.Stale), pr.MustNot.Stale...),
			Other: append(slices.Clone(pe.MustNot.Other), pr.MustNot.Other...), Echo: append(slices.Clone(pe.MustNot.Echo), pr.MustNot.Echo...)}
		if !pr.Empty && len(pr.Must) == 0 && len(no.Stale)+len(no.Other)+len(no.Echo) == 0 {
			return fmt.Errorf("%s: nothing to grade (must, must_not or empty)", at)
		}
		var err error
		comp := func(pats []string) []*regexp.Regexp {
			var out []*regexp.Regexp
			for _, s := range pats {
				re, e := compilePattern(s, now)
				if e != nil && err == nil {
					err = fmt.Errorf("%s: %w", at, e)
				}
				out = append(out, re)
			}
			return out
		}
		pr.must = nil
		for _, g := range pr.Must {
			if len(g) == 0 {
				return fmt.Errorf("%s: an empty must group", at)
			}
			pr.must = append(pr.must, comp(g))
		}
		pr.stale, pr.other, pr.echo = comp(no.Stale), comp(no.Other), comp(no.Echo)
		if err != nil {
			return err
		}
	}
	return nil
}

// datePlaceholder is {month-1}, {month+0}, {year-2}... in a pattern.
var datePlaceholder = regexp.MustCompile(`\{(month|year)([+-]\d+)?\}`)

// monthNames are the months in the languages the sets are written in,
// January first.
var monthNames = [12][]string{
	{"january", `jan\b`, "enero", "januar", "janvier", "janeiro"},
	{"february", `feb\b`, "febrero", "februar", "février", "fevereiro"},
	{"march", `mar\b`, "marzo", "märz", "mars", "março"},
	{"april", `apr\b`, "abril", "avril"},
	{`\bmay\b`, "mayo", `\bmai\b`, "maio"},
	{"june", `jun\b`, "junio", `\bjuni\b`, "juin", "junho"},
	{"july", `jul\b`, "julio", `\bjuli\b`, "juillet", "julho"},
	{"august", `aug\b`, "agosto", "août"},
	{"september", `sep\b`, `sept\b`, "septiembre", "setembro", "septembre"},
	{"october", `oct\b`, "octubre", "oktober", "octobre", "outubro"},
	{"november", `nov\b`, "noviembre", "novembre", "novembro"},
	{"december", `dec\b`, "diciembre", "dezember", "décembre", "dezembro"},
}

// compilePattern compiles a pattern, case-insensitive, its date
// placeholders made the month or year they stand for on the day now.
func compilePattern(s string, now time.Time) (*regexp.Regexp, error) {
	s = datePlaceholder.ReplaceAllStringFunc(s, func(ph string) string {
		m := datePlaceholder.FindStringSubmatch(ph)
		n, _ := strconv.Atoi(strings.TrimPrefix(m[2], "+"))
		if m[1] == "year" {
			return strconv.Itoa(now.Year() + n)
		}
		t := time.Date(now.Year(), now.Month()+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
		y := strconv.Itoa(t.Year())
		return "(?:(?:" + strings.Join(monthNames[t.Month()-1], "|") + `),? (?:of |de |del )?` + y +
			"|" + t.Format("2006-01") + "|" + t.Format("01/2006") + ")"
	})
	re, err := regexp.Compile("(?i)" + s)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", s, err)
	}
	return re, nil
}

// probeOutcome is what one probe's block was judged.
type probeOutcome struct {
	Person string   `json:"person"`
	Ask    string   `json:"ask"`
	Tags   []string `json:"tags"`
	// Needed: the probe needs a fact; Hit: every must group is in the
	// block; FromProfile: each on one of its undated lines, the profile's
	// standing facts (not a transcript turn found by the question's words).
	Needed      bool `json:"needed"`
	Hit         bool `json:"hit"`
	FromProfile bool `json:"from_profile,omitempty"`
	// SmallTalk: the probe expects no block; Spoke: it got one.
	SmallTalk bool `json:"small_talk,omitempty"`
	Spoke     bool `json:"spoke,omitempty"`
	// The lines of the block that are wrong, by why.
	Stale  []string `json:"stale,omitempty"`
	Other  []string `json:"other,omitempty"`
	Echoes []string `json:"echoes,omitempty"`
	Tokens int      `json:"tokens"`
	Block  string   `json:"block,omitempty"`
}

// ok: the probe got what it needed and nothing false.
func (o probeOutcome) ok() bool {
	return (!o.Needed || o.Hit) && !o.Spoke && len(o.Stale)+len(o.Other)+len(o.Echoes) == 0
}

// judgeProbe grades a probe's block (shown); earlier are the messages the person
// sent before it, asked the earlier probes' questions.
func judgeProbe(pr *probe, earlier, asked []string, shown string) probeOutcome {
	o := probeOutcome{Ask: pr.Ask, Needed: len(pr.must) > 0, SmallTalk: pr.Empty, Spoke: pr.Empty && shown != "", Block: shown}
	if shown != "" {
		o.Tokens = block.EstimateTokens(shown)
	}
	lines, dated := blockEntries(shown)
	anyLine := func(res []*regexp.Regexp, line string) bool {
		return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(line) })
	}
	o.Hit, o.FromProfile = o.Needed, o.Needed
	for _, g := range pr.must {
		o.Hit = o.Hit && slices.ContainsFunc(lines, func(l string) bool { return anyLine(g, l) })
		inProfile := false
		for k, l := range lines {
			inProfile = inProfile || !dated[k] && anyLine(g, l)
		}
		o.FromProfile = o.FromProfile && inProfile
	}
	var questions []string
	for _, m := range earlier {
		if onlyAsks(m) {
			questions = append(questions, strings.Join(strings.Fields(m), " "))
		}
	}
	for _, m := range asked {
		questions = append(questions, strings.Join(strings.Fields(m), " "))
	}
	for _, l := range lines {
		if presentsOld(l, func(l string) bool { return anyLine(pr.stale, l) },
			func(l string) bool {
				return slices.ContainsFunc(pr.must, func(g []*regexp.Regexp) bool { return anyLine(g, l) })
			}) {
			o.Stale = append(o.Stale, l)
		}
		if anyLine(pr.other, l) {
			o.Other = append(o.Other, l)
		}
		if anyLine(pr.echo, l) || slices.ContainsFunc(questions, func(q string) bool { return strings.Contains(l, q) }) {
			o.Echoes = append(o.Echoes, l)
		}
	}
	return o
}

// sentenceEnd ends a sentence: its mark and the space after it.
var sentenceEnd = regexp.MustCompile(`[.!?]+(\s+|$)`)

// onlyAsks reports whether every sentence of a message is a question: a
// memory of it could only echo it. A message that also says something
// ("I'm at the airport. What can I do in Lisbon?") is not one.
func onlyAsks(m string) bool {
	m = strings.TrimSpace(m)
	if !strings.HasSuffix(m, "?") {
		return false
	}
	for _, end := range sentenceEnd.FindAllString(m, -1) {
		if !strings.HasPrefix(end, "?") {
			return false
		}
	}
	return true
}

// journeyStats are a group of probes' figures.
type journeyStats struct {
	Probes int `json:"probes"`
	// Needed are the probes that need a fact, Hits those whose block has it.
	Needed  int     `json:"needed"`
	Hits    int     `json:"hits"`
	HitRate float64 `json:"hit_rate"`
	// HitsFromProfile: hits whose fact is in the profile's standing facts.
	HitsFromProfile int `json:"hits_from_profile"`
	// Probes whose block shows a replaced value as current, another
	// person's fact as the user's, or an echo of the user's question.
	Stale  int `json:"stale"`
	Other  int `json:"other"`
	Echoes int `json:"echoes"`
	// SmallTalk probes expect no block; SmallTalkBlocks got one anyway.
	SmallTalk       int `json:"small_talk"`
	SmallTalkBlocks int `json:"small_talk_blocks"`
	// Clean: the probe got what it needed and nothing false.
	Clean     int `json:"clean"`
	WithBlock int `json:"with_block"`
	// MeanTokens is the block's mean size when there is one, MeanTokensAll
	// over all probes (0 for none).
	MeanTokens    float64 `json:"mean_block_tokens"`
	MeanTokensAll float64 `json:"mean_tokens_all"`
	tokens        int
}

func (s *journeyStats) add(o probeOutcome) {
	s.Probes++
	s.Needed += b2i(o.Needed)
	s.Hits += b2i(o.Hit)
	s.HitsFromProfile += b2i(o.FromProfile)
	s.Stale += b2i(len(o.Stale) > 0)
	s.Other += b2i(len(o.Other) > 0)
	s.Echoes += b2i(len(o.Echoes) > 0)
	s.SmallTalk += b2i(o.SmallTalk)
	s.SmallTalkBlocks += b2i(o.Spoke)
	s.Clean += b2i(o.ok())
	if o.Block != "" {
		s.WithBlock++
		s.tokens += o.Tokens
	}
	s.HitRate = float64(s.Hits) / float64(max(s.Needed, 1))
	s.MeanTokens = float64(s.tokens) / float64(max(s.WithBlock, 1))
	s.MeanTokensAll = float64(s.tokens) / float64(s.Probes)
}

// journeyResult is the outcome of a journey set.
type journeyResult struct {
	File   string `json:"file"`
	People int    `json:"people"`
	// PeopleWrong: people one of whose blocks shows a stale value or
	// another person's fact as theirs.
	PeopleWrong int                     `json:"people_with_a_false_block"`
	All         journeyStats            `json:"all"`
	ByTag       map[string]journeyStats `json:"by_tag"`
	Probes      []probeOutcome          `json:"probes"`
}

// gradeJourneys sums the outcomes, by tag (a person without a language:
// tag is language:en).
func gradeJourneys(file string, set *journeySet, outcomes [][]probeOutcome) journeyResult {
	r := journeyResult{File: file, People: len(set.People), ByTag: map[string]journeyStats{}}
	for i, pe := range set.People {
		wrong := false
		for k, o := range outcomes[i] {
			o.Person = pe.ID
			o.Tags = tagsOf(pe, pe.Probes[k])
			r.All.add(o)
			for _, t := range o.Tags {
				s := r.ByTag[t]
				s.add(o)
				r.ByTag[t] = s
			}
			wrong = wrong || len(o.Stale)+len(o.Other) > 0
			r.Probes = append(r.Probes, o)
		}
		r.PeopleWrong += b2i(wrong)
	}
	return r
}

func tagsOf(pe *person, pr *probe) []string {
	tags := append(slices.Clone(pe.Tags), pr.Tags...)
	if !slices.ContainsFunc(tags, func(t string) bool { return strings.HasPrefix(t, "language:") }) {
		tags = append(tags, "language:en")
	}
	slices.Sort(tags)
	return slices.Compact(tags)
}

// runJourneys sends every person's conversations and probes through p, in
// rounds (see the file comment), and grades the probes' blocks.
func runJourneys(p *proxy, file string, set *journeySet, workers int) (journeyResult, error) {
	type talk struct {
		msgs           []message
		earlier, asked []string
		steps          []func(t *talk) error
	}
	key := func(pe *person) string { return "journeys-" + pe.ID }
	outcomes := make([][]probeOutcome, len(set.People))
	talks := make([]*talk, len(set.People))
	rounds := 0
	for i, pe := range set.People {
		t := &talk{}
		outcomes[i] = make([]probeOutcome, len(pe.Probes))
		say := func(t *talk, text string) error {
			t.msgs = append(t.msgs, message{"user", text})
			reply, err := p.chat(key(pe), t.msgs)
			t.msgs = append(t.msgs, message{"assistant", reply})
			return err
		}
		for _, conv := range pe.Conversations {
			for k, m := range conv {
				t.steps = append(t.steps, func(t *talk) error {
					if k == 0 {
						t.msgs = nil
					}
					err := say(t, m)
					t.earlier = append(t.earlier, m)
					return err
				})
			}
		}
		for k, pr := range pe.Probes {
			t.steps = append(t.steps, func(t *talk) error {
				t.msgs = []message{{"system", prefSystem}}
				if err := say(t, pr.Ask); err != nil {
					return err
				}
				outcomes[i][k] = judgeProbe(pr, t.earlier, t.asked, p.block(key(pe)))
				t.asked = append(t.asked, pr.Ask)
				return nil
			})
		}
		talks[i] = t
		rounds = max(rounds, len(t.steps))
	}
	for r := range rounds {
		if err := parallel(len(talks), workers, func(i int) error {
			if r >= len(talks[i].steps) {
				return nil
			}
			if err := talks[i].steps[r](talks[i]); err != nil {
				return fmt.Errorf("%s: %w", set.People[i].ID, err)
			}
			return nil
		}); err != nil {
			return journeyResult{}, err
		}
		if err := p.settle(); err != nil {
			return journeyResult{}, err
		}
	}
	return gradeJourneys(file, set, outcomes), nil
}

func (r journeyResult) print(w io.Writer, misses int) {
	a := r.All
	fmt.Fprintf(w, "journeys %s: %d people, %d probes\n", r.File, r.People, a.Probes)
	fmt.Fprintf(w, "  needed fact in the block: %d of %d (%.1f%%; in the profile's standing facts: %d)   probes with nothing wrong: %d of %d\n",
		a.Hits, a.Needed, 100*a.HitRate, a.HitsFromProfile, a.Clean, a.Probes)
	fmt.Fprintf(w, "  blocks showing: a stale value as current %d   another person's fact as the user's %d   an echo %d\n",
		a.Stale, a.Other, a.Echoes)
	if a.SmallTalk > 0 {
		fmt.Fprintf(w, "  small talk that got a block: %d of %d\n", a.SmallTalkBlocks, a.SmallTalk)
	}
	fmt.Fprintf(w, "  people with a stale or another's fact in a block: %d of %d\n", r.PeopleWrong, r.People)
	fmt.Fprintf(w, "  mean block %.0f tokens (a block for %d of %d probes; %.0f over all)\n", a.MeanTokens, a.WithBlock, a.Probes, a.MeanTokensAll)
	tags := make([]string, 0, len(r.ByTag))
	for t := range r.ByTag {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	fmt.Fprintf(w, "  %-24s %6s %11s %8s %6s %6s %6s %7s\n", "category", "probes", "hits", "profile", "stale", "other", "echo", "tokens")
	for _, t := range tags {
		s := r.ByTag[t]
		fmt.Fprintf(w, "  %-24s %6d %4d/%-3d %3.0f%% %8d %6d %6d %6d %7.0f\n", t, s.Probes, s.Hits, s.Needed, 100*s.HitRate,
			s.HitsFromProfile, s.Stale, s.Other, s.Echoes, s.MeanTokens)
	}
	for _, o := range r.Probes {
		if misses <= 0 {
			break
		}
		if o.ok() {
			continue
		}
		misses--
		var why []string
		if o.Needed && !o.Hit {
			why = append(why, "miss")
		}
		if o.Spoke {
			why = append(why, "small talk got a block")
		}
		for _, v := range []struct {
			name  string
			lines []string
		}{{"stale", o.Stale}, {"other", o.Other}, {"echo", o.Echoes}} {
			for _, l := range v.lines {
				why = append(why, fmt.Sprintf("%s: %q", v.name, l))
			}
		}
		block := o.Block
		if block == "" {
			block = "(no block)"
		}
		fmt.Fprintf(w, "PROBE %s [%s] %q\n  %s\n    %s\n", o.Person, strings.Join(o.Tags, " "), o.Ask,
			strings.Join(why, "\n  "), strings.ReplaceAll(block, "\n", "\n    "))
	}
}
