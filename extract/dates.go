package extract

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A fact keeps no date relative to when it was said: "User moved to
// Bristol last month" is wrong a month later. When a turn is learned, a
// relative date in what it teaches is made absolute from the turn's time
// ("in October 2026"). The slot tables write other languages' relative
// dates in English first (their relDates), so one table resolves them all.

var relativeDate = regexp.MustCompile(`(?i)\b(?:(last|this)\s+(week|month|year|summer|winter|spring|autumn|fall)|yesterday|(a|an|one|two|three|four|five|six|\d{1,2})\s+(days?|weeks?|months?|years?)\s+ago|for\s+(a|an|one|two|three|four|five|six|\d{1,2})\s+(weeks?|months?|years?))\b`)

var countWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

// absoluteDates rewrites the relative dates of a fact said at t.
func absoluteDates(content string, t time.Time) string {
	if t.IsZero() || !relativeDate.MatchString(content) {
		return content
	}
	return relativeDate.ReplaceAllStringFunc(content, func(m string) string {
		g := relativeDate.FindStringSubmatch(m)
		low := strings.ToLower(m)
		switch {
		case low == "yesterday":
			return "on " + t.AddDate(0, 0, -1).Format("2 January 2006")
		case g[1] != "":
			return relativeTo(strings.ToLower(g[1]), strings.ToLower(g[2]), t)
		case g[3] != "":
			return "in " + ago(count(g[3]), strings.ToLower(g[4]), t)
		case g[5] != "":
			return "since " + ago(count(g[5]), strings.ToLower(g[6]), t)
		}
		return m
	})
}

func count(w string) int {
	if n, err := strconv.Atoi(w); err == nil {
		return n
	}
	return countWords[strings.ToLower(w)]
}

// relativeTo is "last month" or "this year" said at t, absolute.
func relativeTo(which, unit string, t time.Time) string {
	back := 1
	if which == "this" {
		back = 0
	}
	switch unit {
	case "week":
		return "in the week of " + t.AddDate(0, 0, -7*back).Format("2 January 2006")
	case "month":
		return "in " + t.AddDate(0, -back, 0).Format("January 2006")
	case "year":
		return "in " + strconv.Itoa(t.Year()-back)
	}
	// A season: the last one that has begun (northern seasons, by month).
	starts := map[string]time.Month{"spring": time.March, "summer": time.June, "autumn": time.September, "fall": time.September, "winter": time.December}
	year := t.Year()
	if which == "last" && t.Month() < starts[unit] {
		year-- // the last one that has begun
	}
	if unit == "fall" {
		unit = "autumn"
	}
	return "in " + unit + " " + strconv.Itoa(year)
}

// ago is when n units before t was, as a month or a year.
func ago(n int, unit string, t time.Time) string {
	switch strings.TrimSuffix(unit, "s") {
	case "day":
		return t.AddDate(0, 0, -n).Format("2 January 2006")
	case "week":
		return t.AddDate(0, 0, -7*n).Format("January 2006")
	case "month":
		return t.AddDate(0, -n, 0).Format("January 2006")
	}
	return strconv.Itoa(t.Year() - n)
}
