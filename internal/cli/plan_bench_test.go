package cli

import (
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layeredWave is bench/gen.py's layered wave of n command lots: layers of
// ⌈√n⌉ lots, each lot after the first layer depending on 2 distinct random
// lots of the previous layer (its own fixed seed; gen.py's draws differ,
// the shape and size are the same).
func layeredWave(n int) []byte {
	r := rand.New(rand.NewSource(42))
	w := int(math.Ceil(math.Sqrt(float64(n))))
	var b strings.Builder
	b.WriteString("wave \"bench\" {}\n")
	for i := 0; i < n; i++ {
		b.WriteString("lot \"L" + strconv.Itoa(i) + "\" {\n  run = \"true\"\n")
		if layer := i / w; layer > 0 {
			start := (layer - 1) * w
			a, c := start+r.Intn(w), start+r.Intn(w-1)
			if c >= a {
				c++
			}
			d := []int{a, c}
			sort.Ints(d)
			b.WriteString("  depends_on = [lot.L" + strconv.Itoa(d[0]) + ", lot.L" + strconv.Itoa(d[1]) + "]\n")
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

// benchCommand runs cadence's command run (runPlan, runValidate) with args
// and the wave file last, on a layered wave of n lots, b.N times; it fails
// on any exit but ExitOK.
func benchCommand(b *testing.B, n int, run func(*env, []string) ExitCode, args ...string) {
	dir := b.TempDir()
	file := filepath.Join(dir, "wave.hcl")
	src := layeredWave(n)
	if err := os.WriteFile(file, src, 0o600); err != nil {
		b.Fatal(err)
	}
	e, _, stderr := testEnv(map[string]string{"CADENCE_HOME": filepath.Join(dir, "home")}, false)
	e.stdout = io.Discard
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := run(e, append(args, file)); code != ExitOK {
			b.Fatalf("exit %d:\n%s", code, stderr)
		}
	}
}

// BenchmarkPlan10k and BenchmarkValidate10k measure `cadence plan -offline`
// and `cadence validate` of bench/gen.py's layered wave of 10,000 lots, as
// the commands run them (read, parse, decode, plan, render); the 1k and
// 50k ones show the growth. The target is under 150 ms each, linear
// (bench/README.md, Planner).
func BenchmarkPlan1k(b *testing.B)      { benchCommand(b, 1000, runPlan, "-offline") }
func BenchmarkPlan10k(b *testing.B)     { benchCommand(b, 10000, runPlan, "-offline") }
func BenchmarkPlan50k(b *testing.B)     { benchCommand(b, 50000, runPlan, "-offline") }
func BenchmarkValidate1k(b *testing.B)  { benchCommand(b, 1000, runValidate) }
func BenchmarkValidate10k(b *testing.B) { benchCommand(b, 10000, runValidate) }
func BenchmarkValidate50k(b *testing.B) { benchCommand(b, 50000, runValidate) }
