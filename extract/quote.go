package extract

import (
	"strings"

	"github.com/caddy-memory/memory/internal/norm"
)

// minQuoted is the shortest memory (normalised) whose repetition is taken for
// a quote rather than a coincidence.
const minQuoted = 12

// StripQuoted removes from text every line that repeats one of the memories
// injected into the request: a model asked "what do you know about me" will
// list them, and learning its answer must not store them a second time. The
// markers around a whole quoted block are handled by block.Strip already;
// this catches lines quoted without them.
func StripQuoted(text string, injected []string) string {
	return stripQuoted(text, quoted(injected))
}

// quoted are the normal forms of the injected memories long enough to be
// taken for quoted, made once for both sides of a turn.
func quoted(injected []string) []string {
	var needles []string
	for _, m := range injected {
		if n := norm.Normalize(m); len(n) >= minQuoted {
			needles = append(needles, n)
		}
	}
	return needles
}

// stripQuoted is StripQuoted with the injected memories' normal forms.
func stripQuoted(text string, needles []string) string {
	if len(needles) == 0 || text == "" {
		return text
	}
	lines := strings.Split(text, "\n")
	kept := lines[:0]
	for _, line := range lines {
		normal := norm.Normalize(line)
		quoted := false
		for _, n := range needles {
			if strings.Contains(normal, n) {
				quoted = true
				break
			}
		}
		if !quoted {
			kept = append(kept, line)
		}
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}
