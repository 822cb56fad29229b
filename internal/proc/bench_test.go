package proc

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkRun measures what the supervisor costs a short step (a git
// call): one extra exec of the (test) binary per step.
func BenchmarkRun(b *testing.B) {
	git, err := exec.LookPath("git")
	if err != nil {
		b.Skip("no git")
	}
	run := func(b *testing.B) {
		for b.Loop() {
			if _, err := run(context.Background(), Cmd{Path: git, Args: []string{"--version"}, Dir: b.TempDir()}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", run)
	b.Run("supervised", func(b *testing.B) {
		if !supervisable {
			b.Skip("no supervisor")
		}
		useSupervisor(b)
		run(b)
	})
}
