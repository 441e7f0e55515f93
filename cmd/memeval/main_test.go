package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/engine"
)

const fixture = `[{"sample_id":"conv-x","conversation":{"speaker_a":"Ana","speaker_b":"Ben",
 "session_1_date_time":"1:56 pm on 8 May, 2023",
 "session_1":[{"speaker":"Ana","dia_id":"D1:1","text":"I adopted a greyhound named Pixel last week."},
              {"speaker":"Ben","dia_id":"D1:2","text":"Congrats! I started learning the cello.","blip_caption":"a photo of a cello"}],
 "session_2_date_time":"9:00 am on 1 June, 2023",
 "session_2":[{"speaker":"Ana","dia_id":"D2:1","text":"Pixel loves the beach in Porto."}]},
 "qa":[{"question":"What is the name of Ana's greyhound?","answer":"Pixel","evidence":["D1:1"],"category":4},
       {"question":"Which instrument is Ben learning, and where does Pixel go?","answer":"cello; beach","evidence":["D1:2; D2:1"],"category":1},
       {"question":"What did Ben say about nothing?","answer":"","evidence":[],"category":5}]}]`

func TestLoadAndScore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locomo.json")
	os.WriteFile(path, []byte(fixture), 0o600)
	samples, err := load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := samples[0]
	if s.ID != "conv-x" || len(s.Sessions) != 2 || s.Sessions[1].Date.Month() != 6 || s.Sessions[0].Turns[1].Caption != "a photo of a cello" {
		t.Fatalf("parsed %+v", s)
	}
	if ev := s.Questions[1].Evidence; strings.Join(ev, ",") != "D1:2,D2:1" {
		t.Errorf("evidence %v, want the joined ids split", ev)
	}

	e, err := engine.Open(engine.Config{Dir: t.TempDir(), Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	if n, err := ingest(context.Background(), e, s, true, false); err != nil || n != 3 {
		t.Fatalf("ingest: %d %v", n, err)
	}
	r := run(context.Background(), e, samples, []int{1, 5}, 10, 800, 0, 0, true)
	if got := r.Groups["single-hop"]["recall@1"]; got != 1 {
		t.Errorf("single-hop recall@1 = %v, want 1", got)
	}
	if got := r.Groups["multi-hop"]["recall@5"]; got != 1 {
		t.Errorf("multi-hop recall@5 = %v, want both turns found", got)
	}
	if r.Counts["all"] != 2 {
		t.Errorf("%d questions scored, want 2 (one has no evidence)", r.Counts["all"])
	}
	if r.MeanTokens <= 0 {
		t.Errorf("no injected tokens measured")
	}
}

func TestLoadRefusesOtherFormats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(path, []byte(`{"not":"locomo"}`), 0o600)
	if _, err := load(path); err == nil || !strings.Contains(err.Error(), "not LoCoMo JSON") {
		t.Errorf("load = %v", err)
	}
	os.WriteFile(path, []byte(strings.Replace(fixture, "1:56 pm on 8 May, 2023", "yesterday", 1)), 0o600)
	if _, err := load(path); err == nil || !strings.Contains(err.Error(), `session date "yesterday"`) {
		t.Errorf("bad date: %v", err)
	}
}
