package api_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

// importLine is one line of an export of owner.
func importLine(owner string, i int, content string) string {
	return jsonBody(&store.Memory{ID: uint64(i), Owner: owner, Kind: "note", Key: fmt.Sprint("k", i), Content: content}) + "\n"
}

// TestImportListsTheFirstErrors: the answer lists the first 100 bad lines
// and counts them all, however many there are.
func TestImportListsTheFirstErrors(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Admin)
	owner := e.OwnerID("erin")
	body := strings.Repeat("{not json}\n", 150) + importLine(owner, 1, "The one good line.")
	var res struct {
		Imported, Failed int
		Errors           []struct{ Line int }
	}
	ok(t, do(t, h, "POST", "/import", body, ""), http.StatusOK, &res)
	if res.Imported != 1 || res.Failed != 150 || len(res.Errors) != 100 || res.Errors[0].Line != 1 || res.Errors[99].Line != 100 {
		t.Errorf("150 bad lines and a good one: imported %d, failed %d, %d errors listed (%v)", res.Imported, res.Failed, len(res.Errors), res.Errors)
	}
}

// TestImportSkipsAnOverlongLine: a line longer than any memory's is
// reported by number and skipped; the lines after it are imported.
func TestImportSkipsAnOverlongLine(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Admin)
	owner := e.OwnerID("erin")
	long := importLine(owner, 1, strings.Repeat("x", 5<<20))
	body := long + importLine(owner, 2, "After the long line.")
	var res struct {
		Imported, Failed int
		Errors           []struct {
			Line    int
			Message string
		}
	}
	ok(t, do(t, h, "POST", "/import", body, ""), http.StatusOK, &res)
	if res.Imported != 1 || res.Failed != 1 || len(res.Errors) != 1 || res.Errors[0].Line != 1 || !strings.Contains(res.Errors[0].Message, "longer than") {
		t.Errorf("an overlong line, then a good one: %+v", res)
	}
}

// TestImportKeepsTheLastVersions: a line's history is kept to its last
// store.MaxHistory versions, in order; meta past its limit is refused.
func TestImportKeepsTheLastVersions(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Admin)
	owner := e.OwnerID("erin")
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	m := &store.Memory{ID: 1, Owner: owner, Kind: "note", Key: "k", Content: "Now.", Meta: map[string]string{"a": "b"}}
	for i := range store.MaxHistory + 5 {
		m.History = append(m.History, store.Version{Content: fmt.Sprint("version ", i), At: at.Add(time.Duration(i) * time.Hour)})
	}
	many := &store.Memory{ID: 2, Owner: owner, Kind: "note", Key: "k2", Content: "Meta.", Meta: map[string]string{}}
	for i := range 40 {
		many.Meta[fmt.Sprint("m", i)] = "v"
	}
	var res struct {
		Imported int
		Errors   []struct {
			Line    int
			Message string
		}
	}
	ok(t, do(t, h, "POST", "/import", jsonBody(m)+"\n"+jsonBody(many)+"\n", ""), http.StatusOK, &res)
	if res.Imported != 1 || len(res.Errors) != 1 || res.Errors[0].Line != 2 || !strings.Contains(res.Errors[0].Message, "meta has more than 32") {
		t.Errorf("import: %+v", res)
	}
	got := storedMemory(t, e, owner, 1).History
	if len(got) != store.MaxHistory || got[0].Content != "version 5" || got[len(got)-1].Content != fmt.Sprint("version ", store.MaxHistory+4) {
		t.Errorf("history kept: %d versions, %v", len(got), got)
	}
}

// TestImportTooLargeMidway: a body of unknown length found too large is
// refused once read that far; the batches stored before are said.
func TestImportTooLargeMidway(t *testing.T) {
	e := openEngine(t)
	h := newAPI(api.Config{Engine: e, Mode: api.Admin, Caller: caller, MaxImport: 3 << 20})
	owner := e.OwnerID("erin")
	var body strings.Builder
	for i := 1; body.Len() < 4<<20; i++ {
		body.WriteString(importLine(owner, i, strings.Repeat(fmt.Sprint("word", i, " "), 2000)))
	}
	req := httptest.NewRequest("POST", "/import", io.MultiReader(strings.NewReader(body.String()))) // no length
	req.Header.Set("Content-Type", "application/x-ndjson")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	msg := apiErr(t, rec, http.StatusRequestEntityTooLarge, "too_large")
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	through := -1
	if at := strings.Index(msg, "the lines up to "); at >= 0 {
		fmt.Sscanf(msg[at:], "the lines up to %d were imported", &through)
	}
	if through <= 0 || st.Memories != through {
		t.Errorf("refused midway: %q; the store holds %d memories", msg, st.Memories)
	}
}

// TestImportNeverJoinsALineToAnotherOfItsOwn: a line's id joins the
// caller's memory of that id only if that memory was there before the
// import began. Ids are one numbering for every owner: lines whose ids
// are taken by another owner get new ones, and a later line of the same
// import whose exported id is one of those must not overwrite the earlier
// line's memory.
func TestImportNeverJoinsALineToAnotherOfItsOwn(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Self)
	for i := range 3 {
		create(t, h, api.Self, "someone-else", fmt.Sprint("Someone else's memory ", i))
	}
	var body strings.Builder
	for i := 1; i <= 6; i++ {
		body.WriteString(importLine(e.OwnerID("old-store"), i, fmt.Sprint("Imported memory number ", i)))
	}
	var res struct{ Imported, Replaced int }
	ok(t, do(t, h, "POST", "/import", body.String(), "me"), http.StatusOK, &res)
	list, _, _, err := e.List(engine.ListQuery{Owner: e.OwnerID("me"), Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 6 || res.Replaced != 0 || len(list) != 6 {
		t.Errorf("6 lines into a store where another owner holds ids 1 to 3: imported %d, replaced %d; %d memories stored", res.Imported, res.Replaced, len(list))
	}
}
