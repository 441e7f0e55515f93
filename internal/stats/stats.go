// Package stats owns the small arithmetic the project's reports share:
// percentiles of samples, and the bytes a directory holds on disk.
package stats

import (
	"io/fs"
	"path/filepath"
	"sort"
)

// Percentile is the p-th percentile (0 to 100) of v, by the nearest rank;
// 0 for no samples. v is not modified.
func Percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

// DirSize is the size of the files under dir, in bytes; what cannot be
// read counts nothing.
func DirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
