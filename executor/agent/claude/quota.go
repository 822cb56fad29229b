package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// When a usage limit resets, from whatever Claude Code passes on. Measured
// with the CLI 2.1.328 against internal/fakeapi (TestCLIUsageLimit there):
//
//   - The API's anthropic-ratelimit-unified-reset header (Unix seconds) is
//     never printed as such. With a subscription login the CLI turns it into
//     a stream-json line {"type":"rate_limit_event","rate_limit_info":
//     {"status":"rejected","resetsAt":<unix seconds>,…}} and a result text
//     "You've hit your 5-hour limit · resets 11:04pm (UTC)": a clock time
//     in the CLI's own zone, named in parentheses, with the month and day
//     when the reset is more than a day away ("resets Dec 3, 9am (UTC)")
//     and the year when it is another year. With an API key the headers are
//     dropped and only the API's own message is passed on.
//   - The API's message is passed on as the result text after "API Error:
//     Request rejected (429) · ", and written in the session's transcript
//     as the text of an assistant line with "isApiErrorMessage": true. Its
//     known forms: "…usage limit reached|<unix seconds>", an RFC 3339 time,
//     "resets in 2 hours", "try again in 90 seconds".
//   - Nothing is written on stderr in stream-json mode; a CLI that did
//     would be read the same way.
//
// A message that gives no time gives nil: the reset time is then unknown,
// and said so.

// rateLimitInfo is the payload of a stream-json rate_limit_event line.
type rateLimitInfo struct {
	Status   string `json:"status"`
	ResetsAt int64  `json:"resetsAt"`
}

// rejectedUntil is the reset time of a rejected rate_limit_event, or nil
// (not rejected, or no time).
func (i *rateLimitInfo) rejectedUntil() *time.Time {
	if i == nil || i.Status != "rejected" || i.ResetsAt <= 0 {
		return nil
	}
	t := time.Unix(i.ResetsAt, 0).UTC()
	return &t
}

var (
	resetRFC3339 = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	resetUnix    = regexp.MustCompile(`\|(\d{10})\b`)
	resetIn      = regexp.MustCompile(`(?i)(?:retry|try again|resets?) in ((?:\d+ ?(?:seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)\b[ ,]*(?:and )?)+)`)
	durationPart = regexp.MustCompile(`(?i)(\d+) ?(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)\b`)
	// resetClock is the CLI's "resets [at] [Mon D[, YYYY], ]H[:MM][am|pm] [(Zone)]".
	resetClock = regexp.MustCompile(`(?i)\bresets?(?: at)? (?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* (\d{1,2}),? (?:(\d{4}),? )?(?:at )?)?(\d{1,2})(?::(\d{2}))? ?(am|pm)?(?: \(([^)]+)\))?`)
)

// quotaResetOf is when the limit of an ended session resets: the stream's
// rate_limit_event first (exact), else the result text, else stderr.
func quotaResetOf(e Ended, result string) *time.Time {
	if e.RateLimitReset != nil {
		return e.RateLimitReset
	}
	return quotaReset(e.Now, result, string(e.Stderr))
}

// quotaReset is the first reset time any of texts gives (in the order
// given), or nil when none does. now is when the texts were written: the
// clock of delays ("resets in 5 minutes") and of clock times without a
// date ("resets 3pm", the next 3pm: the CLI prints no date for a reset
// within a day; a time at most an hour past is taken as past, not as
// tomorrow's). The zone named in parentheses is used when this machine
// knows it, else the local zone (the CLI's, on the same machine).
func quotaReset(now time.Time, texts ...string) *time.Time {
	for _, s := range texts {
		if t := resetTime(s, now); t != nil {
			return t
		}
	}
	return nil
}

// resetTime is the reset time msg gives, or nil.
func resetTime(msg string, now time.Time) *time.Time {
	if m := resetRFC3339.FindString(msg); m != "" {
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04Z07:00"} {
			if t, err := time.Parse(layout, m); err == nil {
				return &t
			}
		}
	}
	if m := resetUnix.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			t := time.Unix(n, 0).UTC()
			return &t
		}
	}
	if m := resetIn.FindStringSubmatch(msg); m != nil {
		var d time.Duration
		for _, p := range durationPart.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(p[1])
			unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[strings.ToLower(p[2])[0]]
			d += time.Duration(n) * unit
		}
		t := now.Add(d).UTC()
		return &t
	}
	if m := resetClock.FindStringSubmatch(msg); m != nil {
		return clockTime(m, now)
	}
	return nil
}

// clockTime reads a resetClock match: month, day, year, hour, minute,
// am/pm, zone.
func clockTime(m []string, now time.Time) *time.Time {
	hour, _ := strconv.Atoi(m[4])
	minute, _ := strconv.Atoi(m[5])
	switch ampm := strings.ToLower(m[6]); {
	case ampm == "" && m[5] == "":
		return nil // a bare number ("resets 3 times") is no time
	case ampm != "" && (hour < 1 || hour > 12):
		return nil
	case ampm == "am" && hour == 12:
		hour = 0
	case ampm == "pm" && hour < 12:
		hour += 12
	}
	if hour > 23 || minute > 59 {
		return nil
	}
	loc := now.Location()
	if m[7] != "" {
		if l, err := time.LoadLocation(m[7]); err == nil {
			loc = l
		}
	}
	local := now.In(loc)
	if m[1] == "" {
		t := time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, loc)
		if t.Before(local.Add(-time.Hour)) {
			t = t.AddDate(0, 0, 1)
		}
		t = t.UTC()
		return &t
	}
	month := time.Month(strings.Index("janfebmaraprmayjunjulaugsepoctnovdec", strings.ToLower(m[1])[:3])/3 + 1)
	day, _ := strconv.Atoi(m[2])
	year := local.Year()
	if m[3] != "" {
		year, _ = strconv.Atoi(m[3])
	}
	t := time.Date(year, month, day, hour, minute, 0, 0, loc)
	if m[3] == "" && t.Before(local.AddDate(0, -6, 0)) {
		t = t.AddDate(1, 0, 0) // "Jan 2" read on Dec 30
	}
	t = t.UTC()
	return &t
}

// transcriptQuotaText is the text of the last API error of a session's
// transcript (an assistant line with "isApiErrorMessage": true), or "".
func transcriptQuotaText(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var l struct {
			Type       string `json:"type"`
			IsAPIError bool   `json:"isApiErrorMessage"`
			Message    *struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "assistant" || !l.IsAPIError || l.Message == nil {
			continue
		}
		for _, c := range l.Message.Content {
			if c.Type == "text" && c.Text != "" {
				last = c.Text
			}
		}
	}
	return last
}

// isQuotaText recognises a usage-limit message in free text (stderr): the
// API's and the CLI's own wordings.
func isQuotaText(s string) bool {
	t := strings.ToLower(s)
	for _, w := range []string{"usage limit", "rate limit", "(429)", "you've hit your", "limit reached"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}
