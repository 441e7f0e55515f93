package inject

import (
	"bytes"
	"strings"
)

// earlierHeader introduces, inside the one memory block, what recall found
// in the part of this conversation that was cut to fit the model.
const earlierHeader = "Earlier in this conversation (cut from the messages above to fit the model's context):"

// RenderEarlier renders items found in the cut part of the conversation as
// a section of the memory block, oldest first, within maxTokens; "" when
// none fits.
func RenderEarlier(items []Item, maxTokens int) string {
	var b strings.Builder
	used := EstimateTokens(earlierHeader) + 1
	for _, it := range items {
		line := renderLine(it, itemText(it))
		if used+EstimateTokens(line) > maxTokens {
			continue
		}
		used += EstimateTokens(line)
		b.WriteString(line)
	}
	if b.Len() == 0 {
		return ""
	}
	return earlierHeader + "\n" + b.String()
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
