package extract

import (
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
