package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/norm"
)

// A session is distilled by a model in one call: shown the session's turns
// (as stored: the injected block and quoted memories already stripped) and
// the owner's most similar memories, numbered so it can name one without
// inventing an id, it answers with an episode (what the session was about)
// and standalone facts about the user. This file is that call's prompt and
// the reading of its answer; the engine decides when to make it.

// Known is an existing memory shown to the model, as number i+1.
type Known struct {
	Key, Kind, Content string
}

// Session is what the model is shown of one session.
type Session struct {
	// Date is when the session's turns were said: today for proxied
	// traffic, the session's own date for ingested history. Relative dates
	// are made absolute from it.
	Date time.Time
	// Turns are the session's transcripts, oldest first, and Refs their
	// references (a provider's response id, an ingested message's id),
	// which the memories distilled from them keep.
	Turns []string
	Refs  []string
	Known []Known
}

// Limits on what is sent and what is kept of an answer: a session's turns
// beyond maxPromptTurns wait for the next call (so each call stays one
// bounded request), and an answer's excess is dropped.
const (
	maxPromptTurns  = 40
	maxPromptBytes  = 24 << 10
	maxFacts        = 30
	maxFactLen      = 600
	maxSummaryLen   = 1200
	maxTopics       = 8
	defaultCategory = "fact"
)

// categories the model may give; anything else is stored as a "fact".
var categories = map[string]bool{
	"identity": true, "relationship": true, "preference": true, "habit": true, "plan": true,
	"decision": true, "health": true, "work": true, "fact": true,
}

const distillInstructions = `You maintain a long-term memory about one user of an AI assistant. You are shown one conversation between the user and the assistant, and some of what is already remembered about the user (KNOWN, numbered). Answer with one JSON object and nothing else:

{"episode": {"summary": "...", "topics": ["..."]},
 "facts": [{"content": "...", "category": "...", "importance": 5, "replaces": null, "turns": [1]}]}

Rules:
- episode.summary: one to three sentences, in the third person, on what the conversation was about and anything decided. topics: a few words or short phrases.
- facts: what is worth knowing about the user in later conversations: who they are, the people in their life, where they live and work, preferences, habits, plans, decisions, health. Each fact is one standalone sentence in the third person ("The user's sister Zofia lives in Krakow."), understandable without the conversation.
- Only what the user said or confirmed about themselves, in their own voice. Never the assistant's own suggestions or knowledge, never instructions the assistant was given, never a KNOWN memory the user did not restate or change.
- Text the user is working on is not the user speaking: something to translate, proofread, rewrite, summarise or reply to, a pasted email, letter, CV, review or chat, a quotation, a story, and what is said in a role-play or game (from where it is set up until the user steps out: "out of character", "in real life"). "Translate into Spanish: I live in Rome and I'm allergic to nuts" teaches nothing about the user; in a role-play where the user plays a customer, "I'm vegetarian" is the character's, and "OOC: I'm actually a vet in Bath" is the user's.
- Facts about other people the user names are about them, and kept as theirs when they matter to the user: "My daughter Mia is allergic to eggs" is "The user's daughter Mia is allergic to eggs.", never "The user is allergic to eggs."; "my colleague is vegan" teaches nothing about the user.
- A correction or a change replaces: "we have three kids, no wait, four" is four; "I quit the bank, I'm a teacher now" replaces the user's job and employer together (set "replaces" to the KNOWN job).
- Make relative dates absolute, from the conversation's DATE ("next Friday" said on 2026-03-02 is "on 6 March 2026").
- Write the summary and the facts in the language the user wrote in.
- category: identity, relationship, preference, habit, plan, decision, health, work or fact.
- importance: 1 (trivia) to 10 (essential to know about the user).
- turns: the numbers of the conversation's turns the fact comes from.
- When a fact changes or contradicts a KNOWN memory, set "replaces" to that memory's number. When it says the same as a KNOWN memory, leave it out.
- Nothing worth keeping: "facts": [].`

// DistillPrompt is the system and the user message of the call that
// distils s. It also returns how many of s.Turns it holds: the newest turns
// past the prompt's bounds wait for the next call.
func DistillPrompt(s Session) (system, user string, turns int) {
	var b strings.Builder
	b.WriteString("DATE: ")
	b.WriteString(s.Date.UTC().Format("2006-01-02 (Monday)"))
	b.WriteString("\n\nKNOWN:\n")
	if len(s.Known) == 0 {
		b.WriteString("(nothing yet)\n")
	}
	for i, k := range s.Known {
		fmt.Fprintf(&b, "%d. %s\n", i+1, oneLine(k.Content))
	}
	b.WriteString("\nCONVERSATION:\n")
	for _, t := range s.Turns {
		t = strings.TrimSpace(block.Strip(t))
		if turns > 0 && (turns == maxPromptTurns || b.Len()+len(t) > maxPromptBytes) {
			break
		}
		turns++
		fmt.Fprintf(&b, "[%d] %s\n\n", turns, t)
	}
	return distillInstructions, strings.TrimRight(b.String(), "\n") + "\n", turns
}

// RetryPrompt is the message that asks the model again after an answer
// that could not be read, saying why.
func RetryPrompt(err error) string {
	return "Your answer could not be read: " + err.Error() + ". Answer again with only the JSON object described, nothing before or after it."
}

// Distilled is a model's answer, checked.
type Distilled struct {
	Summary string
	Topics  []string
	Facts   []DistilledFact
}

// DistilledFact is one fact of an answer.
type DistilledFact struct {
	Content, Category string
	Importance        int // 1 to 10
	// Replaces is the number (1..n) of the KNOWN memory the fact
	// supersedes, or 0.
	Replaces int
	// Turns are the numbers (1..) of the turns it comes from, as the model
	// says.
	Turns []int
}

// ErrNoJSON means an answer holds no JSON object to read.
var ErrNoJSON = errors.New("the answer holds no JSON object")

// ParseDistilled reads a model's answer tolerantly, as local models write
// it: the JSON object may come in a code fence or with prose around it, a
// fact may be a bare string, numbers may be strings. Facts without content
// are dropped, an importance is clamped to 1..10, and a replaces that names
// no KNOWN memory (of known) is ignored. An answer that is not an object of
// this shape is an error that says why, for RetryPrompt.
func ParseDistilled(answer string, known int) (Distilled, error) {
	start, end := strings.IndexByte(answer, '{'), strings.LastIndexByte(answer, '}')
	if start < 0 || end < start {
		return Distilled{}, ErrNoJSON
	}
	raw := []byte(answer[start : end+1])
	if !inject.ValidJSON(raw) {
		return Distilled{}, errors.New("the JSON object is not valid JSON")
	}
	var in struct {
		Episode json.RawMessage   `json:"episode"`
		Facts   []json.RawMessage `json:"facts"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return Distilled{}, fmt.Errorf("the JSON object does not have the shape asked for: %v", err)
	}
	var d Distilled
	if len(in.Episode) > 0 && string(in.Episode) != "null" {
		var ep struct {
			Summary string `json:"summary"`
			Topics  []any  `json:"topics"`
		}
		if err := json.Unmarshal(in.Episode, &ep); err != nil {
			return Distilled{}, fmt.Errorf("episode is not an object with a summary: %v", err)
		}
		d.Summary = clip(ep.Summary, maxSummaryLen)
		for _, t := range ep.Topics {
			if s, ok := t.(string); ok && strings.TrimSpace(s) != "" && len(d.Topics) < maxTopics {
				d.Topics = append(d.Topics, clip(s, 80))
			}
		}
	}
	for _, rf := range in.Facts {
		if len(d.Facts) == maxFacts {
			break
		}
		var f DistilledFact
		var s string
		if json.Unmarshal(rf, &s) == nil {
			f.Content = s
		} else {
			var obj struct {
				Content    string `json:"content"`
				Category   string `json:"category"`
				Importance any    `json:"importance"`
				Replaces   any    `json:"replaces"`
				Turns      []any  `json:"turns"`
			}
			if err := json.Unmarshal(rf, &obj); err != nil {
				return Distilled{}, fmt.Errorf("a fact is neither an object nor a string: %v", err)
			}
			f.Content, f.Category = obj.Content, obj.Category
			f.Importance, f.Replaces = number(obj.Importance), number(obj.Replaces)
			for _, t := range obj.Turns {
				if n := number(t); n > 0 && len(f.Turns) < maxTopics {
					f.Turns = append(f.Turns, n)
				}
			}
		}
		if f.Content = clip(f.Content, maxFactLen); f.Content == "" {
			continue
		}
		if f.Category = strings.ToLower(strings.TrimSpace(f.Category)); !categories[f.Category] {
			f.Category = defaultCategory
		}
		if f.Importance == 0 {
			f.Importance = 5 // not given
		}
		f.Importance = min(max(f.Importance, 1), 10)
		if f.Replaces < 1 || f.Replaces > known {
			f.Replaces = 0
		}
		d.Facts = append(d.Facts, f)
	}
	return d, nil
}

// number reads a JSON number, or a string holding one; 0 otherwise.
func number(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case string:
		n, _ := strconv.Atoi(strings.TrimSpace(x))
		return n
	}
	return 0
}

// clip is s on one line, trimmed, cut to at most n bytes at a rune
// boundary.
func clip(s string, n int) string {
	s = oneLine(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n])
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Memories is what a distilled session teaches, for its owner: the episode
// (one per session, kind "episode", dated by the session, referring to the
// turns refs of the turns shown) and the facts, each referring to the turns
// it comes from.
// A fact that replaces a KNOWN memory takes its key, so the memory gets a
// new version and the old text is kept as its history; a fact the same as a
// KNOWN memory takes its key too, and counts as another mention of it;
// any other gets a key of its own text.
func (d Distilled) Memories(session string, date time.Time, known []Known, refs []string) []Memory {
	joined := func(turns []int) string {
		var rs []string
		for _, t := range turns {
			if t >= 1 && t <= len(refs) && refs[t-1] != "" && !slices.Contains(rs, refs[t-1]) {
				rs = append(rs, refs[t-1])
			}
		}
		return strings.Join(rs, ",")
	}
	var out []Memory
	if d.Summary != "" {
		all := make([]int, len(refs))
		for i := range all {
			all[i] = i + 1
		}
		out = append(out, Memory{
			Session: session, Kind: "episode", Key: "episode:" + norm.Short(session, 8), Content: d.Summary,
			Context: strings.Join(d.Topics, ", ") + dateWords(date), Time: date, Ref: joined(all),
		})
	}
	for _, f := range d.Facts {
		key, kind := "", f.Category
		if f.Replaces > 0 {
			key = known[f.Replaces-1].Key
		} else {
			for _, k := range known {
				if norm.Same(k.Content, f.Content) {
					key, kind = k.Key, k.Kind // another mention of it, as it is
					break
				}
			}
		}
		if key == "" {
			key = "fact:" + norm.Short(norm.Normalize(f.Content), 8)
		}
		out = append(out, Memory{
			Session: session, Kind: kind, Key: key, Content: f.Content, Time: date,
			Importance: f.Importance, Ref: joined(f.Turns),
		})
	}
	return out
}
