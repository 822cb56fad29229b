package cli

import "testing"

func TestCostText(t *testing.T) {
	for _, tc := range []struct {
		micros int64
		est    bool
		want   string
	}{
		{1600, false, "$0.0016"},
		{1600, true, "~$0.0016 (estimated)"},
		{0, false, "$0.00"},
		{12_345_000, true, "~$12.345 (estimated)"},
	} {
		if got := costText(tc.micros, tc.est); got != tc.want {
			t.Errorf("costText(%d, %v) = %q, want %q", tc.micros, tc.est, got, tc.want)
		}
	}
}
