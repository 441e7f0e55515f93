package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// maxIdentityScan bounds the identity memories read for one request.
const maxIdentityScan = 64

// Identity returns up to n of the owner's identity facts (kind "identity":
// name, age, where they live, ...), newest first.
func (e *Engine) Identity(ctx context.Context, owner string, n int) ([]*store.Memory, error) {
	var out []*store.Memory
	err := e.store.View(func(tx *store.Tx) error {
		now := tx.Now()
		big, err := e.outgrown(tx, owner)
		if err != nil {
			return err
		}
		held := false
		if big {
			if held, err = e.index.Holds(owner); err != nil {
				return err
			}
		}
		var ids []uint64
		if held {
			ids, err = e.index.OwnerKind(ctx, owner, "identity", maxIdentityScan)
			// A damaged shard is rebuilt (repair.go); the records answer.
			held = !errors.Is(err, index.ErrDamaged)
			if err != nil && held {
				return err
			}
		}
		if held {
			for _, id := range ids {
				if m, err := tx.Get(owner, id); err == nil && m.Active(now) && m.Kind == "identity" {
					out = append(out, m)
				}
			}
			return nil
		}
		return tx.PeekAll(owner, func(p *store.Peek) error {
			if !p.Active(now) || len(out) >= maxIdentityScan {
				return nil
			}
			b, err := p.Brief()
			if err != nil || b.Kind != "identity" {
				return err
			}
			m, err := p.Memory()
			if err == nil {
				out = append(out, m)
			}
			return err
		})
	})
	slices.SortFunc(out, func(a, b *store.Memory) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return out[:min(n, len(out))], err
}
