package cli

import (
	"runtime/debug"
	"testing"
)

func TestBuildVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-30T12:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	tests := []struct {
		name string
		set  string
		bi   *debug.BuildInfo
		want buildVersion
		line string
	}{
		{"no build info", "", nil, buildVersion{Version: "dev"}, "dev"},
		{"ldflags wins", "v9.9.9", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, buildVersion{Version: "v9.9.9"}, "v9.9.9"},
		{"go install", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, buildVersion{Version: "v1.2.3"}, "v1.2.3"},
		{"checkout, dirty", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			buildVersion{Version: "dev", Revision: "0123456789abcdef0123456789abcdef01234567", RevisionTime: "2026-11-30T12:00:00Z", Dirty: true},
			"dev, revision 0123456789ab of 2026-11-30T12:00:00Z (modified: uncommitted changes)"},
		{"checkout, clean", "", &debug.BuildInfo{Settings: vcs[:2]},
			buildVersion{Version: "dev", Revision: "0123456789abcdef0123456789abcdef01234567"}, "dev, revision 0123456789ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildVersionOf(tt.set, tt.bi)
			if got != tt.want {
				t.Errorf("buildVersionOf = %+v, want %+v", got, tt.want)
			}
			if s := got.String(); s != tt.line {
				t.Errorf("String() = %q, want %q", s, tt.line)
			}
		})
	}
}
