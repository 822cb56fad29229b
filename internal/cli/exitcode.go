package cli

// ExitCode is the status a cadence command exits with. What each code
// means, per command, is the exit-code table of docs/commands.md (Exit
// codes); TestDocsExitCodes checks that table against these constants.
// Several names share a value: a code means what its command says it
// means, and a name says which command and meaning it stands for.
type ExitCode int

// Exit codes of every command.
const (
	// ExitOK: the command did what was asked.
	ExitOK ExitCode = 0
	// ExitError: the command failed (an invalid file, an unreadable
	// state, a lot drop refused, nothing to stop).
	ExitError ExitCode = 1
	// ExitUsage: a usage error of any command (an unknown command or
	// flag, a bad flag value, a missing or extra argument, a -chdir
	// folder that cannot be entered): refused before acting. plan with
	// -detailed-exitcode gives ExitError instead (planUsageExit).
	ExitUsage ExitCode = 2
)

// Exit codes of plan -detailed-exitcode, as Terraform's (0 is ExitOK:
// every lot done; 1 is ExitError, usage errors included).
const (
	// ExitPending: apply would work on some lot.
	ExitPending ExitCode = 2
	// ExitNeedsLead: no work pending, but some lot is not done: handed
	// back, failed, refused, waiting for an answer, or blocked by one.
	ExitNeedsLead ExitCode = 3
)

// Exit codes of apply (0 is ExitOK: every lot of the plan is done).
const (
	// ExitApplyNeedsLead: some lot is not done and needs the lead (the
	// wave is needs-lead), an incident stopped the wave, or cadence stop
	// stopped it.
	ExitApplyNeedsLead ExitCode = 1
	// ExitApplyRefused: refused before acting (a usage error, an invalid
	// file, a failed preflight, a refusing warning, a stale saved plan, a
	// held lock, no terminal to confirm on, a nested wave).
	ExitApplyRefused ExitCode = 2
	// ExitApplySuspended: suspended (budget spent, usage limit, API
	// failure); an apply resumes it.
	ExitApplySuspended ExitCode = 3
	// ExitApplyInterrupted: interrupted (SIGINT, SIGTERM or SIGHUP) or stopped by
	// the machine (a failed write, too little free space); an apply
	// resumes it. 128 + SIGINT, as shells report an interrupted command.
	ExitApplyInterrupted ExitCode = 130
)

// goOn is no exit code: a helper that may end a command returns it when
// the command goes on.
const goOn ExitCode = -1
