package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// sample is one LoCoMo conversation with its questions.
type sample struct {
	ID        string
	Speakers  []string
	Sessions  []session
	Questions []question
}

type session struct {
	Name  string
	Date  time.Time
	Turns []turn
}

type turn struct {
	Speaker, DiaID, Text, Caption string
}

type question struct {
	Question string
	Evidence []string
	Category string
}

// categoryNames are LoCoMo's question categories.
var categoryNames = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// load reads LoCoMo's JSON: a list of {sample_id, conversation: {speaker_a,
// speaker_b, session_N: [turns], session_N_date_time}, qa: [...]}.
func load(path string) ([]sample, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var in []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string            `json:"question"`
			Evidence []json.RawMessage `json:"evidence"`
			Category int               `json:"category"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("%s is not LoCoMo JSON: %w", path, err)
	}
	var out []sample
	for _, s := range in {
		if s.SampleID == "" || s.Conversation == nil {
			return nil, fmt.Errorf("%s: a sample lacks sample_id or conversation", path)
		}
		smp := sample{ID: s.SampleID}
		for _, k := range []string{"speaker_a", "speaker_b"} {
			var name string
			_ = json.Unmarshal(s.Conversation[k], &name)
			smp.Speakers = append(smp.Speakers, name)
		}
		var nums []int
		for k := range s.Conversation {
			if n, ok := strings.CutPrefix(k, "session_"); ok && !strings.Contains(n, "_") {
				if i, err := strconv.Atoi(n); err == nil {
					nums = append(nums, i)
				}
			}
		}
		sort.Ints(nums)
		for _, n := range nums {
			key := "session_" + strconv.Itoa(n)
			var ts []struct {
				Speaker string `json:"speaker"`
				DiaID   string `json:"dia_id"`
				Text    string `json:"text"`
				Caption string `json:"blip_caption"`
			}
			if err := json.Unmarshal(s.Conversation[key], &ts); err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.SampleID, key, err)
			}
			var when string
			_ = json.Unmarshal(s.Conversation[key+"_date_time"], &when)
			date, err := parseDate(when)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.SampleID, key, err)
			}
			sess := session{Name: key, Date: date}
			for _, t := range ts {
				sess.Turns = append(sess.Turns, turn{Speaker: t.Speaker, DiaID: t.DiaID, Text: t.Text, Caption: t.Caption})
			}
			smp.Sessions = append(smp.Sessions, sess)
		}
		for _, q := range s.QA {
			var ev []string
			for _, e := range q.Evidence {
				var d string
				if json.Unmarshal(e, &d) == nil {
					// Some entries hold several ids in one string ("D8:6; D9:17").
					for _, part := range strings.FieldsFunc(d, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
						ev = append(ev, part)
					}
				}
			}
			smp.Questions = append(smp.Questions, question{Question: q.Question, Evidence: ev, Category: categoryNames[q.Category]})
		}
		out = append(out, smp)
	}
	return out, nil
}

// parseDate reads LoCoMo's session dates, "1:56 pm on 8 May, 2023".
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("session date %q is not like \"1:56 pm on 8 May, 2023\"", s)
}
