package extract

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/contentenc"
	"github.com/caddy-memory/memory/internal/norm"
)

// Turn is one proxied turn to learn from: what the request said, as parsed
// on its way to the upstream, and the copy of the answer.
type Turn struct {
	Session string `json:"session,omitempty"`
	// Conversation groups the turns of one conversation (see
	// inject.Request.Conversation).
	Conversation string `json:"conversation,omitempty"`
	Dialect      string `json:"dialect"`
	// User is the latest user message; NewTurn says it was new in this
	// request (facts are taken only from new turns), Turn its position.
	User    string `json:"user"`
	NewTurn bool   `json:"new_turn"`
	Turn    int    `json:"turn"`
	// Earlier is the user's message before this one, read only for what a
	// correction in this one corrects.
	Earlier string `json:"earlier,omitempty"`
	// Framed: an earlier message of the conversation set up a role-play
	// or a story the user plays in (see Framed); only what the user says
	// stepping out of it teaches.
	Framed bool `json:"framed,omitempty"`
	// Before are the messages before the user's, kept as the turn's
	// context (see Memory.Context).
	Before []string `json:"before,omitempty"`
	// Response is the (possibly truncated) copy of the upstream response,
	// in its Content-Encoding.
	Response        []byte `json:"response,omitempty"`
	ContentType     string `json:"content_type,omitempty"`
	ContentEncoding string `json:"content_encoding,omitempty"`
	Truncated       bool   `json:"truncated,omitempty"`
	// Injected are the memories the request carried, as the model saw them:
	// lines of the answer that repeat them are not learned again.
	Injected []string  `json:"injected,omitempty"`
	Ref      string    `json:"ref,omitempty"`
	Time     time.Time `json:"time"`
}

// Memory is one thing a turn or transcript teaches, to be stored for its
// owner under Key: a newer memory with the same key supersedes it.
type Memory struct {
	Session, Kind, Key, Content string
	// Context is searchable text around the memory (a turn's neighbours and
	// the date it was said in words), never shown to the model.
	Context string
	Ref     string
	Meta    map[string]string
	Time    time.Time
	// Importance is how much the memory matters, 1 to 10, when the learner
	// says (0: it does not).
	Importance int
}

// Limits on a transcript memory: enough of a turn to find it and recall it,
// not a whole pasted document.
const (
	maxTurnUser      = 4000
	maxTurnAssistant = 4000
	// maxContextTokens bounds each neighbour's text in a turn's context.
	maxContextTokens = 60
	// maxDecoded caps a compressed response copy once decoded.
	maxDecoded = 8 << 20
)

// TurnKey is the stable key of a conversation turn's transcript memory; the
// facts learned from that turn point to it (Meta "turn"). The proxy uses it
// to leave the turn being answered out of its own recall.
func TurnKey(conversation string, turn int, user string) string {
	return "turn:" + conversation + ":" + strconv.Itoa(turn) + ":" + norm.Short(norm.Normalize(block.Strip(user)), 6)
}

// Learn is what a turn teaches: its transcript (so anything said can be
// found again) and the facts the user stated in it, never anything of the
// injected block; and the provider's id of the answer. An answer it cannot
// decode is reported in err, and the user's side is still learned.
func Learn(t *Turn) (mems []Memory, responseID string, err error) {
	needles := quoted(t.Injected)
	user := stripQuoted(block.Strip(t.User), needles)
	a, err := answerOf(t)
	a.Text = stripQuoted(a.Text, needles)
	ref := a.ID
	if ref == "" {
		ref = t.Ref
	}
	turnKey := TurnKey(t.Conversation, t.Turn, t.User)
	meta := map[string]string{"position": strconv.Itoa(t.Turn)}
	if t.Conversation != "" {
		meta["conversation"] = t.Conversation
	}
	if t.Framed {
		meta["framed"] = "1" // said in a role-play or a story: not about the user
	}

	// A response that is only tool calls is not the turn's answer; the
	// request that carries the tool results gets the answer and stores the
	// turn under the same key.
	ownWords := ownText(user, t.Framed)
	own, cut := ownTranscript(user, ownWords, t.Framed)
	if own != "" && (a.Text != "" || a.ToolCalls == 0) {
		content := "User: " + block.Truncate(own, maxTurnUser/4)
		if a.Text != "" && !cut {
			// An answer to a pasted text is work on that text (its
			// translation, its summary): not the user's either.
			content += "\nAssistant: " + block.Truncate(a.Text, maxTurnAssistant/4)
		}
		var before []string
		for _, b := range t.Before {
			before = append(before, block.Truncate(b, maxContextTokens))
		}
		mems = append(mems, Memory{
			Session: t.Session, Kind: "turn", Key: turnKey, Content: content,
			Context: strings.Join(before, "\n") + dateWords(t.Time),
			Ref:     ref, Time: t.Time, Meta: meta,
		})
	}
	if t.NewTurn {
		facts, notes := readOwn(stripQuoted(t.Earlier, needles), ownWords, true)
		for i, f := range slices.Concat(facts, notes) {
			dated := absoluteDates // a fact is written in English
			if i >= len(facts) {
				dated = notedDates // a note, in the user's language
			}
			mems = append(mems, Memory{
				Session: t.Session, Kind: f.Kind, Key: f.Key, Content: dated(f.Content, t.Time),
				Ref: ref, Time: t.Time, Meta: map[string]string{"turn": turnKey},
			})
		}
	}
	return mems, a.ID, err
}

// ownTranscript is what a turn's transcript keeps of the user's message:
// their own words, with what they pasted, quoted for a task or said inside
// a role-play left out and marked "[…]". A transcript rides with later
// requests as what the user said: a pasted stranger's "I live in
// Monterrey" there is the same false fact to a model as one in the
// profile. cut reports whether anything was left out; own is "" when
// nothing of the message was the user's. A message with code in it is
// kept whole: code is what the user works on, and asked about again.
func ownTranscript(user, ownWords string, framed bool) (own string, cut bool) {
	if user == "" || strings.Contains(user, "```") {
		return user, false
	}
	own = strings.TrimSpace(ownWords)
	if len(strings.Fields(own)) >= len(strings.Fields(user)) {
		return user, false
	}
	if own == "" && !framed {
		// A request and its material: the request is kept (the
		// conversation shows what was asked), the material is not.
		own = strings.TrimSpace(user[:sentenceEnd(user)])
	}
	if own == "" {
		return "", true
	}
	return own + " […]", true
}

// answerOf decodes the answer from the turn's copy of the response.
func answerOf(t *Turn) (inject.Assistant, error) {
	if len(t.Response) == 0 {
		return inject.Assistant{}, nil
	}
	body, err := contentenc.Decode(t.ContentEncoding, t.Response, maxDecoded, t.Truncated)
	if err != nil {
		return inject.Assistant{}, err
	}
	a, err := inject.Decode(inject.ByName(t.Dialect), t.ContentType, body)
	if err != nil && !t.Truncated {
		return inject.Assistant{}, err
	}
	return a, nil
}

// dateWords writes when a turn was said in the words questions use: "8 May
// 2023", "May 2023", and the ISO form.
func dateWords(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "\n" + t.Format("2 January 2006") + " " + t.Format("2006-01-02")
}
