// Package extract owns learning: what a proxied turn or an ingested
// transcript teaches (Learn, Transcript), with the stable keys by which a
// newer statement supersedes an older one; the rule-based facts a user
// states, and the notes of what they say of themselves that no rule reads
// (kept in their words, with the topics a later change ends: notes.go,
// topic.go); the memories a model quoted back, stripped; and the prompt that
// distills a session and the reading of its answer. It reads answers
// through inject's dialects and writes nothing.
//
// It is public, not internal, because it is one of the units the design
// names (DESIGN.md). A user of it may rely on Learn and Transcript taking
// a turn or a transcript to memories, with keys by which a newer statement
// supersedes an older one, and on writing nothing; which facts the rules
// find improves from version to version.
package extract
