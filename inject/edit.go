package inject

import (
	"bytes"
	"mime"
)

// When the proxy offers the model tools of its own, each answer of the
// upstream goes through an Editor on its way to the client. An answer that
// calls only the proxy's tools is a tool round: nothing of it reaches the
// client, the proxy runs the calls and asks the upstream again. Any other
// answer is final: it reaches the client without the proxy's calls (its
// indexes closed up, its stop reason "stop" when no call is left), with the
// usage of the rounds before added to its own. A stream is held back only
// until it shows which it is: from its first text it is passed on as it
// comes, edited event by event; one that starts with a call is held to its
// end, then sent (edited) or kept, as it turns out. A stream that talks and
// then calls only the proxy's tools continues: its end (stop reason, usage,
// [DONE]) is held back, and the next round's answer, resumed from it,
// carries on the same stream for the client (see Continues and Resume).
// What an Editor holds back, and what it keeps of an answer passed on, is
// bounded: past its limit, what it held and the rest of the answer go to
// the client as they came (Untouched), and the proxy runs none of the
// answer's calls.

// State is what an Editor has made of an answer so far.
type State int

// States of an Editor.
const (
	Undecided State = iota // held back: nothing has said what the answer is
	Final                  // passed on to the client, edited
	Held                   // a call came first: held to the end
	Untouched              // past the limit: passed on as it came
)

// Editor edits one answer of the upstream for the client.
type Editor struct {
	d         dialectEditor
	stream    bool
	state     State
	separator []byte // between events: "\n\n" (SSE), "\n" (NDJSON)
	partial   []byte
	held      [][]byte
	ended     bool
	// tail is the end of a stream passed on, held until End (tailing: one
	// has begun).
	tail    [][]byte
	tailing bool
	// limit bounds the bytes held back (0: no bound); size is those in
	// held and tail, partial aside.
	limit, size int
}

// framing is how the events of an answer are told apart.
type framing int

// Framings of an answer.
const (
	wholeJSON framing = iota // one JSON value
	sseEvents                // server-sent events, ending at a blank line
	jsonLines                // one JSON value a line (NDJSON)
)

// NewEditor edits an answer of dialect d and of a media type, holding back
// at most limit bytes of it (0: no bound); isMemory says which tool names
// are the proxy's; prior is the usage of the rounds before. It returns nil
// for an answer it cannot edit (another media type): that one goes to the
// client as it is.
func NewEditor(d Dialect, contentType string, limit int, isMemory func(name string) bool, prior Usage) *Editor {
	mt, _, _ := mime.ParseMediaType(contentType)
	var f framing
	switch mt {
	case "application/json":
		f = wholeJSON
	case "text/event-stream":
		f = sseEvents
	case "application/x-ndjson":
		f = jsonLines
	default:
		return nil
	}
	if d == nil {
		return nil
	}
	e := &Editor{limit: limit}
	e.d, f = d.editor(&answer{isMemory: isMemory, prior: prior}, f)
	switch f {
	case sseEvents:
		e.stream, e.separator = true, []byte("\n\n")
	case jsonLines:
		e.stream, e.separator = true, []byte("\n")
	}
	return e
}

// State is what the editor has made of the answer so far.
func (e *Editor) State() State { return e.state }

// Write reads bytes of the answer and returns those ready for the client:
// none while the answer is held back, p itself once it is Untouched.
func (e *Editor) Write(p []byte) []byte {
	if e.state == Untouched {
		return p
	}
	e.hold(p)
	var out []byte
	for e.stream {
		i := eventEnd(e.partial, e.separator)
		if i < 0 {
			break
		}
		ev := e.partial[:i]
		e.partial = e.partial[i:]
		out = e.event(ev, out)
		if e.over() {
			break
		}
	}
	if e.over() {
		out = e.untouched(out)
	}
	return out
}

// over reports whether the answer is past the editor's limit: what it
// holds back, or what it keeps of an answer passed on (its text and
// calls, which a stream that talks and then calls the proxy's tools
// carries into the next round).
func (e *Editor) over() bool {
	return e.limit > 0 && (e.size+len(e.partial) > e.limit || e.d.answer().read > e.limit)
}

// hold appends p to partial. A large partial grows by doubling: append
// grows a large slice by about a quarter at a time, which copies a long
// answer some five times over before it is whole.
func (e *Editor) hold(p []byte) {
	if need := len(e.partial) + len(p); need > cap(e.partial) {
		n := max(2*cap(e.partial), need, 4<<10)
		if e.limit > 0 {
			// partial is within the limit: held past it, it goes out.
			n = min(n, e.limit+len(p))
		}
		grown := make([]byte, len(e.partial), n)
		copy(grown, e.partial)
		e.partial = grown
	}
	e.partial = append(e.partial, p...)
}

// untouched gives up editing an answer that holds back more than its
// limit: what is held goes out after out, as it came, and the rest of the
// answer will pass as it comes.
func (e *Editor) untouched(out []byte) []byte {
	for _, ev := range e.held {
		out = append(out, ev...)
	}
	for _, ev := range e.tail {
		out = append(out, ev...)
	}
	out = append(out, e.partial...)
	e.held, e.tail, e.partial, e.size = nil, nil, nil, 0
	e.state = Untouched
	return out
}

// eventEnd is the length of the first whole event of b, with its
// separator, or -1.
func eventEnd(b, sep []byte) int {
	if len(sep) == 2 {
		// SSE events end at a blank line, "\r\n" line ends allowed.
		for i := 0; i+1 < len(b); i++ {
			if b[i] != '\n' {
				continue
			}
			switch {
			case b[i+1] == '\n':
				return i + 2
			case b[i+1] == '\r' && i+2 < len(b) && b[i+2] == '\n':
				return i + 3
			}
		}
		return -1
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return i + 1
	}
	return -1
}

// event takes one whole event, appending what goes to the client to out.
func (e *Editor) event(ev []byte, out []byte) []byte {
	if data := e.data(ev); data != nil {
		if s := e.d.observe(data); e.state == Undecided && s != Undecided {
			e.state = s
			if s == Final {
				for _, h := range e.held {
					out = e.emit(h, out)
				}
				e.held, e.size = nil, 0
			}
		}
	}
	if e.state == Final {
		if !e.tailing {
			data := e.data(ev)
			e.tailing = data != nil && e.d.terminal(data)
		}
		if e.tailing {
			e.tail = append(e.tail, bytes.Clone(ev))
			e.size += len(ev)
			return out
		}
		return e.emit(ev, out)
	}
	e.held = append(e.held, bytes.Clone(ev))
	e.size += len(ev)
	return out
}

// AsCalled returns a held answer, once whole, for the client with its
// calls as they came, the proxy's too, and only the usage of the rounds
// before added: the last answer, when the proxy's rounds are spent.
func (e *Editor) AsCalled() []byte {
	a := e.d.answer()
	a.asCalled = true // no call is taken out
	defer func() { a.asCalled = false }()
	var out []byte
	for _, ev := range e.held {
		if e.stream {
			out = e.emit(ev, out)
		} else {
			out = append(out, e.d.edit(ev)...)
		}
	}
	e.held, e.size = nil, 0
	return out
}

// data is an event's JSON: an SSE event's data lines, joined, or an NDJSON
// line; nil for none (a comment, a keep-alive, "[DONE]").
func (e *Editor) data(ev []byte) []byte {
	if e.separator[0] == '\n' && len(e.separator) == 1 {
		if line := bytes.TrimSpace(ev); len(line) > 0 && line[0] == '{' {
			return line
		}
		return nil
	}
	var data [][]byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" ")))
		}
	}
	j := bytes.Join(data, []byte("\n"))
	if len(j) == 0 || j[0] != '{' {
		return nil
	}
	return j
}

// emit appends ev, edited, to out. An SSE event keeps its other lines
// (event:, id:) and gets its data back on one line.
func (e *Editor) emit(ev []byte, out []byte) []byte {
	data := e.data(ev)
	if data == nil {
		return append(out, ev...)
	}
	edited := e.d.edit(data)
	if edited == nil {
		return out
	}
	if len(e.separator) == 1 {
		return append(append(out, edited...), '\n')
	}
	var kept [][]byte
	dataDone := false
	for _, line := range bytes.Split(bytes.TrimRight(ev, "\r\n"), []byte("\n")) {
		l := bytes.TrimSuffix(line, []byte("\r"))
		if bytes.HasPrefix(l, []byte("data:")) {
			if !dataDone {
				kept = append(kept, append([]byte("data: "), edited...))
				dataDone = true
			}
			continue
		}
		kept = append(kept, l)
	}
	return append(append(out, bytes.Join(kept, []byte("\n"))...), '\n', '\n')
}

// End takes the rest of the answer, once it has all come, and returns what
// goes to the client: nothing for a tool round (ToolRound is then true).
func (e *Editor) End() []byte {
	if e.ended {
		return nil
	}
	e.ended = true
	if e.state == Untouched {
		return nil
	}
	if !e.stream {
		data := bytes.TrimSpace(e.partial)
		e.partial = nil
		if len(data) == 0 || !ValidJSON(data) {
			e.state = Final
			return data // not an answer to edit: as it came
		}
		e.d.observe(data)
		if e.ToolRound() {
			e.held, e.size = [][]byte{data}, len(data)
			return nil
		}
		e.state = Final
		if a := e.d.answer(); a.prior == (Usage{}) && a.memoryCalls() == 0 {
			return data // nothing to take out or add: as it came
		}
		return e.d.edit(data)
	}
	var out []byte
	if len(e.partial) > 0 { // a stream cut short: its last event
		out = e.event(e.partial, out)
		e.partial = nil
	}
	if e.state == Final {
		if e.Continues() {
			return out // the end waits: the next round carries on
		}
		return append(out, e.Tail()...)
	}
	if e.ToolRound() {
		return nil
	}
	e.state = Final
	for _, h := range e.held {
		out = e.emit(h, out)
	}
	e.held, e.size = nil, 0
	return out
}

// Continues reports whether a stream the client has been given, whole
// now, called only the proxy's tools after what it said: the client's
// stream is to carry on with the next round (Resume), or end with Tail.
func (e *Editor) Continues() bool {
	a := e.d.answer()
	return e.stream && e.state == Final && len(a.calls) > 0 && a.clientCalls() == 0
}

// Tail returns the held end of a stream passed on, edited for the client.
func (e *Editor) Tail() []byte {
	var out []byte
	for _, ev := range e.tail {
		out = e.emit(ev, out)
	}
	e.tail, e.size = nil, 0
	return out
}

// TailWith is Tail with total, the usage of every round, as its usage:
// rounds after this stream's that ended without one of their own (tool
// rounds, a round that failed) count too.
func (e *Editor) TailWith(total Usage) []byte {
	a := e.d.answer()
	a.prior = Usage{total.Input - a.usage.Input, total.Output - a.usage.Output}
	return e.Tail()
}

// Resume makes e carry on the client's stream of prev, a round that
// Continues: e's answer is edited to follow it (no second start, its
// blocks, items and events numbered on from prev's, prev's ids), and is
// passed on from its first text.
func (e *Editor) Resume(prev *Editor) {
	e.d.resume(prev.d)
}

// ToolRound reports whether the answer, whole, calls only the proxy's
// tools (and at least one).
func (e *Editor) ToolRound() bool {
	a := e.d.answer()
	return (e.state == Undecided || e.state == Held) && len(a.calls) > 0 && a.clientCalls() == 0
}

// Calls are the proxy's tool calls of the answer, in its order: none of
// an answer passed on Untouched, whose calls the client has as they came.
func (e *Editor) Calls() []ToolCall {
	if e.state == Untouched {
		return nil
	}
	a := e.d.answer()
	var out []ToolCall
	for _, c := range a.calls {
		if c.mine {
			out = append(out, ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()})
		}
	}
	return out
}

// ResponseID is the id of an answer a Storing dialect's server keeps, as
// the client knows it ("" for other formats).
func (e *Editor) ResponseID() string {
	if r, ok := e.d.(keptAnswer); ok {
		return r.keptID()
	}
	return ""
}

// Text is what the answer said, besides its calls.
func (e *Editor) Text() string { return e.d.answer().text.String() }

// Usage is the answer's own usage.
func (e *Editor) Usage() Usage { return e.d.answer().usage }
