package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/caddy-memory/memory/internal/block"
)

// prefItem is one PrefEval item: a preference, a later question that needs
// it without naming it, and a persona chat in which it is said in passing.
type prefItem struct {
	ID           string   `json:"id"`
	Topic        string   `json:"topic"`
	Preference   string   `json:"preference"`
	Question     string   `json:"question"`
	PersonaTurns []string `json:"persona_turns"`
}

// loadPrefEval reads a PrefEval folder: items.jsonl and distractors.json.
func loadPrefEval(dir string) ([]prefItem, [][]string, error) {
	f, err := os.Open(filepath.Join(dir, "items.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var items []prefItem
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var it prefItem
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			return nil, nil, fmt.Errorf("items.jsonl: %w", err)
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "distractors.json"))
	if err != nil {
		return nil, nil, err
	}
	var distractors [][]string
	if err := json.Unmarshal(raw, &distractors); err != nil {
		return nil, nil, fmt.Errorf("distractors.json: %w", err)
	}
	if len(items) == 0 || len(distractors) < 4 {
		return nil, nil, fmt.Errorf("%s holds %d items and %d distractor chats; PrefEval needs some of each", dir, len(items), len(distractors))
	}
	return items, distractors, nil
}

// prefPlan is what one owner says before its question: the conversations in
// order, each a list of user turns.
type prefPlan struct {
	item          prefItem
	conversations [][]string
}

// Protocol constants (see the PrefEval README).
const (
	prefsPerOwner       = 5 // the protocol's; -prefs asks for more
	distractorsPerOwner = 4
	prefSystem          = "You are a helpful assistant."
)

// pause is the time between what an owner says and the question asked.
var pause = 3 * time.Second

// planPrefEval picks perTopic items of each topic (the first ones, in the
// file's order, that have a persona chat, so both modes ask the same
// questions) and, for each, 4 preferences of other topics, 4 distractor
// chats and where among them the item's own preference is said. The choice
// is seeded: every run asks the same.
func planPrefEval(items []prefItem, distractors [][]string, mode string, perTopic, prefs int) []prefPlan {
	byTopic := map[string][]prefItem{}
	var topics []string
	for _, it := range items {
		if len(it.PersonaTurns) == 0 {
			continue
		}
		if byTopic[it.Topic] == nil {
			topics = append(topics, it.Topic)
		}
		byTopic[it.Topic] = append(byTopic[it.Topic], it)
	}
	sort.Strings(topics)
	say := func(it prefItem) []string {
		if mode == "persona" {
			return it.PersonaTurns
		}
		return []string{it.Preference}
	}
	rng := rand.New(rand.NewPCG(32, 5))
	var plans []prefPlan
	for _, t := range topics {
		for _, it := range byTopic[t][:min(perTopic, len(byTopic[t]))] {
			others := make([]string, 0, len(topics)-1)
			for _, o := range topics {
				if o != t {
					others = append(others, o)
				}
			}
			rng.Shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
			said := [][]string{}
			used := map[string]bool{it.ID: true}
			for k := 0; len(said) < prefs-1 && k < 100*prefs; k++ {
				pool := byTopic[others[k%len(others)]]
				o := pool[rng.IntN(len(pool))]
				if used[o.ID] {
					continue
				}
				used[o.ID] = true
				said = append(said, say(o))
			}
			at := rng.IntN(len(said) + 1)
			said = append(said[:at], append([][]string{say(it)}, said[at:]...)...)
			picked := rng.Perm(len(distractors))[:distractorsPerOwner]
			p := prefPlan{item: it}
			for i, pr := range said {
				p.conversations = append(p.conversations, pr)
				if i < len(picked) {
					p.conversations = append(p.conversations, distractors[picked[i]])
				}
			}
			plans = append(plans, p)
		}
	}
	return plans
}

// prefResult is the outcome of one PrefEval mode.
type prefResult struct {
	Mode       string  `json:"mode"`
	Questions  int     `json:"questions"`
	Recall     float64 `json:"recall"`
	BlockShare float64 `json:"block_share"`
	// MeanTokens is the block's mean size over the questions that got one,
	// MeanTokensAll over all questions (0 for none).
	MeanTokens    float64            `json:"mean_block_tokens"`
	MeanTokensAll float64            `json:"mean_tokens_all"`
	ByTopic       map[string]float64 `json:"recall_by_topic"`
	// LearnedAfterMS is how long after the conversations' last turn every
	// turn was learned and searchable: learning's lag behind the burst
	// (the questions come pause after it).
	LearnedAfterMS float64 `json:"learned_after_ms"`
}

// runPrefEval runs one mode of the PrefEval protocol through p: every
// owner's conversations, a pause, then every question.
func runPrefEval(p *proxy, plans []prefPlan, mode string, workers int, misses io.Writer) (prefResult, error) {
	key := func(pl prefPlan) string { return "prefeval-" + mode + "-" + pl.item.ID }
	if err := parallel(len(plans), workers, func(i int) error {
		for _, c := range plans[i].conversations {
			if err := p.conversation(key(plans[i]), "", c); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return prefResult{}, err
	}
	burstEnd := time.Now()
	learnedAfter := make(chan time.Duration, 1)
	go func() {
		if err := p.settle(); err != nil {
			learnedAfter <- -time.Millisecond // not within settle's minute
			return
		}
		learnedAfter <- time.Since(burstEnd)
	}()
	time.Sleep(pause) // "a few seconds later"
	blocks := make([]string, len(plans))
	if err := parallel(len(plans), workers, func(i int) error {
		k := key(plans[i])
		if err := p.conversation(k, prefSystem, []string{plans[i].item.Question}); err != nil {
			return err
		}
		blocks[i] = p.block(k)
		return nil
	}); err != nil {
		return prefResult{}, err
	}
	r := prefResult{Mode: mode, Questions: len(plans), ByTopic: map[string]float64{}}
	r.LearnedAfterMS = float64((<-learnedAfter).Microseconds()) / 1000
	hits, withBlock, tokens := 0, 0, 0
	perTopic := map[string][2]int{}
	for i, pl := range plans {
		hit := prefHit(pl.item.Preference, blocks[i])
		if hit {
			hits++
		} else if misses != nil {
			fmt.Fprintf(misses, "MISS %s\n  pref: %s\n  question: %s\n  block: %s\n", pl.item.ID, pl.item.Preference, pl.item.Question,
				strings.ReplaceAll(blocks[i], "\n", "\n    "))
		}
		if blocks[i] != "" {
			withBlock++
			tokens += block.EstimateTokens(blocks[i])
		}
		c := perTopic[pl.item.Topic]
		c[0] += b2i(hit)
		c[1]++
		perTopic[pl.item.Topic] = c
	}
	n := max(len(plans), 1)
	r.Recall = float64(hits) / float64(n)
	r.BlockShare = float64(withBlock) / float64(n)
	r.MeanTokens = float64(tokens) / float64(max(withBlock, 1))
	r.MeanTokensAll = float64(tokens) / float64(n)
	for t, c := range perTopic {
		r.ByTopic[t] = float64(c[0]) / float64(c[1])
	}
	return r, nil
}

// prefHit: a line of the block carries at least half of the preference's
// content words.
func prefHit(pref, block string) bool {
	want := contentWords(pref)
	if len(want) == 0 {
		return false
	}
	for _, l := range blockLines(block) {
		have := contentWords(l)
		n := 0
		for w := range want {
			if have[w] {
				n++
			}
		}
		if 2*n >= len(want) {
			return true
		}
	}
	return false
}

// contentStop is the README's "small stop list": function words of four
// letters or more.
var contentStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about above after again against also although among another anyone anything
	because been before being below between both cannot could does doing down during each either else even ever
	every from further have having here hers herself himself into itself just least less many might more most much
	must myself neither never none nothing often once only other others ought ours ourselves over same shall
	should since some someone something such than that their theirs them themselves then there these they this
	those though through thus till under until upon very want were what whatever when where whether which while
	whom whose will with within without would your yours yourself yourselves`) {
		contentStop[w] = true
	}
}

// contentWords are a text's lower-cased words of 4+ letters outside the stop
// list, by their first 6 letters.
func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if len(w) < 4 || contentStop[w] {
			continue
		}
		if len(w) > 6 {
			w = w[:6]
		}
		out[w] = true
	}
	return out
}

// parallel runs f(0..n-1) on workers goroutines, stopping at the first error.
func parallel(n, workers int, f func(int) error) error {
	var mu sync.Mutex
	var first error
	next := 0
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if i >= n || stop {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("item %d: %w", i, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (r prefResult) print(w io.Writer) {
	fmt.Fprintf(w, "PrefEval %-8s %d questions: recall %.3f   a block for %.1f%%   mean block %.0f tokens (%.0f over all questions)   learned %.0f ms after the conversations' last turn\n",
		r.Mode, r.Questions, r.Recall, 100*r.BlockShare, r.MeanTokens, r.MeanTokensAll, r.LearnedAfterMS)
	var topics []string
	for t := range r.ByTopic {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		fmt.Fprintf(w, "  %-28s %.2f\n", t, r.ByTopic[t])
	}
}
