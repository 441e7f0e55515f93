package index

import (
	"strconv"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bleveindex "github.com/blevesearch/bleve_index_api"
	zap "github.com/blevesearch/zapx/v17"
)

// MappingVersion names the mapping below. A shard built with another version
// is rebuilt from the store at start, so changing the mapping or analyzers
// needs only a new version string.
// Version 3: the index's own analyzer (analyzer.go) instead of Bleve's "en",
// with the same terms. Version 4: only enrolled owners (Doc.Enrol); a shard
// of version 3 holds every owner, and documents of owners no longer enrolled
// would go stale in it.
const MappingVersion = "4"

// AnalyzerVersion names the terms the analyzer (analyzer.go, stemCache)
// makes of a text. Bump it with any change to them (TestAnalyzerGolden
// fails until you do): shards built by another are rebuilt from the store,
// and record digests made by another are read as none and made again in the
// background (see digestVersion).
const AnalyzerVersion = 1

// SegmentFormat names the segment format new shards are written in (zapx
// v17, Bleve's default from v2.6). Shards written before it (zapx v16,
// Bleve v2.5) are rebuilt from the store at start: Bleve could still read
// them, but only v17 runs index data through Bleve's writer and reader
// hooks (bleve_index_api), so a shard is rewritten in one format, all
// through.
const SegmentFormat = "z17"

// shardVersion is what a shard records of the mapping, the analyzer and
// the segment format it was built with. Version 1 of the analyzer predates
// the analyzer suffix.
func shardVersion() string {
	v := MappingVersion
	if AnalyzerVersion != 1 {
		v += "/" + strconv.Itoa(AnalyzerVersion)
	}
	return v + "+" + SegmentFormat
}

// contentAnalyzer analyses memory text and query text alike.
const contentAnalyzer = analyzerName

func init() {
	// No BM25 length normalisation. Bleve's average field length is the
	// number of distinct terms per document summed over segments, which
	// falls towards 1 as an index grows, so normalisation by it punishes
	// every memory longer than a few words, more so as memories accumulate.
	// Measured on LoCoMo: recall@5 0.540 with b = 0.75, 0.576 with b = 0.
	// (A Bleve package setting: it applies to every BM25 index in the process.)
	search.BM25_b = 0

	// Buffers sized for the small segments this index makes. By default a
	// new segment reserves room for 100 documents more than it holds, and a
	// merge writes through a 1 MiB buffer; while proxying, a shard's segment
	// holds a turn or two, and those buffers would be most of what each
	// segment and merge allocates: churn that makes the collector run beside
	// requests. Both buffers still grow as needed.
	// (Package settings of zapx, like BM25_b above.)
	zap.NewSegmentBufferNumResultsBump = 4
	zap.DefaultFileMergerBufferSize = 64 << 10
}

func newMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bleveindex.BM25Scoring // scorch only; tf-idf otherwise
	im.StoreDynamic, im.IndexDynamic, im.DocValuesDynamic = false, false, false
	im.DefaultAnalyzer = contentAnalyzer

	// Filter fields: one exact token each, no scoring statistics.
	kw := bleve.NewKeywordFieldMapping()
	kw.Analyzer = keyword.Name
	kw.Store, kw.IncludeInAll, kw.IncludeTermVectors, kw.DocValues = false, false, false, false
	kw.SkipFreqNorm = true

	// The text lives in the store; the index keeps only what search needs.
	// No term vectors: no phrase queries, and indexing is much faster without.
	txt := bleve.NewTextFieldMapping()
	txt.Analyzer = contentAnalyzer
	txt.Store, txt.IncludeInAll, txt.IncludeTermVectors, txt.DocValues = false, false, false, false

	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt("owner", kw)
	dm.AddFieldMappingsAt("os", kw)
	dm.AddFieldMappingsAt("kind", kw)
	dm.AddFieldMappingsAt("content", txt)
	dm.AddFieldMappingsAt("context", txt)
	im.DefaultMapping = dm
	// Dates are deliberately not indexed (indexing several times slower, and
	// a much larger index; see ../shared/reference/storage.md): expiry and
	// recency are applied to the records loaded from the store.
	return im
}

// ownerSession is the term of the "os" field that scopes a search to one
// session of one owner.
func ownerSession(owner, session string) string { return owner + "\x1f" + session }

func fields(d Doc) map[string]interface{} {
	return map[string]interface{}{
		"owner":   d.Owner,
		"os":      ownerSession(d.Owner, d.Session),
		"kind":    d.Kind,
		"content": d.Content,
		"context": d.Context,
	}
}
