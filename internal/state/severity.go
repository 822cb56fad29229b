package state

// Severity is how much a review finding weighs (docs/agents.md,
// "Briefs and reports" and "The life cycle"). The JSON of reports and of the state file keeps the plain
// strings "blocking", "major" and "minor".
type Severity string

// Finding severities.
const (
	// SeverityBlocking: the lot must not be integrated as it is (a red test
	// gate and an integration conflict are recorded as blocking findings).
	SeverityBlocking Severity = "blocking"
	// SeverityMajor: a real defect; like blocking, it makes a review not
	// conform.
	SeverityMajor Severity = "major"
	// SeverityMinor: worth a pass (the minor pass), not worth holding the
	// lot back.
	SeverityMinor Severity = "minor"
)

// Valid reports whether s is one of the three severities.
func (s Severity) Valid() bool {
	return s == SeverityBlocking || s == SeverityMajor || s == SeverityMinor
}

// Blocks reports whether a finding of this severity makes a review not
// conform: blocking and major do, minor does not (docs/agents.md, "The
// life cycle").
func (s Severity) Blocks() bool { return s == SeverityBlocking || s == SeverityMajor }

// Conform is a review's verdict over its findings: no blocking and no major
// finding (docs/agents.md, "The life cycle"). No findings at all is conform.
func Conform(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity.Blocks() {
			return false
		}
	}
	return true
}

// HasMinor reports whether any finding is minor: a conform review with one
// earns the lot its pass on minor findings (docs/agents.md, "The life
// cycle").
func HasMinor(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityMinor {
			return true
		}
	}
	return false
}
