package engine

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/llm"
	"github.com/caddy-memory/memory/store"
)

// sessionTurn is a transcript turn of a session.
type sessionTurn struct {
	seq          uint64
	created      time.Time
	updated      time.Time
	id           uint64
	content, ref string
}

// session makes one call for a session's turns not yet distilled, and
// stores what it teaches. A failed call, or an answer that cannot be read
// even when asked again, leaves the turns waiting for the next flush.
func (lm *distiller) session(d *distilling, cfg *LLMConfig, s store.SessionState) {
	turns, err := lm.sessionTurns(s)
	if err != nil {
		lm.log().Error("reading a session to distil", zap.Error(err))
		return
	}
	if len(turns) == 0 {
		_, _ = lm.write(func(tx *store.Tx) error { return tx.DeleteSession(s.Owner, s.Session) })
		return
	}
	texts, refs := make([]string, len(turns)), make([]string, len(turns))
	for i, t := range turns {
		texts[i], refs[i] = t.content, t.ref
	}
	known, err := lm.similarTo(d.ctx, s.Owner, texts)
	if err != nil {
		lm.log().Error("finding what a session's owner already remembers", zap.Error(err))
		return
	}
	// The prompt holds the oldest turns that fit; its date is the newest
	// of those.
	_, _, n := extract.DistillPrompt(extract.Session{Turns: texts})
	var date time.Time
	through := s.Through
	for _, t := range turns[:n] {
		through = max(through, t.seq)
		if t.updated.After(date) {
			date = t.updated
		}
	}
	system, user, _ := extract.DistillPrompt(extract.Session{Date: date, Turns: texts[:n], Known: known})

	distilled, err := lm.ask(d.ctx, cfg, system, user, len(known))
	if err != nil {
		wait := d.failed(s, cfg)
		lm.log().Warn("distilling a session failed; its turns wait for the next try",
			zap.Error(err), zap.Duration("retry_in", wait))
		return
	}
	d.succeeded(s)
	mems := distilled.Memories(s.Session, date, known, refs[:n])
	_, err = lm.write(func(tx *store.Tx) error {
		for _, m := range mems {
			if _, _, err := tx.Upsert(s.Owner, lm.putOf(m, store.SourceLLM)); err != nil && !errors.Is(err, store.ErrInvalid) {
				return err
			}
		}
		cur, ok := tx.Session(s.Owner, s.Session)
		switch {
		case !ok: // forgotten meanwhile
			return nil
		case n < len(turns) || cur.Last.After(s.Last):
			// More turns wait: the rest of a long session at once, or
			// turns learned during the call after the debounce.
			cur.Through, cur.Due = through, n < len(turns)
			return tx.PutSession(cur)
		}
		return tx.DeleteSession(s.Owner, s.Session)
	})
	if err != nil {
		lm.log().Error("storing what a session taught; it is distilled again", zap.Error(err))
		return
	}
	if n < len(turns) {
		lm.wake(d.wake)
	}
}

// ask makes the call, and asks once more, saying why, when the answer
// cannot be read.
func (lm *distiller) ask(stop context.Context, cfg *LLMConfig, system, user string, known int) (extract.Distilled, error) {
	msgs := []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(stop, cfg.Timeout)
		start := time.Now()
		answer, err := cfg.Client.Complete(ctx, msgs, true)
		cancel()
		if err != nil {
			lm.cfg.Observer.LLMCall(LLMError, time.Since(start))
			return extract.Distilled{}, err
		}
		d, err := extract.ParseDistilled(answer, known)
		if err == nil {
			lm.cfg.Observer.LLMCall(LLMOK, time.Since(start))
			return d, nil
		}
		lm.cfg.Observer.LLMCall(LLMBadJSON, time.Since(start))
		if attempt == 1 {
			return extract.Distilled{}, err
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: answer}, llm.Message{Role: "user", Content: extract.RetryPrompt(err)})
	}
}

// sessionTurns are a session's transcript turns changed since it was last
// distilled, in the order they were said.
func (lm *distiller) sessionTurns(s store.SessionState) ([]sessionTurn, error) {
	var turns []sessionTurn
	err := lm.store.View(func(tx *store.Tx) error {
		now := tx.Now()
		return tx.PeekAll(s.Owner, func(p *store.Peek) error {
			if !p.Active(now) || !p.InSession(s.Session) {
				return nil
			}
			m, err := p.Memory()
			if err != nil {
				return err
			}
			if m.Kind == "turn" && m.Seq > s.Through {
				turns = append(turns, sessionTurn{seq: m.Seq, created: m.CreatedAt, updated: m.UpdatedAt, id: m.ID, content: m.Content, ref: m.Ref})
			}
			return nil
		})
	})
	slices.SortFunc(turns, func(a, b sessionTurn) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return turns, err
}

// similarTo is what the owner already remembers that is most like the
// turns: facts, not transcripts or episodes, for the model to update or
// leave alone.
func (lm *distiller) similarTo(ctx context.Context, owner string, turns []string) ([]extract.Known, error) {
	var query strings.Builder
	for _, t := range turns {
		query.WriteString(t)
		query.WriteByte('\n')
	}
	res, err := lm.recall.Search(ctx, SearchRequest{Owner: owner, Query: query.String(), Limit: 3 * maxKnown})
	if err != nil {
		return nil, err
	}
	// The profile first: the model keeps it current, and a session that
	// changes a standing fact often shares no word with it ("I moved to
	// Porto" / "User lives in Lisbon.").
	known, err := lm.recall.ProfileKnown(owner)
	if err != nil {
		return nil, err
	}
	shown := map[string]bool{}
	for _, k := range known {
		shown[k.Key] = true
	}
	similar := 0
	for _, r := range res {
		if m := r.Memory; m.Kind != "turn" && m.Kind != "episode" && !shown[m.Key] && similar < maxKnown {
			known = append(known, extract.Known{Key: m.Key, Kind: m.Kind, Content: m.Content})
			similar++
		}
	}
	return known, nil
}
