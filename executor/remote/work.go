// Package remote is the step runner of remote steps (docs/remote.md): the
// coordinator's step.Runner, which sends the wave's agent sessions and test
// gates to workers through a queue (executor/remote/queue) with the lot's
// repositories as bundles (executor/remote/transport), and keeps every
// other part of the step seam on the lead's machine; and the worker's
// handler, which runs a job with the local step runner.
package remote

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Work is a job's request (queue.Job.Request, JSON): the step request with
// every path of the lead's machine taken out, and the lot's repositories
// as the bundles that carry them.
type Work struct {
	// Request is the step request; its Dir, Log, Writable and each
	// repository's Worktree are empty (the worker's own), Env holds only
	// the wave's variables for the lot (never the lead's environment: no
	// API key), Command and Brief are the lot's.
	Request step.Request `json:"request"`
	// DirRepo names the repository whose worktree the step runs in
	// (Request.Dir on the lead).
	DirRepo string `json:"dir_repo"`
	// EnvLeftOut names the lot's env variables whose values are secret
	// (spec.Env.Secret): Request.Env leaves them out, and the step has
	// the worker's own environment's value of each, if any.
	EnvLeftOut []string `json:"env_left_out,omitempty"`
	// Repos are the lot's repositories, own first, in Request.Repos order.
	Repos []WorkRepo `json:"repos"`
	// AgentKind is the kind of the step's agent (spec.Agent.Kind; ""
	// for a command); Command says the lot is a command lot.
	AgentKind string `json:"agent_kind,omitempty"`
	Command   bool   `json:"command,omitempty"`
	// Agent is the step's agent block (nil: the built-in agent, or a
	// lead that did not send it: the worker's defaults of AgentKind).
	Agent *WorkAgent `json:"agent,omitempty"`
}

// WorkRepo is one repository of a job: the names of its base bundle and
// lot bundle in the queue's bundle store, the lot's branch head that was
// sent (the head a result must descend from), and the stem of the names
// the workers' result bundles of it are stored under (ResultName).
type WorkRepo struct {
	Name   string `json:"name"`
	Base   string `json:"base"`
	Lot    string `json:"lot"`
	Head   string `json:"head"`
	Result string `json:"result"`
}

// Classes of steps that may leave the machine (spec.RemoteSessions,
// spec.RemoteTests), as the step-kind table classes a kind: a session is
// a kind that runs an agent; a test gate is state.StepTest. A UX review
// (a Browser kind) stays on the lead's machine: its application, its
// browser and its screenshots (under the lot's log folder) are there.
func classOf(kind state.StepKind) string {
	if info, ok := state.Info(kind); ok && info.Runs == state.RunsAgent && !info.Browser {
		return spec.RemoteSessions
	}
	if kind == state.StepTest {
		return spec.RemoteTests
	}
	return ""
}

// Remote says whether a step of kind runs on a worker under x.
func Remote(x *spec.Executor, kind state.StepKind) bool {
	c := classOf(kind)
	return c != "" && x.Remotes(c)
}

var keyUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// keyToken makes s one token of a run key (queue.ValidRunKey): any
// character but letters, digits, '-' and '_' becomes '='.
func keyToken(s string) string {
	if s == "" {
		return "_"
	}
	return keyUnsafe.ReplaceAllString(s, "=")
}

// RunKey names one run of one step: the wave, its id, the lot, the kind,
// the pass and the lot's head it starts from (so that a new apply of the
// same step on the same commits finds the run a dead coordinator left,
// and a step after new commits is a new run).
func RunKey(req step.Request, head string) string {
	if len(head) > 12 {
		head = head[:12]
	}
	return strings.Join([]string{keyToken(req.Wave), keyToken(req.WaveID), keyToken(req.ID), keyToken(string(req.Kind)),
		strconv.Itoa(req.Pass), keyToken(head)}, ".")
}

// wireRequest is req as a job carries it: no path of the lead's machine,
// and of the environment only the variables the wave sets for the lot
// (lotEnv.Vars) whose values are not secret (lotEnv.Secret): those are
// left out, named in leftOut, sorted.
func wireRequest(req step.Request, lotEnv spec.Env) (out step.Request, dirRepo string, leftOut []string) {
	out = req
	out.Repos = make([]step.Repo, len(req.Repos))
	for i, r := range req.Repos {
		if req.Dir != "" && r.Worktree == req.Dir {
			dirRepo = r.Name
		}
		out.Repos[i] = step.Repo{Name: r.Name, Start: r.Start}
	}
	out.Dir, out.Log, out.Writable = "", "", nil
	out.Env = nil
	for _, kv := range req.Env {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := lotEnv.Vars[name]; !ok {
			continue
		}
		if lotEnv.Secret[name] {
			leftOut = append(leftOut, name)
			continue
		}
		out.Env = append(out.Env, kv)
	}
	sort.Strings(leftOut)
	return out, dirRepo, leftOut
}

// ResultName is the name of the result bundle of wr that delivery
// (queue.Result.Delivery) stores: one per delivery, so that the bundle
// the lead takes is the one of the delivery whose result it reads, never
// a late upload of a fenced one.
func ResultName(wr WorkRepo, delivery uint64) string {
	return wr.Result + ".d" + strconv.FormatUint(delivery, 10)
}

// RunMark is the wave id (agent.WaveMark) of a run's processes on its
// worker: the run's own, never the lead's wave id.
func RunMark(runKey string) string { return "remote." + runKey }
