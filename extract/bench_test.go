package extract

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkFacts(b *testing.B) {
	text := "Hi! My name is Ana and I live in Lisbon. I'm allergic to peanuts and I usually cycle to work. " +
		"My favorite color is green. We decided to use Postgres for the new service. Can you help me plan a trip?"
	b.ReportAllocs()
	for b.Loop() {
		if len(Facts(text)) == 0 {
			b.Fatal("no facts")
		}
	}
}

// BenchmarkFactsLong reads long messages of the shapes users paste: a
// letter of first-person statements with quotes in it, a support exchange
// under speakers' labels, a story with dialogue, and a pasted article full
// of colons and quoted terms. Learning must keep up with a conversation
// however long its messages are.
func BenchmarkFactsLong(b *testing.B) {
	for _, m := range longMessages() {
		b.Run(fmt.Sprintf("%s-%dKB", m.name, len(m.text)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(m.text)))
			b.ReportAllocs()
			for b.Loop() {
				Facts(m.text)
			}
		})
	}
}

type longMessage struct{ name, text string }

// longMessages are four messages of 2 to 6 KB.
func longMessages() []longMessage {
	return []longMessage{
		{"letter", long("Hi, I need help writing a long note to my landlord and I want to give you the whole background first.\n\n",
			16, 3, "\n\n", func(i int) string {
				return fmt.Sprintf("In week %d I called the office again. The manager said: \"We will send someone on Monday\", "+
					"and I told him: I work from home, so any morning is fine. I'm allergic to dust, which is why the mould "+
					"in the bathroom worries me. My neighbour says \"it has always been like that\" but I don't agree. ", i+1)
			}, "Can you make it firm but polite?")},
		{"ticket", long("Please summarise this support thread for my team and suggest a reply.\n\n",
			8, 1, "", func(i int) string {
				return fmt.Sprintf("Customer: Order %d arrived broken and I am really upset, I paid for express shipping.\n"+
					"Agent: I'm sorry to hear that! Could you send a photo of the box?\n"+
					"Customer %d: Sure. I live in Leeds and the courier left it outside in the rain.\n", 4100+i, i%3+1)
			}, "\nI work in customer care myself, so I'd like the reply to sound human.")},
		{"story", long("Here is a chapter of my novel, tell me what you think of the pacing.\n\n",
			24, 2, "\n", func(i int) string {
				return fmt.Sprintf("\"I live in the lighthouse,\" she said, pulling her coat tighter. \"Nobody visits in winter.\" "+
					"Tom answered, \u201cI'm a doctor, I could help you.\u201d The wind went \"whoo\" over the cliffs for the %dth night. "+
					"She laughed: I have never needed a doctor. ", i+1)
			}, "\nI prefer short chapters, so be honest if this drags.")},
		{"article", long("Can you explain this passage to me? I'm a beginner in machine learning.\n\n",
			10, 1, "", func(i int) string {
				return fmt.Sprintf("Section %d: models are prompted with a few examples of input-label pairs before the task "+
					"(e.g., reviews labelled \u201cpositive\u201d and \u201cnegative\u201d). In \u201cLarger models learn differently\u201d, we found "+
					"that overriding prior knowledge is an emergent ability of scale: small models ignore flipped labels, while large "+
					"ones follow them. Note: results are averaged over %d seeds; see Table %d for details.\n", i+1, 3+i, i+2)
			}, "\nI usually learn best from examples, so please include one.")},
	}
}

// long is intro, n paragraphs (a break after every every-th), then outro.
func long(intro string, n, every int, brk string, para func(i int) string, outro string) string {
	var b strings.Builder
	b.WriteString(intro)
	for i := range n {
		b.WriteString(para(i))
		if i%every == every-1 {
			b.WriteString(brk)
		}
	}
	b.WriteString(outro)
	return b.String()
}

// BenchmarkOthersWords reads for someone else's words in messages of 5 KB
// and 80 KB, dense with quotes, colons and labels: its cost per byte must
// not grow with the message.
func BenchmarkOthersWords(b *testing.B) {
	var all strings.Builder
	for _, m := range longMessages() {
		all.WriteString(m.text)
		all.WriteString("\n")
	}
	for _, n := range []int{1, 16} {
		text := strings.Repeat(all.String(), n)[:n*5<<10]
		b.Run(fmt.Sprintf("%dKB", len(text)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				othersWords(text)
			}
		})
	}
}
