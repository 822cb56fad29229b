//go:build !linux

package proc

// TidyStepCgroups removes the step cgroups supervisors left; off Linux
// there are none.
func TidyStepCgroups(marks []string, dry bool) (removed, kept []string) { return nil, nil }

// LeftStepCgroups lists the step cgroups supervisors left; off Linux
// there are none.
func LeftStepCgroups() []string { return nil }
