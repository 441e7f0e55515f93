package engine

import (
	"context"
	"errors"

	"github.com/caddy-memory/memory/store"
)

// An Import is one import of exported memories, written a batch at a time:
// its memory is bounded by a batch, whatever the size of what is imported.
type Import struct {
	mg      *manager
	keepIDs bool
	// since is the last memory id numbered before the import began: a
	// line joins the owner's memory of its id only if that memory was
	// there before (see store.Tx.Import).
	since uint64
}

// NewImport begins an import. keepIDs keeps imported ids where they are
// free (a trusted restore; see store.Tx.Import).
func (e *Engine) NewImport(keepIDs bool) (*Import, error) {
	im := &Import{mg: e.manager, keepIDs: keepIDs}
	err := e.manager.store.View(func(tx *store.Tx) error {
		im.since = tx.LastID()
		return nil
	})
	return im, err
}

// importRelease is how many bytes of imported memories are written between
// two returns of the store file's mapped pages (store.DB.ReleaseMapped):
// the index reads each memory imported, and every page it reads would stay
// resident until the minute's release (releaseEvery), as much as the
// import itself. Given back, they stay in the kernel's page cache.
const importRelease = 2 << 20

// Batch writes exported memories (each with its Owner set) in one
// transaction and returns once they are searchable: what each import did,
// or, for a memory that can never be stored, its error (errs[i], wrapping
// store.ErrInvalid). Callers bound ms (the API sends a few hundred lines).
func (im *Import) Batch(ctx context.Context, ms []*store.Memory) (ops []store.ImportOp, errs []error, err error) {
	mg := im.mg
	ops, errs = make([]store.ImportOp, len(ms)), make([]error, len(ms))
	seq, err := mg.write(func(tx *store.Tx) error {
		for i, m := range ms {
			m.Digest = mg.index.Digester().Digest(m.Content, m.Context)
			if m.Source == "" {
				m.Source = store.SourceImport
			}
			op, err := tx.Import(m.Owner, m, im.keepIDs, im.since)
			switch {
			case errors.Is(err, store.ErrInvalid):
				ops[i], errs[i] = "", err
			case err != nil:
				return err
			default:
				ops[i], errs[i] = op, nil
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	err = mg.indexer.waitIndexed(ctx, seq)
	size := 0
	for _, m := range ms {
		size += memorySize(m)
	}
	if mg.imported.Add(int64(size)) >= importRelease {
		mg.imported.Store(0)
		mg.store.ReleaseMapped()
	}
	return ops, errs, err
}
