package inject

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestEventsAsScanned: server-sent events are read from a body in memory as
// a line scanner reads them: CRLF and bare LF line ends, comments, names,
// data lines joined, an event cut off at the end, blank-line runs.
func TestEventsAsScanned(t *testing.T) {
	pieces := []string{"data: {\"a\":1}", "data:x", "event: delta", ": keep-alive", "", "\r", "data: two\r", "id: 7", "data:", "retry: 5"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			b.WriteString([]string{"\n", "\r\n", "\n\n"}[rng.IntN(3)])
		}
		if rng.IntN(3) == 0 {
			b.WriteString(pieces[rng.IntN(len(pieces))]) // cut off
		}
		body := []byte(b.String())
		var got, want []string
		events(body, func(e, d string) bool { got = append(got, e+"|"+d); return true })
		scanned(body, func(e, d string) bool { want = append(want, e+"|"+d); return true })
		if !slices.Equal(got, want) {
			t.Fatalf("%q: %q, scanned %q", body, got, want)
		}
	}
}

// scanned is events as it read bodies with a bufio.Scanner.
func scanned(body []byte, fn func(event, data string) bool) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), len(body)+1)
	var name string
	var data []string
	dispatch := func() bool {
		if len(data) == 0 {
			name = ""
			return true
		}
		ok := fn(name, strings.Join(data, "\n"))
		name, data = "", data[:0]
		return ok
	}
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
			if !dispatch() {
				return
			}
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				name = value
			case "data":
				data = append(data, value)
			}
		}
	}
	dispatch()
}
