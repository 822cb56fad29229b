package diskspace

import (
	"fmt"
	"strings"
)

// DefaultWarn and DefaultFloor are the free space below which a plan or an
// apply warns, and refuses (docs/running.md, "Free-space preflight").
const (
	DefaultWarn  = 2 << 30   // 2 GiB
	DefaultFloor = 256 << 20 // 256 MiB
)

// Place is a folder cadence writes in, named for messages ("the wave's
// folder", "CADENCE_HOME", "the worktrees folder").
type Place struct {
	Name, Path string
}

// Low is a file system with less free space than a threshold: the places
// on it, its mount point and its free space in bytes.
type Low struct {
	Names []string
	Mount string
	Free  uint64
}

func (l Low) String() string {
	return fmt.Sprintf("%s free on %s (%s)", Bytes(l.Free), l.Mount, strings.Join(l.Names, ", "))
}

// Check measures each place's file system once and returns those below
// warn (and at or above floor) in warns and those below floor in refused,
// in the order of places. A threshold of 0 checks nothing. A place that
// cannot be measured is skipped: the write that needs it says why.
func Check(places []Place, warn, floor uint64) (warns, refused []Low) {
	byMount := map[string]*Low{}
	var order []string
	for _, p := range places {
		free, mount, err := Free(p.Path)
		if err != nil {
			continue
		}
		if l := byMount[mount]; l != nil {
			l.Names = append(l.Names, p.Name)
			continue
		}
		byMount[mount] = &Low{Names: []string{p.Name}, Mount: mount, Free: free}
		order = append(order, mount)
	}
	for _, m := range order {
		l := *byMount[m]
		switch {
		case floor > 0 && l.Free < floor:
			refused = append(refused, l)
		case warn > 0 && l.Free < warn:
			warns = append(warns, l)
		}
	}
	return warns, refused
}
