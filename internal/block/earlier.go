package block

import (
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

// Shows reports whether block already shows text, as a line of its own.
func Shows(block, text string) bool {
	return block != "" && strings.Contains(block, " "+itemText(Item{Text: text})+"\n")
}

// Holding is a memory block holding section alone.
func Holding(section string) string {
	return Start + "\n" + preambleEarlier + "\n" + section + End
}
