package engine

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/store"
)

// Turn is one message of a transcript to ingest.
type Turn struct {
	// Role is "user", "assistant", or the speaker's name.
	Role    string
	Content string
	Time    time.Time
	// Ref is an external reference (a message id); with the session it also
	// makes re-ingesting the same transcript idempotent.
	Ref string
}

// Ingested reports what Ingest stored.
type Ingested struct {
	Turns int `json:"turns"`
	Facts int `json:"facts"`
	// Seq is the change sequence the data is searchable at.
	Seq uint64 `json:"-"`
}

// Ingest stores a transcript for owner: every turn as a memory of kind
// "turn" with its time and reference, and, when facts is true, the facts
// its speakers state about themselves, extracted as for proxied traffic.
// It returns once everything is durable and searchable.
func (e *Engine) Ingest(ctx context.Context, owner, session string, turns []Turn, facts bool) (Ingested, error) {
	var res Ingested
	seq, err := e.write(func(tx *store.Tx) error {
		res = Ingested{}
		for i, t := range turns {
			text := strings.TrimSpace(inject.Strip(t.Content))
			if text == "" {
				continue
			}
			speaker := speakerName(t.Role)
			key := ingestKey(session, t)
			meta := map[string]string{"role": t.Role, "position": strconv.Itoa(i)}
			if session != "" {
				meta["conversation"] = session
			}
			if _, _, err := tx.Upsert(owner, withDigest(store.Put{
				Session: session, Kind: "turn", Key: key, Ref: t.Ref, Time: t.Time, Meta: meta,
				Content: speaker + ": " + inject.Truncate(text, maxTurnUser/4),
				Context: neighbours(turns, i) + dateWords(t.Time),
			})); err != nil {
				return err
			}
			res.Turns++
			if !facts || speaker == "Assistant" || strings.EqualFold(t.Role, "system") {
				continue // the assistant's words are not facts about a person
			}
			for _, f := range extract.Facts(text) {
				f = extract.About(f, speaker)
				if _, _, err := tx.Upsert(owner, withDigest(store.Put{
					Session: session, Kind: f.Kind, Key: f.Key, Content: f.Content, Ref: t.Ref,
					Time: t.Time, Meta: map[string]string{"turn": key},
				})); err != nil {
					return err
				}
				res.Facts++
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Seq = seq
	return res, e.WaitIndexed(ctx, seq)
}

// speakerName is how a role is written in a transcript memory.
func speakerName(role string) string {
	switch strings.ToLower(role) {
	case "", "user", "human":
		return "User"
	case "assistant", "ai", "model":
		return "Assistant"
	}
	return role
}

// maxContextTokens bounds each neighbour's text in a turn's context.
const maxContextTokens = 60

// neighbours is the text of the turns around turn i: a turn is often
// searched for with the words of the question it answered.
func neighbours(turns []Turn, i int) string {
	var parts []string
	for _, j := range []int{i - 2, i - 1, i + 1, i + 2} {
		if j >= 0 && j < len(turns) {
			parts = append(parts, inject.Truncate(inject.Strip(turns[j].Content), maxContextTokens))
		}
	}
	return strings.Join(parts, "\n")
}

// dateWords writes when a turn was said in the words questions use: "8 May
// 2023", "May 2023", and the ISO form.
func dateWords(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "\n" + t.Format("2 January 2006") + " " + t.Format("2006-01-02")
}

// ingestKey is the stable key of an ingested turn: by session and reference,
// or, without a reference, by its speaker, time and text.
func ingestKey(session string, t Turn) string {
	if t.Ref != "" {
		return "ingest:" + session + ":" + t.Ref
	}
	return "ingest:" + session + ":" + shortHash(t.Role+"\x00"+t.Time.String()+"\x00"+strings.TrimSpace(inject.Strip(t.Content)))
}
