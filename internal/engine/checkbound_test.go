package engine

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-memory/memory/store"
)

// TestCheckCutShortByItsBoundOpens: a check of the store file at open that
// reaches its bound (store.CheckTimeout) before the end of the file lets
// the storage open and serve, and says so in a warning that names what to
// run to check it all. (A file storage: a replica is made from its
// database.)
func TestCheckCutShortByItsBoundOpens(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Config{Dir: dir, Shards: 1, LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// More pairs than the check walks between two looks at its deadline.
	seed(t, e, 20, 250)
	closeEngine(t, e)

	defer func(d time.Duration) { store.CheckTimeout = d }(store.CheckTimeout)
	store.CheckTimeout = time.Nanosecond
	core, logs := observer.New(zapcore.InfoLevel)
	e, err = Open(Config{Dir: dir, Shards: 1, LockTimeout: time.Second, Logger: func() *zap.Logger { return zap.New(core) }})
	if err != nil {
		t.Fatalf("a check cut short by its bound kept the storage from opening: %v", err)
	}
	defer closeEngine(t, e)
	if st, err := e.Stats(); err != nil || st.Memories != 5000 {
		t.Errorf("stats after the open: %d memories, %v", st.Memories, err)
	}
	warned := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("stopped at its time bound").All()
	if len(warned) != 1 || warned[0].ContextMap()["pages_checked"] == nil {
		t.Errorf("want one warning that the check stopped at its bound; the log: %v", logs.All())
	} else if !strings.Contains(warned[0].Message, "caddy memory check") {
		t.Errorf("the warning does not say what to run: %q", warned[0].Message)
	}
}
