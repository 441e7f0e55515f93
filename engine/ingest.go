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
	seq, err := e.Write(func(tx *store.Tx) error {
		res = Ingested{}
		for i, t := range turns {
			text := strings.TrimSpace(inject.Strip(t.Content))
			if text == "" {
				continue
			}
			speaker := speakerName(t.Role)
			key := "ingest:" + session + ":" + t.Ref
			if t.Ref == "" {
				key = "ingest:" + session + ":" + shortHash(t.Role+"\x00"+t.Time.String()+"\x00"+text)
			}
			meta := map[string]string{"role": t.Role}
			if session != "" {
				meta["conversation"] = session
			}
			if _, _, err := tx.Upsert(owner, store.Put{
				Session: session, Kind: "turn", Key: key, Ref: t.Ref, Time: t.Time, Meta: meta,
				Content: speaker + ": " + inject.Truncate(text, maxTurnUser/4),
			}); err != nil {
				return err
			}
			res.Turns++
			if !facts || speaker == "Assistant" || strings.EqualFold(t.Role, "system") {
				continue // the assistant's words are not facts about a person
			}
			for _, f := range extract.Facts(text) {
				f = extract.About(f, speaker)
				if _, _, err := tx.Upsert(owner, store.Put{
					Session: session, Kind: f.Kind, Key: f.Key, Content: f.Content, Ref: t.Ref,
					Time: t.Time, Meta: map[string]string{"turn": key, "position": strconv.Itoa(i)},
				}); err != nil {
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
