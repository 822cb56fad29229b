package planner

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/spec"
)

// GenerateWave writes a wave of n lots over five repos, each lot depending on
// up to three random earlier lots (fixed seed), a quarter of them command
// lots. Benchmarks and the renderers' size tests use it.
func GenerateWave(n int) []byte {
	r := rand.New(rand.NewSource(1))
	var b strings.Builder
	b.WriteString("wave \"big\" {\n  budget = \"500M\"\n  max_sessions = 4\n}\n")
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&b, "repo \"r%d\" {\n  path = \"repos/r%d\"\n  test = \"make test\"\n  parallel = 3\n}\n", i, i)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "lot \"L%d\" {\n  repo = repo.r%d\n  title = \"Lot number %d | with <markup> & a long title to render\"\n", i, r.Intn(5), i)
		if i%4 == 3 {
			fmt.Fprintf(&b, "  run = \"make step-%d\"\n", i)
		} else {
			fmt.Fprintf(&b, "  brief = \"Implement part %d of the feature in pkg/p%d/file.go.\"\n  budget = \"40k\"\n  estimate = \"%dm\"\n", i, i%50, 10+r.Intn(120))
		}
		if i > 0 {
			seen := map[int]bool{}
			var deps []string
			for k := r.Intn(4); k > 0; k-- {
				d := r.Intn(i)
				if !seen[d] {
					seen[d] = true
					deps = append(deps, fmt.Sprintf("lot.L%d", d))
				}
			}
			if len(deps) > 0 {
				fmt.Fprintf(&b, "  depends_on = [%s]\n", strings.Join(deps, ", "))
			}
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

func benchValidatePlan(b *testing.B, n int) {
	src := GenerateWave(n)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cfg, diags := spec.NewLoader().LoadBytes(src, "/bench/wave.hcl", spec.Options{})
		if diags.HasErrors() {
			b.Fatal(diags.Error())
		}
		if _, diags := Build(Input{Config: cfg, Options: Options{Jobs: 2}}); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
	}
}

// BenchmarkValidatePlan1k and 10k measure validate + plan (offline) of a
// generated wave; the target is under 250 ms for 10,000 lots and linear growth.
func BenchmarkValidatePlan1k(b *testing.B)  { benchValidatePlan(b, 1000) }
func BenchmarkValidatePlan10k(b *testing.B) { benchValidatePlan(b, 10000) }
