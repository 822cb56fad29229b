# The quickstart wave: command lots only, so it runs on any machine without
# an agent or an API key. setup.sh creates the throwaway git repository
# repos/app (again from scratch each time it runs) that the lots work in.
# Each command is replay-safe: it commits only when it changed something
# (git diff --cached --quiet || git commit), so apply -replace of a done lot
# ends done, "no change".
#
#   sh examples/quickstart/setup.sh
#   go run ./cmd/cadence plan examples/quickstart/wave.hcl

wave "quickstart" {
  max_sessions = 1 # agent sessions at once (this wave has none)
}

repo "app" {
  path     = "repos/app"
  base     = "main"
  test     = "sh test.sh" # the test gate, run before each lot is integrated
  parallel = 2            # lots of this repo at once, each in its own worktree
}

lot "scaffold" {
  repo     = repo.app
  title    = "Project skeleton"
  run      = "mkdir -p src && echo 'hello' > src/greeting.txt && git add src && { git diff --cached --quiet || git commit -qm 'scaffold: add src (scaffold)'; }"
  estimate = "10s"
}

lot "greeting" {
  repo       = repo.app
  title      = "A friendlier greeting"
  run        = "echo 'hello, world' > src/greeting.txt && git add src && { git diff --cached --quiet || git commit -qm 'greeting: say hello to the world (greeting)'; }"
  depends_on = [lot.scaffold]
  estimate   = "10s"
}

lot "farewell" {
  repo       = repo.app
  title      = "A farewell"
  run        = "echo 'goodbye' > src/farewell.txt && git add src && { git diff --cached --quiet || git commit -qm 'farewell: add a farewell (farewell)'; }"
  depends_on = [lot.scaffold]
  estimate   = "10s"
}

lot "notes" {
  repo       = repo.app
  title      = "Release notes"
  run        = "ls src > NOTES.txt && git add NOTES.txt && { git diff --cached --quiet || git commit -qm 'notes: list the files (notes)'; }"
  depends_on = [lot.greeting, lot.farewell]
  estimate   = "5s"
}
