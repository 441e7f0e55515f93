package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/receipts"
)

// load provisions an app as a configuration load does; the test cleans it
// up when it ends, unless it failed.
func load(t *testing.T, storages map[string]*StorageConfig) (*App, error) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	a := &App{Storages: storages}
	if err := a.Provision(ctx); err != nil {
		a.Cleanup() // as Caddy does after a failed Provision
		return nil, err
	}
	t.Cleanup(func() { a.Cleanup() })
	return a, nil
}

func mustLoad(t *testing.T, storages map[string]*StorageConfig) *App {
	t.Helper()
	a, err := load(t, storages)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestDefaultStorage(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	// Without storages, the default one is a file in Caddy's data directory.
	a := mustLoad(t, nil)
	s, err := a.Storage("")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(caddy.AppDataDir(), "memory"); s.Dir() != want || s.Name != DefaultName {
		t.Errorf("the default storage is %s in %s, want default in %s", s.Name, s.Dir(), want)
	}
	if _, err := a.Storage("other"); err == nil || !strings.Contains(err.Error(), `no memory storage is named "other"`) {
		t.Errorf("an unknown name: %v", err)
	}
	if _, err := a.Storage("/var/lib/memory"); err == nil || !strings.Contains(err.Error(), "path /var/lib/memory") {
		t.Errorf("a path given as a name: %v", err)
	}

	// One storage is the default whatever its name; with two, a handler
	// must name one unless one is named default.
	one := mustLoad(t, map[string]*StorageConfig{"main": {Path: t.TempDir(), IndexShards: 1}})
	if s, err := one.Storage(""); err != nil || s.Name != "main" {
		t.Errorf("the only storage as the default: %v %v", s, err)
	}
	two := mustLoad(t, map[string]*StorageConfig{"a": {Path: t.TempDir(), IndexShards: 1}, "b": {Path: t.TempDir(), IndexShards: 1}})
	if _, err := two.Storage(""); err == nil || !strings.Contains(err.Error(), "several (a, b)") {
		t.Errorf("no default among two: %v", err)
	}
	if _, err := two.Storage("c"); err == nil || !strings.Contains(err.Error(), "the storages are a, b") {
		t.Errorf("an unknown name among two: %v", err)
	}
}

func TestStoragesMustBeDistinct(t *testing.T) {
	dir := t.TempDir()
	_, err := load(t, map[string]*StorageConfig{"a": {Path: dir}, "b": {Path: dir + "/."}})
	if err == nil || !strings.Contains(err.Error(), "are the same directory") {
		t.Errorf("two names for one directory: %v", err)
	}
	_, err = load(t, map[string]*StorageConfig{"a": {Path: dir, URL: "postgres://x/y"}})
	if err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("path and url: %v", err)
	}
	_, err = load(t, map[string]*StorageConfig{"a": {Replica: dir}})
	if err == nil || !strings.Contains(err.Error(), "it needs url") {
		t.Errorf("replica without url: %v", err)
	}
}

// TestReloadAppliesOrRefuses: a later configuration of an open storage
// shares it, turns off the learner it no longer has once it replaced the
// running one, and is refused, with the reason and nothing changed, where
// the storage cannot follow it.
func TestReloadAppliesOrRefuses(t *testing.T) {
	dir := t.TempDir()
	withLLM := &StorageConfig{Path: dir, IndexShards: 1, LLM: &LLMConfig{URL: "http://127.0.0.1:9/v1/chat/completions", Model: "m"}}
	first := mustLoad(t, map[string]*StorageConfig{"default": withLLM})
	s1, _ := first.Storage("")
	e := s1.Engine()
	said := []extract.Said{{Role: "user", Content: "Hello"}}
	if _, err := e.Ingest(context.Background(), e.OwnerID("k"), "s", said, false, true); err != nil {
		t.Fatalf("with llm, an ingest for the model: %v", err)
	}

	_, err := load(t, map[string]*StorageConfig{"default": {Path: dir, IndexShards: 1, QueueSize: 7}})
	if err == nil || !strings.Contains(err.Error(), "queue_size cannot change while the storage is open") {
		t.Errorf("a new queue_size: %v", err)
	}
	if _, err := e.Ingest(context.Background(), e.OwnerID("k"), "s", said, false, true); err != nil {
		t.Errorf("the refused configuration changed the storage: %v", err)
	}

	second := mustLoad(t, map[string]*StorageConfig{"default": {Path: dir, IndexShards: 1}})
	s2, _ := second.Storage("")
	if s2.Engine() != e {
		t.Fatal("the second configuration opened the storage again")
	}
	if _, err := e.Ingest(context.Background(), e.OwnerID("k"), "s", said, false, true); err != nil {
		t.Errorf("a configuration loaded but not yet running changed the storage: %v", err)
	}
	first.Stop() // as Caddy does once the second one started
	if _, err := e.Ingest(context.Background(), e.OwnerID("k"), "s", said, false, true); !errors.Is(err, engine.ErrNoLLM) {
		t.Errorf("after a reload without llm, an ingest for the model: %v, want ErrNoLLM", err)
	}
	first.Cleanup() // the old configuration goes; the storage stays open
	if _, err := e.Stats(); err != nil {
		t.Errorf("the storage closed with a configuration still using it: %v", err)
	}
}

func TestReplicaSlots(t *testing.T) {
	dir := t.TempDir()
	unlock, ok, err := lockDir(dir)
	if err != nil || !ok {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	if _, ok, err := lockDir(dir); err != nil || ok {
		t.Errorf("a second holder got the directory: %v %v", ok, err)
	}
	unlock()
	unlock2, ok, err := lockDir(dir)
	if err != nil || !ok {
		t.Errorf("after unlock: %v %v", ok, err)
	} else {
		unlock2()
	}
}

// TestRemovedStorageClosesAfterItsLastRequest: a configuration cleaned up
// while one of its requests still uses a storage (Caddy does not wait for
// them at a reload) keeps the storage open for it; when the request ends,
// the storage closes and leaves no goroutine or open file behind.
func TestRemovedStorageClosesAfterItsLastRequest(t *testing.T) {
	goroutines, files := runtime.NumGoroutine(), openFiles(t)
	a := mustLoad(t, map[string]*StorageConfig{"a": {Path: t.TempDir(), IndexShards: 2}})
	s, _ := a.Storage("a")
	e := s.Engine()
	done := s.Use()
	a.Cleanup() // a reload without storage a
	if _, err := e.Stats(); err != nil {
		t.Fatalf("the storage closed under a request still using it: %v", err)
	}
	done()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutines || openFiles(t) > files {
		if time.Now().After(deadline) {
			t.Fatalf("after the last request: %d goroutines (%d before), %d open files (%d before)",
				runtime.NumGoroutine(), goroutines, openFiles(t), files)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := e.Stats(); err == nil {
		t.Error("the storage is still open after its last request")
	}
}

// openFiles counts the process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	return len(fds)
}

// TestStorageBackWhileARequestHoldsIt: a storage removed by a reload but
// still held by a request, then named again, takes the new settings at
// once: there is no running configuration of it to be replaced first.
func TestStorageBackWhileARequestHoldsIt(t *testing.T) {
	dir := t.TempDir()
	llm := &LLMConfig{URL: "http://127.0.0.1:9/v1/chat/completions", Model: "m"}
	first := mustLoad(t, map[string]*StorageConfig{"a": {Path: dir, IndexShards: 1, LLM: llm}})
	s, _ := first.Storage("a")
	defer s.Use()()
	first.Cleanup()
	mustLoad(t, map[string]*StorageConfig{"a": {Path: dir, IndexShards: 1}})
	e := s.Engine()
	said := []extract.Said{{Role: "user", Content: "Hello"}}
	if _, err := e.Ingest(context.Background(), e.OwnerID("k"), "s", said, false, true); !errors.Is(err, engine.ErrNoLLM) {
		t.Errorf("the storage named again without llm, an ingest for the model: %v, want ErrNoLLM", err)
	}
}

// TestAdminOperationHoldsItsStorage: an operation of Caddy's admin API
// (a reindex, a compaction) keeps its storage open through a reload that
// removes it, as a request does.
func TestAdminOperationHoldsItsStorage(t *testing.T) {
	a := mustLoad(t, map[string]*StorageConfig{"a": {Path: t.TempDir(), IndexShards: 1}})
	if _, err := storagesOf(a, "nosuch"); err == nil || !strings.Contains(err.Error(), `no memory storage named "nosuch"; it has a`) {
		t.Errorf("an unknown storage: %v", err)
	}
	open, err := storagesOf(a, "a")
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	err = runOn(rec, httptest.NewRequest(http.MethodPost, "/memory/compact", nil), open, func(_ context.Context, e *engine.Engine) (any, error) {
		a.Cleanup() // a reload without storage a, while the operation runs
		return e.Stats()
	})
	if err != nil || rec.Code != http.StatusOK {
		t.Errorf("an admin operation across a reload that removed its storage: %v (%d %s)", err, rec.Code, rec.Body)
	}
}

// TestHandlersStateOutlivesAReload: what the handlers keep of a storage in
// memory (the receipts GET /injections shows, the outputs owed to stored
// responses, the imports running) is the same after a reload, and each
// storage's own.
func TestHandlersStateOutlivesAReload(t *testing.T) {
	dir := t.TempDir()
	first := mustLoad(t, map[string]*StorageConfig{"a": {Path: dir, IndexShards: 1}})
	a1, _ := first.Storage("a")
	a1.Receipts().Record("owner", receipts.Receipt{Outcome: "injected", Injected: 1})

	second := mustLoad(t, map[string]*StorageConfig{"a": {Path: dir, IndexShards: 1}, "b": {Path: t.TempDir(), IndexShards: 1}})
	a2, _ := second.Storage("a")
	b, _ := second.Storage("b")
	if got := a2.Receipts().Recent("owner"); len(got) != 1 || got[0].Outcome != "injected" {
		t.Errorf("after a reload, the storage's receipts are %+v, want the one recorded before it", got)
	}
	if a2.Owed() != a1.Owed() || a2.Imports() != a1.Imports() {
		t.Error("a reload gave the storage new owed outputs or a new import bound: a response stored before it would be refused")
	}
	if b.Receipts() == a2.Receipts() || b.Owed() == a2.Owed() || b.Imports() == a2.Imports() {
		t.Error("two storages share what their handlers keep")
	}
	if got := b.Receipts().Recent("owner"); len(got) != 0 {
		t.Errorf("another storage shows a's receipts: %+v", got)
	}
}
