package extract

import (
	"strconv"
	"strings"
	"time"

	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/norm"
)

// Said is one message of a transcript to learn from.
type Said struct {
	// Role is "user", "assistant", or the speaker's name.
	Role    string
	Content string
	Time    time.Time
	// Ref is an external reference (a message id); with the session it also
	// makes learning the same transcript again idempotent.
	Ref string
}

// Transcript is what a transcript of one session teaches: every message
// as a memory of kind "turn" with its time and reference, and, when facts
// is set, the facts its speakers state about themselves, as from proxied
// traffic, each after the message that states it. The assistant's words are
// never facts about a person. turns counts the messages kept.
func Transcript(session string, said []Said, facts bool) (mems []Memory, turns int) {
	for i, s := range said {
		text := strings.TrimSpace(block.Strip(s.Content))
		if text == "" {
			continue
		}
		speaker := speakerName(s.Role)
		key := transcriptKey(session, s)
		meta := map[string]string{"role": s.Role, "position": strconv.Itoa(i)}
		if session != "" {
			meta["conversation"] = session
		}
		turns++
		mems = append(mems, Memory{
			Session: session, Kind: "turn", Key: key, Ref: s.Ref, Time: s.Time, Meta: meta,
			Content: speaker + ": " + block.Truncate(text, maxTurnUser/4),
			Context: neighbours(said, i) + dateWords(s.Time),
		})
		if !facts || speaker == "Assistant" || strings.EqualFold(s.Role, "system") {
			continue
		}
		for _, f := range Facts(text) {
			f = About(f, speaker)
			mems = append(mems, Memory{
				Session: session, Kind: f.Kind, Key: f.Key, Content: f.Content, Ref: s.Ref,
				Time: s.Time, Meta: map[string]string{"turn": key},
			})
		}
	}
	return mems, turns
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

// neighbours is the text of the messages around message i: a turn is
// often searched for with the words of the question it answered.
func neighbours(said []Said, i int) string {
	var parts []string
	for _, j := range []int{i - 2, i - 1, i + 1, i + 2} {
		if j >= 0 && j < len(said) {
			parts = append(parts, block.Truncate(block.Strip(said[j].Content), maxContextTokens))
		}
	}
	return strings.Join(parts, "\n")
}

// transcriptKey is the stable key of a transcript message: by session and
// reference, or, without a reference, by its speaker, time and text.
func transcriptKey(session string, s Said) string {
	if s.Ref != "" {
		return "ingest:" + session + ":" + s.Ref
	}
	return "ingest:" + session + ":" + norm.Short(norm.Normalize(s.Role+"\x00"+s.Time.String()+"\x00"+strings.TrimSpace(block.Strip(s.Content))), 6)
}
