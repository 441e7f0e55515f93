//go:build !unix

package main

import "os"

// processCPU is not measured here: CPU per request reads as 0.
func processCPU() float64 { return 0 }

// maxRSS is not measured here.
func maxRSS(*os.ProcessState) int64 { return 0 }
