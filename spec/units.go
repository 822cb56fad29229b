package spec

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Tokens is a count of counted tokens (input + cache writes + output).
type Tokens int64

// ParseTokens reads a token count: a whole number ("1500000"), or a number
// with a k or M suffix ("800k", "1.5M", "2M"; a lower-case m is refused:
// it reads as minutes). Underscores are allowed as
// digit separators. The result must be a whole, non-negative number of tokens.
func ParseTokens(s string) (Tokens, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "k"), strings.HasSuffix(t, "K"):
		mult, t = 1_000, t[:len(t)-1]
	case strings.HasSuffix(t, "M"):
		mult, t = 1_000_000, t[:len(t)-1]
	}
	micros, err := parseDecimal(t, 6)
	if errors.Is(err, errTooLarge) {
		return 0, fmt.Errorf("%q is too large for a token count", s)
	}
	if err != nil || t == "" {
		return 0, fmt.Errorf("%q is not a token count: write a whole number or a number with k or M, like 1500000, \"800k\" or \"1.5M\"", s)
	}
	if micros < 0 {
		return 0, fmt.Errorf("a token count cannot be negative (%q)", s)
	}
	whole := new(big.Int).Mul(big.NewInt(micros), big.NewInt(mult))
	if new(big.Int).Mod(whole, big.NewInt(1_000_000)).Sign() != 0 {
		return 0, fmt.Errorf("%q is not a whole number of tokens", s)
	}
	whole.Div(whole, big.NewInt(1_000_000))
	if !whole.IsInt64() {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return Tokens(whole.Int64()), nil
}

// String renders the count compactly: 2M, 1.5M, 800k, 950.
func (t Tokens) String() string {
	switch {
	case t >= 1_000_000 && t%10_000 == 0:
		return trimZeros(strconv.FormatFloat(float64(t)/1e6, 'f', 2, 64)) + "M"
	case t >= 1_000 && t%10 == 0:
		return trimZeros(strconv.FormatFloat(float64(t)/1e3, 'f', 2, 64)) + "k"
	}
	return strconv.FormatInt(int64(t), 10)
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// USD is an amount of US dollars in millionths, so that money is exact.
type USD int64

// ParseUSD reads a dollar amount such as "40", "12.50" or "$3.125". At most six
// decimal places are accepted; the amount may not be negative.
func ParseUSD(s string) (USD, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "$")
	v, err := parseDecimal(t, 6)
	if errors.Is(err, errTooLarge) {
		return 0, fmt.Errorf("%q is too large for a dollar amount", s)
	}
	if err != nil || t == "" {
		return 0, fmt.Errorf("%q is not a dollar amount: write a number like 40 or 12.50", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("a dollar amount cannot be negative (%q)", s)
	}
	return USD(v), nil
}

// USDFromFloat converts a big.Float (as HCL numbers are) to USD exactly: the
// shortest decimal that represents the number is read, so 0.1 is ten cents.
func USDFromFloat(f *big.Float) (USD, error) {
	return ParseUSD(f.Text('f', -1))
}

// String renders the amount with cents, and more digits only when needed.
func (u USD) String() string {
	whole, frac := int64(u)/1_000_000, int64(u)%1_000_000
	s := fmt.Sprintf("$%d.%06d", whole, frac)
	for strings.HasSuffix(s, "0") && len(s) > strings.Index(s, ".")+3 {
		s = s[:len(s)-1]
	}
	return s
}

// parseDecimal parses a plain decimal number into an integer scaled by
// 10^places, refusing more fractional digits than places.
// errTooLarge is parseDecimal's error for a number whose units (s times
// 10^places) do not fit an int64.
var errTooLarge = errors.New("too large")

func parseDecimal(s string, places int) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, fracPart, _ := strings.Cut(s, ".")
	if intPart == "" && fracPart == "" {
		return 0, fmt.Errorf("empty number")
	}
	for _, part := range []string{intPart, fracPart} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return 0, fmt.Errorf("not a decimal number")
			}
		}
	}
	fracPart = strings.TrimRight(fracPart, "0")
	if len(fracPart) > places {
		return 0, fmt.Errorf("more than %d decimal places", places)
	}
	fracPart += strings.Repeat("0", places-len(fracPart))
	digits := strings.TrimLeft(intPart+fracPart, "0")
	if digits == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, errTooLarge
	}
	if neg {
		v = -v
	}
	return v, nil
}

// ParseDuration reads a duration such as "45m", "3h", "1h30m" or "90s". A
// bare number is refused: the unit must be written. Days ("2d") are accepted
// as 24 hours each.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	var days time.Duration
	if d, rest, ok := strings.Cut(t, "d"); ok && d != "" {
		n, err := strconv.Atoi(d)
		if err == nil && n >= 0 && n < 10000 {
			days, t = time.Duration(n)*24*time.Hour, rest
		}
	}
	if t == "" && days > 0 {
		return days, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write a number with a unit, like \"45m\", \"3h\" or \"1h30m\"", s)
	}
	if d < 0 || days+d < 0 || d > math.MaxInt64-days {
		return 0, fmt.Errorf("a duration cannot be negative (%q)", s)
	}
	return days + d, nil
}

// FormatDuration renders a duration compactly: 45m, 3h, 1h30m, 20s.
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	d = d.Round(time.Second)
	h, m, s := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s > 0 && h == 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}
