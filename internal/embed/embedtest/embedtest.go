// Package embedtest serves deterministic embeddings for tests: an
// OpenAI-compatible /v1/embeddings endpoint whose "model" puts words of one
// concept (commute, cycle, bike, ...) in the same dimension, so tests can
// show recall by meaning without a real model.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"unicode"
)

// concepts groups words that mean alike for the test model.
var concepts = [][]string{
	{"commute", "commuting", "cycle", "cycles", "cycling", "bike", "bikes", "biking", "bicycle", "ride", "rides"},
	{"office", "job", "work", "workplace"},
	{"pet", "pets", "dog", "dogs", "cat", "cats", "puppy", "kitten"},
	{"food", "eat", "eats", "meal", "meals", "dinner", "lunch", "sushi", "snack", "cuisine"},
	{"music", "song", "songs", "band", "concert", "guitar", "piano"},
	{"sick", "ill", "doctor", "hospital", "allergic", "allergy", "medicine"},
}

// hashed is the number of extra dimensions words outside the concepts are
// hashed into, lightly, so unrelated texts are not all identical.
const hashed = 32

// Server is a running test embeddings endpoint.
type Server struct {
	*httptest.Server
	Calls atomic.Int64 // requests served
	Fail  atomic.Bool  // answer 503 while set
}

// NewServer starts a server; close it when done.
func NewServer() *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL of the embeddings endpoint.
func (s *Server) Endpoint() string { return s.URL + "/v1/embeddings" }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Calls.Add(1)
	if s.Fail.Load() {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model == "" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []datum `json:"data"`
		Model  string  `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, text := range req.Input {
		out.Data = append(out.Data, datum{Object: "embedding", Index: i, Embedding: Vector(text)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// Vector is the test model's embedding of text (not normalised).
func Vector(text string) []float32 {
	v := make([]float32, len(concepts)+hashed)
	for _, word := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		found := false
		for c, words := range concepts {
			for _, w := range words {
				if w == word {
					v[c]++
					found = true
				}
			}
		}
		if !found {
			h := fnv.New32a()
			h.Write([]byte(word))
			v[len(concepts)+int(h.Sum32()%hashed)] += 0.15
		}
	}
	return v
}
