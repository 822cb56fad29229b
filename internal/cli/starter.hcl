# A cadence wave: lots of work for coding agents (a brief) or plain commands
# (run), with dependencies, models and a token budget.
#   cadence validate   check this file
#   cadence plan       preview what apply would do
#   cadence apply      do it (each lot in its own git worktree)
# Commit this file; cadence keeps this machine's state beside it
# (wave.state.json and its .journal and .lock, .cadence/), which init's
# .gitignore lines keep out of git.

wave "my-wave" {
  budget       = "2M"      # counted tokens: input + cache writes + output ("1.5M", "800k", 1500000)
  max_sessions = 2         # agent sessions at once, all cadence processes on this machine together
  on_quota     = "suspend" # on a usage limit: "suspend" (exit 3, resume later) or "wait"
  # budget_usd = 40        # optional second ceiling, from the cost each session reports
}

defaults {                # every lot's settings unless the lot says otherwise
  model        = "sonnet" # write steps (implement, fix)
  review_model = "opus"   # read-only steps (precheck, review)
  fix_passes   = 2        # fix sessions after a review that is not conform
  timeout      = "45m"    # per write step; review steps: review_timeout
}

repo "app" {
  path = "."    # relative to this file
  base = "main" # lots start from this branch and are integrated into it
  test = ""     # the test gate, e.g. "go test ./..." (plan suggests one)
  # parallel  = 2          # lots of this repo at once, one worktree each
  # changelog = "CHANGELOG.md"
}

lot "first" {
  repo  = repo.app
  title = "Describe the first piece of work"
  brief = <<-EOT
    Tell the agent what to build, where, and how to know it is done.
    Cite the lot id (first) in every commit message.
  EOT
  # budget   = "400k"      # this lot's ceiling
  # estimate = "1h"        # for ordering by critical path and the plan's estimate
}

lot "second" {
  repo       = repo.app
  title      = "A plain command after the first lot"
  run        = "echo 'replace me' && true"
  depends_on = [lot.first]
}
