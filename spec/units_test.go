package spec

import (
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestParseTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Tokens
		err  bool
	}{
		{"1500000", 1_500_000, false},
		{"1.5M", 1_500_000, false},
		{"800k", 800_000, false},
		{"2M", 2_000_000, false},
		{"1_000", 1000, false},
		{"0.0000005M", 0, true},
		{"1.2345k", 0, true},
		{"-5", 0, true},
		{"abc", 0, true},
		{"", 0, true},
		{"M", 0, true},
		{"99999999999999999999", 0, true},
	} {
		got, err := ParseTokens(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseTokens(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestTokensString(t *testing.T) {
	for in, want := range map[Tokens]string{2_000_000: "2M", 1_500_000: "1.5M", 800_000: "800k", 950: "950", 1_234_567: "1234567", 1_250_000: "1.25M"} {
		if got := in.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(in), got, want)
		}
	}
}

func TestParseUSD(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want USD
		err  bool
	}{
		{"40", 40_000_000, false},
		{"12.50", 12_500_000, false},
		{"$0.1", 100_000, false},
		{"0.0000001", 0, true},
		{"-1", 0, true},
		{"ten", 0, true},
	} {
		got, err := ParseUSD(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseUSD(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	f, _, _ := big.ParseFloat("0.1", 10, 512, big.ToNearestEven)
	if u, err := USDFromFloat(f); err != nil || u != 100_000 {
		t.Errorf("USDFromFloat(0.1) = %v, %v", u, err)
	}
	if s := USD(40_000_000).String(); s != "$40.00" {
		t.Errorf("String = %q", s)
	}
	if s := USD(3_125_000).String(); s != "$3.125" {
		t.Errorf("String = %q", s)
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"45m", 45 * time.Minute, false},
		{"3h", 3 * time.Hour, false},
		{"1h30m", 90 * time.Minute, false},
		{"2d", 48 * time.Hour, false},
		{"1d2h", 26 * time.Hour, false},
		{"5", 0, true},
		{"-1h", 0, true},
		{"soon", 0, true},
	} {
		got, err := ParseDuration(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	if s := FormatDuration(90 * time.Minute); s != "1h30m" {
		t.Errorf("FormatDuration = %q", s)
	}
}

// A number too large for a count says so, rather than asking for a whole
// number (it is one).
func TestUnitsTooLarge(t *testing.T) {
	for _, in := range []string{"9300000000000", "99999999999999999999"} {
		_, err := ParseTokens(in)
		if err == nil || !strings.Contains(err.Error(), "too large") || strings.Contains(err.Error(), "whole number") {
			t.Errorf("ParseTokens(%q): %v, want a too-large error", in, err)
		}
	}
	if _, err := ParseUSD("99999999999999"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("ParseUSD: %v, want a too-large error", err)
	}
}
