package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/caddy-memory/memory/internal/block"
)

// updateCase is a knowledge update: what the user said earlier (each a
// conversation of user turns, questions among them), what changed, and a
// later question that needs the current value.
type updateCase struct {
	ID       string     `json:"id"`
	Kind     string     `json:"kind"`
	Before   [][]string `json:"before"`
	Update   []string   `json:"update"`
	Question string     `json:"question"`
	New      []string   `json:"new"`
	Old      []string   `json:"old"`
}

func loadUpdates(path string) ([]updateCase, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cs []updateCase
	if err := json.Unmarshal(raw, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, c := range cs {
		if c.ID == "" || len(c.Update) == 0 || c.Question == "" || len(c.New) == 0 || len(c.Old) == 0 {
			return nil, fmt.Errorf("%s: case %q needs id, update, question, new and old", path, c.ID)
		}
	}
	return cs, nil
}

// updateResult is the outcome of the knowledge-update set.
type updateResult struct {
	Cases int `json:"cases"`
	// Passed: the new value is in the block and the old one is not
	// presented as current.
	Passed int `json:"passed"`
	// NewFound: the new value is in the block; OldCurrent: a line presents
	// the old value as current.
	NewFound   int `json:"new_found"`
	OldCurrent int `json:"old_current"`
	// Echoes: blocks repeating one of the user's own earlier questions.
	Echoes     int     `json:"echoes"`
	MeanTokens float64 `json:"mean_block_tokens"`
}

// runUpdates runs each case as its own owner through p.
func runUpdates(p *proxy, cases []updateCase, workers int, verbose io.Writer) (updateResult, error) {
	key := func(c updateCase) string { return "updates-" + c.ID }
	if err := parallel(len(cases), workers, func(i int) error {
		for _, conv := range append(cases[i].Before, cases[i].Update) {
			if err := p.conversation(key(cases[i]), "", conv); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return updateResult{}, err
	}
	time.Sleep(pause)
	blocks := make([]string, len(cases))
	if err := parallel(len(cases), workers, func(i int) error {
		if err := p.conversation(key(cases[i]), prefSystem, []string{cases[i].Question}); err != nil {
			return err
		}
		blocks[i] = p.block(key(cases[i]))
		return nil
	}); err != nil {
		return updateResult{}, err
	}
	r := updateResult{Cases: len(cases)}
	tokens := 0
	for i, c := range cases {
		newFound, oldCurrent, echo := judgeUpdate(c, blocks[i])
		r.NewFound += b2i(newFound)
		r.OldCurrent += b2i(oldCurrent)
		r.Echoes += b2i(echo)
		pass := newFound && !oldCurrent
		r.Passed += b2i(pass)
		tokens += block.EstimateTokens(blocks[i])
		if verbose != nil && (!pass || echo) {
			fmt.Fprintf(verbose, "UPDATE %s new=%v old-as-current=%v echo=%v\n    %s\n", c.ID, newFound, oldCurrent, echo,
				strings.ReplaceAll(blocks[i], "\n", "\n    "))
		}
	}
	r.MeanTokens = float64(tokens) / float64(max(len(cases), 1))
	return r, nil
}

// earlierMark starts a block line that shows a value as it was, not as it is.
const earlierMark = "(earlier"

// judgeUpdate reads a case's block: is each new value in it, does a line
// present an old value as current (a line naming an old value, neither
// marked as earlier, nor saying it ended, nor naming the new value beside
// it, as "moved from Lisbon to Porto" does), and does a line repeat one of
// the user's own earlier questions.
func judgeUpdate(c updateCase, block string) (newFound, oldCurrent, echo bool) {
	lines := blockLines(block)
	newFound = true
	for _, v := range c.New {
		found := false
		for _, l := range lines {
			found = found || hasWord(l, v)
		}
		newFound = newFound && found
	}
	words := func(vs []string) func(string) bool {
		return func(l string) bool { return slices.ContainsFunc(vs, func(v string) bool { return hasWord(l, v) }) }
	}
	for _, l := range lines {
		oldCurrent = oldCurrent || presentsOld(l, words(c.Old), words(c.New))
		for _, conv := range c.Before {
			for _, t := range conv {
				if strings.HasSuffix(t, "?") && strings.Contains(l, t) {
					echo = true
				}
			}
		}
	}
	return newFound, oldCurrent, echo
}

// presentsOld reports whether a block line presents an old value as
// current: it names one (old), is neither marked as earlier nor says it
// ended, and names no new value beside it, as "moved from Lisbon to Porto"
// does.
func presentsOld(line string, old, new func(string) bool) bool {
	if strings.HasPrefix(line, earlierMark) || ended.MatchString(line) {
		return false
	}
	return old(line) && !new(line)
}

// ended marks a line that says a value is no longer so ("User stopped
// keto", "broke up with Miguel", "ya no soy vegetariana", "nicht mehr"):
// it does not present it as current. The words of other languages are
// those of the sets' own speakers (Spanish, German, French, Portuguese);
// RE2's \b knows only ASCII letters, so they are bounded by hand.
var ended = regexp.MustCompile(`(?i)\b(?:stopped|quit|dropped|gave away|left|broke up|split up|no longer|anymore|any more|used to|former|ex-|moved from|instead of|switched from|replaced|sold|gave up|divorced|passed away|died|handed in (?:my |his |her )?notice|resigned|traded in)\b` +
	`|(?:^|[^\pL])(?:ya no|dejé|renuncié|en vez de|en lugar de|nicht mehr|früher|gekündigt|aufgehört|statt|ehemalig\pL*|n(?:e |')\pL+ plus|quitté|démissionné|au lieu de|anciennement|já não|não \pL+ mais|deixei|pedi demissão|em vez de)(?:$|[^\pL])`)

// hasWord reports whether s holds phrase as whole words (or with an -s,
// -es, -d or -ed ending), ignoring case.
func hasWord(s, phrase string) bool {
	return regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(phrase) + `(?:s|es|d|ed)?\b`).MatchString(s)
}

func (r updateResult) print(w io.Writer) {
	fmt.Fprintf(w, "knowledge updates: %d of %d pass (new value in the block: %d; old value presented as current: %d)   echoed questions in %d blocks   mean block %.0f tokens\n",
		r.Passed, r.Cases, r.NewFound, r.OldCurrent, r.Echoes, r.MeanTokens)
}

// proxied says what runProxied runs: the flags of a run through Caddy.
type proxied struct {
	prefDir, modes      string
	perTopic, prefs     int
	updates, journeys   string
	directives, storage string
	workers             int
	misses              int // print this many failures (PrefEval and updates: all, when > 0)
	jsonOut             string
}

// runProxied runs PrefEval (each mode of modes), the knowledge-update set
// and a journey set, whichever are given, through one Caddy on a fresh
// storage.
func runProxied(c proxied) error {
	storage := c.storage
	if storage == "" {
		dir, err := os.MkdirTemp("", "memeval-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		storage = dir
	}
	p, err := startProxy(storage, c.directives)
	if err != nil {
		return err
	}
	defer p.stop()
	var out io.Writer
	if c.misses > 0 {
		out = os.Stdout
	}
	results := map[string]any{}
	if c.prefDir != "" {
		items, distractors, err := loadPrefEval(c.prefDir)
		if err != nil {
			return err
		}
		for _, mode := range strings.Split(c.modes, ",") {
			mode = strings.TrimSpace(mode)
			if mode != "explicit" && mode != "persona" {
				return fmt.Errorf("-modes: %q is not explicit or persona", mode)
			}
			r, err := runPrefEval(p, planPrefEval(items, distractors, mode, c.perTopic, c.prefs), mode, c.workers, out)
			if err != nil {
				return err
			}
			r.print(os.Stdout)
			results["prefeval_"+mode] = r
		}
	}
	if c.updates != "" {
		cases, err := loadUpdates(c.updates)
		if err != nil {
			return err
		}
		r, err := runUpdates(p, cases, c.workers, out)
		if err != nil {
			return err
		}
		r.print(os.Stdout)
		results["updates"] = r
	}
	if c.journeys != "" {
		set, err := loadJourneys(c.journeys, time.Now())
		if err != nil {
			return err
		}
		r, err := runJourneys(p, c.journeys, set, c.workers)
		if err != nil {
			return err
		}
		r.print(os.Stdout, c.misses)
		results["journeys"] = r
	}
	if c.jsonOut != "" {
		b, _ := json.MarshalIndent(results, "", " ")
		return os.WriteFile(c.jsonOut, b, 0o644)
	}
	return nil
}
