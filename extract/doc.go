// Package extract owns learning: the response side of each LLM wire format
// (decoding a JSON or streamed body into the assistant's turn), stripping
// any injected memory block or quoted memory, what a proxied turn or an
// ingested transcript teaches (Learn, Transcript) with the stable keys a
// newer statement supersedes an older one by, and the rule-based extractor
// that turns what a user says into standalone facts. It writes nothing.
package extract
