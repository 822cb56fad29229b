package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The cgroup controllers behind Limits.Memory and Limits.Processes.
const (
	ctrlMemory = "memory"
	ctrlPids   = "pids"
)

// cgroupMount is a mounted cgroup hierarchy, as /proc/self/mountinfo
// shows it.
type cgroupMount struct {
	v2 bool
	// point is where it is mounted; root the hierarchy's folder it shows.
	point, root string
	// controllers are those bound to a v1 hierarchy (its super options).
	controllers []string
}

// cgroupMounts lists the cgroup hierarchies mounted in this process's
// mount namespace.
func cgroupMounts() []cgroupMount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []cgroupMount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root point options [optional…] - fstype source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 3 {
			continue
		}
		switch b[0] {
		case "cgroup2":
			out = append(out, cgroupMount{v2: true, point: a[4], root: a[3]})
		case "cgroup":
			out = append(out, cgroupMount{point: a[4], root: a[3], controllers: strings.Split(b[2], ",")})
		}
	}
	return out
}

// selfCgroups maps each v1 controller to this process's cgroup path in its
// hierarchy, and "" to its cgroup v2 path (/proc/self/cgroup).
func selfCgroups() map[string]string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// cgroupPlace is where a controller's step cgroups go: under parent, the
// folder of this process's own cgroup in the hierarchy that holds the
// controller; self is that cgroup's path as /proc/<pid>/cgroup shows it.
type cgroupPlace struct {
	mech         Mechanism
	parent, self string
}

// locate finds the hierarchy that holds ctrl, cgroup v2 first; why says
// why there is none.
func locate(ctrl string) (place cgroupPlace, why string) {
	mounts, self := cgroupMounts(), selfCgroups()
	under := func(m cgroupMount, path string) (string, bool) {
		rel, err := filepath.Rel(m.root, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			return "", false
		}
		return filepath.Join(m.point, rel), true
	}
	for _, m := range mounts {
		path, ok := self[""]
		if !m.v2 || !ok {
			continue
		}
		dir, ok := under(m, path)
		if !ok {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers")); err == nil && slices.Contains(strings.Fields(string(b)), ctrl) {
			return cgroupPlace{MechanismCgroup2, dir, path}, ""
		}
	}
	for _, m := range mounts {
		path, ok := self[ctrl]
		if m.v2 || !ok || !slices.Contains(m.controllers, ctrl) {
			continue
		}
		if dir, ok := under(m, path); ok {
			return cgroupPlace{MechanismCgroup1, dir, path}, ""
		}
	}
	return cgroupPlace{}, "no cgroup hierarchy here offers the " + ctrl + " controller"
}

// enable makes ctrl available to the children of the v2 cgroup dir
// (cgroup.subtree_control). It fails where dir holds processes and is not
// the root (cgroup v2's no-internal-process rule) or is not delegated.
func enable(dir, ctrl string) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err == nil && slices.Contains(strings.Fields(string(b)), ctrl) {
		return nil
	}
	return writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+"+ctrl)
}

func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// cgroupEnforcement says how ctrl is enforced here: it makes a probe
// cgroup where steps' cgroups would go, and removes it.
func cgroupEnforcement(ctrl string) (Mechanism, string) {
	place, why := locate(ctrl)
	if place.mech == MechanismNone {
		return MechanismNone, why
	}
	if place.mech == MechanismCgroup2 {
		if err := enable(place.parent, ctrl); err != nil {
			return MechanismNone, fmt.Sprintf("cadence may not enable the %s controller below its cgroup %s: %v", ctrl, place.parent, errors.Unwrap(err))
		}
	}
	probe := filepath.Join(place.parent, "cadence-probe-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return MechanismNone, fmt.Sprintf("cadence may not make a cgroup in %s: %v", place.parent, errors.Unwrap(err))
	}
	_ = os.Remove(probe)
	return place.mech, ""
}

// stepCgroup is the cgroup (v2) or cgroups (v1, one per hierarchy) a
// supervisor makes for its step, named after the supervisor's pid.
type stepCgroup struct {
	// v2 is the step's v2 cgroup ("" for none) and v2fd its open folder,
	// for CLONE_INTO_CGROUP.
	v2   string
	v2fd int
	// v1 maps a controller to the step's v1 cgroup; back to the cgroup
	// the supervisor came from in that hierarchy.
	v1, back map[string]string
	// memDir and pidsDir hold the memory and pids controllers' files.
	memDir, pidsDir string
	// paths maps each hierarchy that enforces a limit to the step's
	// cgroup path in it, as /proc/<pid>/cgroup shows it: "" for v2, a
	// controller for v1 (see escaped).
	paths map[string]string
	// left is set once a process of the step was found outside its
	// cgroup (escaped).
	left bool
}

// makeStepCgroup makes the cgroups that enforce l's memory and processes
// and writes the limits. It returns nil when l sets neither; warnings
// name the limits it could not enforce, and why.
func makeStepCgroup(l Limits) (c *stepCgroup, warnings []string) {
	var ctrls []string
	if l.Memory > 0 {
		ctrls = append(ctrls, ctrlMemory)
	}
	if l.Processes > 0 {
		ctrls = append(ctrls, ctrlPids)
	}
	if len(ctrls) == 0 {
		return nil, nil
	}
	c = &stepCgroup{v2fd: -1, v1: map[string]string{}, back: map[string]string{}, paths: map[string]string{}}
	name := stepCgroupPrefix + strconv.Itoa(os.Getpid())
	for _, ctrl := range ctrls {
		dir, err := c.place(ctrl, name)
		if err == nil {
			err = writeLimit(dir, ctrl, l)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s not enforced: %v", map[string]Limit{ctrlMemory: LimitMemory, ctrlPids: LimitProcesses}[ctrl], err))
			continue
		}
		if ctrl == ctrlMemory {
			c.memDir = dir
		} else {
			c.pidsDir = dir
		}
	}
	if c.v2 != "" {
		fd, err := syscall.Open(c.v2, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("cgroup %s not entered: %v", c.v2, err))
			if c.memDir == c.v2 {
				c.memDir = ""
			}
			if c.pidsDir == c.v2 {
				c.pidsDir = ""
			}
		} else {
			c.v2fd = fd
		}
	}
	// Only the cgroups that enforce a limit are watched (escaped).
	for k := range c.paths {
		dir := c.v2
		if k != "" {
			dir = c.v1[k]
		}
		if dir == "" || (dir != c.memDir && dir != c.pidsDir) {
			delete(c.paths, k)
		}
	}
	return c, warnings
}

// place makes (or finds, for a second v2 controller) the step's cgroup
// for ctrl and returns its folder.
func (c *stepCgroup) place(ctrl, name string) (string, error) {
	place, why := locate(ctrl)
	switch place.mech {
	case MechanismNone:
		return "", errors.New(why)
	case MechanismCgroup2:
		c.paths[""] = path.Join(place.self, name)
		dir := filepath.Join(place.parent, name)
		if c.v2 != "" && c.v2 != dir {
			return "", fmt.Errorf("the %s controller is in another cgroup v2 tree", ctrl)
		}
		if err := enable(place.parent, ctrl); err != nil {
			return "", err
		}
		if c.v2 == "" {
			if err := os.Mkdir(dir, 0o755); err != nil {
				return "", err
			}
			c.v2 = dir
		}
		return dir, nil
	}
	dir := filepath.Join(place.parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	c.v1[ctrl], c.back[ctrl] = dir, place.parent
	c.paths[ctrl] = path.Join(place.self, name)
	return dir, nil
}

// writeLimit writes l's limit for ctrl in the cgroup dir. Memory allows
// no swap beyond the limit, and a v2 cgroup's OOM kill ends the whole
// tree (memory.oom.group), where the kernel has these files.
func writeLimit(dir, ctrl string, l Limits) error {
	if ctrl == ctrlPids {
		return writeFile(filepath.Join(dir, "pids.max"), strconv.Itoa(l.Processes))
	}
	n := strconv.FormatInt(l.Memory, 10)
	if _, err := os.Stat(filepath.Join(dir, "memory.max")); err == nil {
		if err := writeFile(filepath.Join(dir, "memory.max"), n); err != nil {
			return err
		}
		_ = writeFile(filepath.Join(dir, "memory.swap.max"), "0")
		_ = writeFile(filepath.Join(dir, "memory.oom.group"), "1")
		return nil
	}
	if err := writeFile(filepath.Join(dir, "memory.limit_in_bytes"), n); err != nil {
		return err
	}
	_ = writeFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), n)
	return nil
}

// enter moves the supervisor into the step's v1 cgroups, so that the step
// it forks starts there (v2 needs no move: CLONE_INTO_CGROUP).
func (c *stepCgroup) enter() error {
	if c == nil {
		return nil
	}
	for _, dir := range c.v1 {
		if err := writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
			return fmt.Errorf("enter cgroup %s: %w", dir, err)
		}
	}
	return nil
}

// leave moves the supervisor back where it came from once the step is
// forked: the step's cgroups then hold the step's tree only.
func (c *stepCgroup) leave() {
	if c == nil {
		return
	}
	for _, dir := range c.back {
		_ = writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(os.Getpid()))
	}
}

// hit names the limit the step's tree reached, if any: a process found
// outside the step's cgroup (escaped), an OOM kill in the memory cgroup,
// a fork refused at pids.max.
func (c *stepCgroup) hit() Limit {
	if c == nil {
		return ""
	}
	if c.left {
		return LimitLeftCgroup
	}
	if c.memDir != "" {
		file := "memory.events"
		if _, ok := c.v1[ctrlMemory]; ok {
			file = "memory.oom_control"
		}
		if counter(filepath.Join(c.memDir, file), "oom_kill") > 0 {
			return LimitMemory
		}
	}
	if c.pidsDir != "" && counter(filepath.Join(c.pidsDir, "pids.events"), "max") > 0 {
		return LimitProcesses
	}
	return ""
}

// counter reads the value of key in a flat-keyed cgroup file ("key N"
// lines); 0 when it cannot.
func counter(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove removes the step's cgroups once its tree is gone (a cgroup whose
// last task is still exiting is busy for a moment: it tries for a second).
func (c *stepCgroup) remove() {
	if c == nil {
		return
	}
	if c.v2fd >= 0 {
		_ = syscall.Close(c.v2fd)
	}
	dirs := []string{c.v2}
	for _, d := range c.v1 {
		dirs = append(dirs, d)
	}
	deadline := time.Now().Add(time.Second)
	for _, d := range dirs {
		for d != "" {
			err := syscall.Rmdir(d)
			if err == nil || err == syscall.ENOENT || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
