package inject

import "github.com/tidwall/gjson"

// MaxDepth is the deepest nesting of arrays and objects in a body this
// module reads. Chat requests and answers nest a few levels (tool schemas a
// few dozen); a deeper body is not read at all and passes through as it
// came.
const MaxDepth = 128

// ValidJSON reports whether b is one JSON value nested at most MaxDepth
// deep. Every JSON body the module reads, request or response, is checked
// here first: gjson's validator recurses once per level of nesting, and a
// body of a few megabytes of "[" grew the stack to a gigabyte and then
// overflowed it, which kills the process. The depth is checked first, in one
// pass without recursion, so gjson's recursion is bounded.
func ValidJSON(b []byte) bool {
	return shallow(b, MaxDepth) && gjson.ValidBytes(b)
}

// shallow reports whether b never nests arrays and objects more than max
// deep, outside strings. It does not otherwise validate b.
func shallow(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '[', '{':
			if depth++; depth > max {
				return false
			}
		case ']', '}':
			depth--
		case '"':
			// Skip the string, escapes included; an unterminated one is
			// gjson's to reject.
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return true
}
