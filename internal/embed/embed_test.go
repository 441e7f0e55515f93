package embed

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func server(t *testing.T, fn func(w http.ResponseWriter, body map[string]any, r *http.Request)) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		fn(w, body, r)
	}))
	t.Cleanup(srv.Close)
	return &Client{URL: srv.URL + "/v1/embeddings", Model: "m", Dimensions: 3, APIKey: "sk-test"}
}

func TestEmbedSendsOpenAIRequestAndOrdersVectors(t *testing.T) {
	c := server(t, func(w http.ResponseWriter, body map[string]any, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-test" || body["model"] != "m" || body["dimensions"] != float64(3) || body["encoding_format"] != "float" {
			http.Error(w, "bad request", 400)
			return
		}
		// Out of order, as the API allows.
		w.Write([]byte(`{"data":[{"index":1,"embedding":[0,3,4]},{"index":0,"embedding":[2,0,0]}]}`))
	})
	v, err := c.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 2 || v[0][0] != 1 || math.Abs(float64(v[1][1])-0.6) > 1e-6 || math.Abs(float64(v[1][2])-0.8) > 1e-6 {
		t.Errorf("vectors not in input order or not normalised: %v", v)
	}
}

func TestEmbedErrorsAreExplained(t *testing.T) {
	for name, answer := range map[string]struct {
		status int
		body   string
		want   string
	}{
		"server error":  {503, `{"error":"overloaded"}`, "503"},
		"not JSON":      {200, `<html>`, "not an embeddings response"},
		"missing items": {200, `{"data":[{"index":0,"embedding":[1]}]}`, "1 vectors for 2 texts"},
		"twice":         {200, `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`, "out of order or twice"},
		"lengths":       {200, `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}`, "different lengths"},
	} {
		c := server(t, func(w http.ResponseWriter, _ map[string]any, _ *http.Request) {
			w.WriteHeader(answer.status)
			w.Write([]byte(answer.body))
		})
		if _, err := c.Embed(context.Background(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), answer.want) {
			t.Errorf("%s: %v, want %q", name, err, answer.want)
		}
	}
}

func TestVectorsRoundTripAndRank(t *testing.T) {
	v := Normalize([]float32{1, 2, 2})
	hash, got, err := Decode(Encode(TextHash("x"), v))
	if err != nil || hash != TextHash("x") || len(got) != 3 || got[2] != v[2] {
		t.Fatalf("round trip: %v %v %v", hash, got, err)
	}
	if _, _, err := Decode([]byte{1, 2, 3}); err == nil {
		t.Error("a damaged vector decoded")
	}
	var s Set
	s.Add(1, Normalize([]float32{1, 0, 0}))
	s.Add(2, Normalize([]float32{1, 1, 0}))
	s.Add(3, Normalize([]float32{0, 0, 1}))
	s.Add(4, []float32{1, 0}) // another model's length: ignored
	top := s.Top(Normalize([]float32{1, 0.1, 0}), 2)
	if len(top) != 2 || top[0].ID != 1 || top[1].ID != 2 || top[0].Similarity < top[1].Similarity {
		t.Errorf("top = %+v", top)
	}
	if s.Top([]float32{1, 0}, 2) != nil {
		t.Error("a query of another length matched")
	}
	if d := Dot([]float32{1, 2, 3, 4, 5}, []float32{1, 1, 1, 1, 1}); d != 15 {
		t.Errorf("dot = %v", d)
	}
}
