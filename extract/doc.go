// Package extract owns learning: what a proxied turn or an ingested
// transcript teaches (Learn, Transcript), with the stable keys by which a
// newer statement supersedes an older one; the rule-based facts a user
// states; the memories a model quoted back, stripped; and the prompt that
// distills a session and the reading of its answer. It reads answers
// through inject's dialects and writes nothing.
package extract
