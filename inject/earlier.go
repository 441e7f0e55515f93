package inject

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
)

// earlierHeader introduces, inside the one memory block, what recall found
// in the part of this conversation that was cut to fit the model.
const earlierHeader = "Earlier in this conversation (cut from the messages above to fit the model's context):"

// Earlier is one thing found in the cut part of the conversation: a
// passage of a cut message, or a memory the conversation left.
type Earlier struct {
	Text string
	// At places it in the conversation: the section shows what it holds
	// in the order of At, earliest first.
	At int
}

// RenderEarlier renders what was found in the cut part of the
// conversation as a section of the memory block within maxTokens: items
// are taken in the order given (the best first) while they fit, and shown
// in the order of their At; "" when none fits.
func RenderEarlier(items []Earlier, maxTokens int) string {
	used := EstimateTokens(earlierHeader) + 1
	var kept []Earlier
	for _, it := range items {
		t := EstimateTokens(renderLine(Item{}, itemText(Item{Text: it.Text})))
		if used+t > maxTokens {
			continue
		}
		used += t
		kept = append(kept, it)
	}
	if len(kept) == 0 {
		return ""
	}
	slices.SortStableFunc(kept, func(a, b Earlier) int { return cmp.Compare(a.At, b.At) })
	var b strings.Builder
	b.WriteString(earlierHeader)
	b.WriteByte('\n')
	for _, it := range kept {
		b.WriteString(renderLine(Item{}, itemText(Item{Text: it.Text})))
	}
	return b.String()
}

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
// not carry it (the caller places a block of its own then: Block).
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

// Shows reports whether block already shows text, as a line of its own.
func Shows(block, text string) bool {
	return block != "" && strings.Contains(block, " "+itemText(Item{Text: text})+"\n")
}

// Block is a memory block holding section alone.
func Block(section string) string {
	return BlockStart + "\n" + preambleEarlier + "\n" + section + BlockEnd
}
