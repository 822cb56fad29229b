package gitint

import "testing"

const ancestor = `# Changelog

## [Unreleased]

### Added
- first entry

## [1.0.0] - 2026-01-01
- released
`

func TestUnionChangelog(t *testing.T) {
	ours := `# Changelog

## [Unreleased]

### Added
- first entry
- ours: token store (L40)

## [1.0.0] - 2026-01-01
- released
`
	theirs := `# Changelog

## [Unreleased]

### Added
- first entry
- theirs: oauth (L41)

## [1.0.0] - 2026-01-01
- released
`
	got, ok := UnionChangelog(ancestor, ours, theirs)
	want := `# Changelog

## [Unreleased]

### Added
- first entry
- ours: token store (L40)
- theirs: oauth (L41)

## [1.0.0] - 2026-01-01
- released
`
	if !ok || got != want {
		t.Fatalf("ok=%v got:\n%s", ok, got)
	}
	// A later commit of the lot rewrites its own entry: ours' addition is
	// kept, theirs' rewrite applied.
	rewritten := `# Changelog

## [Unreleased]

### Added
- first entry
- theirs: OAuth login, with refresh (L41)

## [1.0.0] - 2026-01-01
- released
`
	got, ok = UnionChangelog(theirs, want, rewritten)
	if !ok || got != `# Changelog

## [Unreleased]

### Added
- first entry
- ours: token store (L40)
- theirs: OAuth login, with refresh (L41)

## [1.0.0] - 2026-01-01
- released
` {
		t.Fatalf("rewrite: ok=%v got:\n%s", ok, got)
	}
}

func TestUnionChangelogRefuses(t *testing.T) {
	outside := `# Changelog

## [Unreleased]

### Added
- first entry

## [1.0.0] - 2026-01-01
- released
- ours edits a release
`
	if _, ok := UnionChangelog(ancestor, outside, ancestor+"- theirs\n"); ok {
		t.Error("an addition outside [Unreleased] was merged")
	}
	removes := "# Changelog\n\n## [Unreleased]\n\n### Added\n\n## [1.0.0] - 2026-01-01\n- released\n"
	if _, ok := UnionChangelog(ancestor, removes, ancestor); ok {
		t.Error("ours removing a line was merged")
	}
	if _, ok := UnionChangelog("no sections\n", "no sections\nours\n", "no sections\ntheirs\n"); ok {
		t.Error("a changelog without [Unreleased] was merged")
	}
}
