package inject

import (
	"slices"
	"strings"
)

// What each format gives an Editor (a dialectEditor), and what it reads
// an answer into: its text, its calls and its usage.

// dialectEditor is the part of an Editor that knows a format.
type dialectEditor interface {
	// observe reads one event (a whole JSON answer, an SSE event's data, an
	// NDJSON line) into the answer's text, calls and usage, and says
	// whether it shows the answer's nature: Final for text, Held for a
	// call, Undecided for neither.
	observe(ev []byte) State
	// edit rewrites an event for the client (nil drops it).
	edit(ev []byte) []byte
	// terminal reports whether an event ends the answer for the client
	// (a stop reason, the usage, a last "done"): in a stream passed on, it
	// and what follows wait for End.
	terminal(ev []byte) bool
	// resume carries on from the editor of the round before, whose
	// stream the client has: its numbering and its ids.
	resume(prev dialectEditor)
	answer() *answer
}

// keptAnswer is a dialectEditor of a Storing dialect.
type keptAnswer interface {
	// keptID is the id of the answer, kept by the server.
	keptID() string
}

// Usage is what an answer cost, in its format's tokens.
type Usage struct {
	Input, Output int
}

// Add adds u2 to u.
func (u *Usage) Add(u2 Usage) { u.Input, u.Output = u.Input+u2.Input, u.Output+u2.Output }

// answer is what the events of an answer said.
type answer struct {
	text strings.Builder
	// calls are in the order they came; each is written to as its parts
	// come, in any order (parallel calls interleave), so each has a place
	// of its own: a strings.Builder must not move.
	calls []*call
	// at is each call by its index in the answer: an answer can make
	// thousands.
	at map[int]*call
	// mine and theirs are the indexes of the proxy's calls and of the
	// others, sorted.
	mine, theirs []int
	// asCalled: no call is taken out (AsCalled).
	asCalled bool
	usage    Usage
	// prior is the usage of the rounds before, added to this answer's.
	prior    Usage
	isMemory func(name string) bool
	// read counts the bytes the answer keeps of what it read (its text,
	// its calls with their arguments): an answer passed on to the client
	// event by event keeps them all, and the Editor bounds them as it
	// bounds what it holds back.
	read int
}

// callCost is what a call counts for in read besides its arguments: a
// stream can make thousands of calls of no arguments.
const callCost = 64

// say adds t to the answer's text.
func (a *answer) say(t string) {
	a.text.WriteString(t)
	a.read += len(t)
}

// call is a tool call being read from an answer, by its index in it.
type call struct {
	index int
	id    string
	name  string
	args  strings.Builder
	mine  bool // one of the proxy's tools
	a     *answer
}

// named gives the call its name, and its place among the proxy's calls or
// the others.
func (c *call) named(name string) {
	c.name = name
	if mine := c.a.isMemory(name); mine != c.mine {
		from, to := &c.a.theirs, &c.a.mine
		if !mine {
			from, to = to, from
		}
		if i, ok := slices.BinarySearch(*from, c.index); ok {
			*from = slices.Delete(*from, i, i+1)
		}
		i, _ := slices.BinarySearch(*to, c.index)
		*to = slices.Insert(*to, i, c.index)
		c.mine = mine
	}
}

// add adds s to the call's arguments.
func (c *call) add(s string) {
	c.args.WriteString(s)
	c.a.read += len(s)
}

func (a *answer) call(index int) *call {
	if c, ok := a.at[index]; ok {
		return c
	}
	if a.at == nil {
		a.at = map[int]*call{}
	}
	c := &call{index: index, a: a}
	a.at[index] = c
	a.calls = append(a.calls, c)
	i, _ := slices.BinarySearch(a.theirs, index) // no name yet: not the proxy's
	a.theirs = slices.Insert(a.theirs, i, index)
	a.read += callCost
	return c
}

// memory reports whether the call at index is one of the proxy's tools.
func (a *answer) memory(index int) bool {
	c, ok := a.at[index]
	return ok && c.mine && !a.asCalled
}

// kept is the new index of the client's call at index: the proxy's calls
// before it are closed up.
func (a *answer) kept(index int) int { return a.before(index, false) }

// shift is how many of the proxy's calls come before index: what the
// client's items after them (blocks, output items) close up by.
func (a *answer) shift(index int) int { return a.before(index, true) }

// before counts the calls before index that are the proxy's (memory) or
// the client's: a search of the sorted indexes, since each event of an
// answer of thousands of calls asks.
func (a *answer) before(index int, memory bool) int {
	m, _ := slices.BinarySearch(a.mine, index)
	t, _ := slices.BinarySearch(a.theirs, index)
	switch {
	case a.asCalled && memory:
		return 0
	case a.asCalled:
		return m + t
	case memory:
		return m
	}
	return t
}

// clientCalls counts the calls that are not the proxy's.
func (a *answer) clientCalls() int { return len(a.calls) - a.memoryCalls() }

// memoryCalls counts the proxy's calls.
func (a *answer) memoryCalls() int {
	if a.asCalled {
		return 0
	}
	return len(a.mine)
}
