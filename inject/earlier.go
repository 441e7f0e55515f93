package inject

import (
	"bytes"
	"strings"
)

// Dropped are the messages of whole that cut (whole trimmed, see Trim)
// no longer holds, in order, as d parses them; nil when either does not
// parse.
func Dropped(d Dialect, whole, cut []byte) []Message {
	w, err := d.Parse(whole)
	if err != nil {
		return nil
	}
	c, err := d.Parse(cut)
	if err != nil {
		return nil
	}
	// What cut keeps of whole is in the same order: a message of whole is
	// kept when it is the next of cut.
	var out []Message
	j := 0
	for _, m := range w.Messages {
		if j < len(c.Messages) && c.Messages[j] == m {
			j++
			continue
		}
		out = append(out, m)
	}
	return out
}

// Passages splits a message's text into passages of about maxBytes at
// most, at sentence and line ends (a longer sentence is a passage of its
// own), so that the part of a long message that answers a question can be
// shown without the rest.
func Passages(text string, maxBytes int) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if p := strings.TrimSpace(cur.String()); p != "" {
			out = append(out, p)
		}
		cur.Reset()
	}
	for _, s := range sentences(text) {
		if cur.Len() > 0 && cur.Len()+1+len(s) > maxBytes {
			flush()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(s)
	}
	flush()
	return out
}

// sentences splits text at line ends and after ".", "!" or "?" followed
// by white space.
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end := c == '\n' || (c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n')
		if !end {
			continue
		}
		if s := strings.TrimSpace(text[start : i+1]); s != "" {
			out = append(out, s)
		}
		start = i + 1
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// WithEarlier returns body with section added to block, the memory block
// the body carries, just before its end marker; false when the body does
// not carry it (the caller places a block of its own then: block.Holding).
func WithEarlier(body []byte, block, section string) ([]byte, bool) {
	enc := jsonString(block)
	at := bytes.Index(body, enc[1:len(enc)-1])
	if block == "" || at < 0 || section == "" {
		return nil, false
	}
	end := at + len(enc) - 2 - len(BlockEnd)
	sec := jsonString(section)
	return splice(body, end, sec[1:len(sec)-1]), true
}
