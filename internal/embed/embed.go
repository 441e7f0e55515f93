// Package embed owns the optional embedding recall: a client for
// OpenAI-compatible /v1/embeddings endpoints (OpenAI, Ollama, vLLM, LM
// Studio), the encoding of vectors for storage, and the brute-force cosine
// search over one owner's vectors. No model ships with it.
package embed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Client calls an OpenAI-compatible embeddings endpoint.
type Client struct {
	// URL is the endpoint, e.g. https://api.openai.com/v1/embeddings or
	// http://127.0.0.1:11434/v1/embeddings.
	URL string
	// Model is the embedding model's name.
	Model string
	// Dimensions, when not 0, asks models that can shorten their vectors
	// (OpenAI's text-embedding-3) for this many.
	Dimensions int
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	HTTP   *http.Client
}

// maxResponse bounds an embeddings response.
const maxResponse = 64 << 20

// Embed returns one unit-length vector per text, in order.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	req := map[string]any{"model": c.Model, "input": texts, "encoding_format": "float"}
	if c.Dimensions > 0 {
		req["dimensions"] = c.Dimensions
	}
	body, _ := json.Marshal(req)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: time.Minute}
	}
	resp, err := client.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings endpoint answered %s: %.200s", resp.Status, strings.TrimSpace(string(raw)))
	}
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("embeddings endpoint sent something that is not an embeddings response: %w", err)
	}
	if len(out.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings endpoint returned %d vectors for %d texts", len(out.Data), len(texts))
	}
	vecs := make([][]float32, len(texts))
	dims := -1
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
			return nil, errors.New("embeddings endpoint returned vectors out of order or twice")
		}
		if dims >= 0 && len(d.Embedding) != dims || len(d.Embedding) == 0 {
			return nil, errors.New("embeddings endpoint returned vectors of different lengths")
		}
		dims = len(d.Embedding)
		vecs[d.Index] = Normalize(d.Embedding)
	}
	return vecs, nil
}

// Normalize scales v to unit length, so a dot product is a cosine.
func Normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	n := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= n
	}
	return v
}

// Dot is the dot product of two vectors of one length.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// TextHash stamps a vector with the text it embeds; a memory whose text
// changed has a stale vector until it is embedded again.
func TextHash(text string) uint64 {
	h := sha256.Sum256([]byte(text))
	return binary.BigEndian.Uint64(h[:8])
}

// Encode stores a vector with the hash of its text.
func Encode(hash uint64, v []float32) []byte {
	b := make([]byte, 8+4*len(v))
	binary.BigEndian.PutUint64(b, hash)
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[8+4*i:], math.Float32bits(x))
	}
	return b
}

// Decode reads a stored vector and its text hash.
func Decode(b []byte) (uint64, []float32, error) {
	if len(b) < 8 || (len(b)-8)%4 != 0 {
		return 0, nil, errors.New("stored vector is damaged")
	}
	v := make([]float32, (len(b)-8)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[8+4*i:]))
	}
	return binary.BigEndian.Uint64(b), v, nil
}

// Set is one owner's vectors, flat, for brute-force search.
type Set struct {
	IDs  []uint64
	Dims int
	Flat []float32 // len(IDs) * Dims
}

// Add appends a vector; vectors of another length are ignored (a model
// change leaves old vectors until they are embedded again).
func (s *Set) Add(id uint64, v []float32) {
	if s.Dims == 0 {
		s.Dims = len(v)
	}
	if len(v) != s.Dims {
		return
	}
	s.IDs = append(s.IDs, id)
	s.Flat = append(s.Flat, v...)
}

// Scored is a memory id with its cosine similarity to the query.
type Scored struct {
	ID         uint64
	Similarity float32
}

// Top returns the k most similar vectors to q, most similar first.
func (s *Set) Top(q []float32, k int) []Scored {
	if s == nil || len(q) != s.Dims || k <= 0 {
		return nil
	}
	out := make([]Scored, 0, len(s.IDs))
	for i, id := range s.IDs {
		out = append(out, Scored{ID: id, Similarity: Dot(q, s.Flat[i*s.Dims:(i+1)*s.Dims])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Similarity > out[j].Similarity })
	return out[:min(k, len(out))]
}

// Bytes is the memory a Set holds.
func (s *Set) Bytes() int { return 4*len(s.Flat) + 8*len(s.IDs) }
