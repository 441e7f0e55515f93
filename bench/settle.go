package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// settle waits until the process is idle: after a preload, Bleve goes on
// merging the segments of the freshly loaded index for a while (minutes at a
// million memories), which a server that has been running would have done
// long before. Measuring through it measures the preload. Idle is under a
// tenth of a core for two seconds in a row; it gives up after max.
func settle(max time.Duration) {
	start := time.Now()
	untilIdle(func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}, max)
	fmt.Fprintf(os.Stderr, "settled in %s\n", time.Since(start).Round(time.Second))
}

// untilIdle waits until the CPU time cpu reports grows by under a tenth
// of a second in each of two seconds in a row, or max has passed.
func untilIdle(cpu func() time.Duration, max time.Duration) {
	start := time.Now()
	quiet := 0
	for prev := cpu(); quiet < 2 && time.Since(start) < max; {
		time.Sleep(time.Second)
		now := cpu()
		if now-prev < 100*time.Millisecond {
			quiet++
		} else {
			quiet = 0
		}
		prev = now
	}
}
