# A wave for the renderer tests: with the hand-made state of
# actionsState (render_test.go) and a fake machine, its plan has every action
# and every kind of warning but "offline".

wave "actions" {
  budget       = "1M"
  budget_usd   = 25.5
  max_sessions = 3
}

agent "codex" {
  command = "codex"
}

defaults {
  model        = "sonnet"
  review_model = "opus"
  fix_passes   = 2
}

repo "api" {
  path     = "repos/api"
  test     = "go test ./..."
  parallel = 2
}

repo "web" {
  path = "repos/web"
}

lot "base" {
  repo     = repo.api
  title    = "Token store"
  brief    = "Add a token store."
  budget   = "300k"
  estimate = "2h"
}

lot "resumer" {
  repo       = repo.api
  title      = "Refresh tokens"
  brief      = "Add refresh tokens to internal/auth/store.go."
  depends_on = [lot.base]
  budget     = "400k"
  estimate   = "3h"
}

lot "asker" {
  repo  = repo.web
  title = "Login page | <form> & redirect"
  brief = "Build the login page."
}

lot "held" {
  repo     = repo.api
  title    = "Audit log"
  brief    = "Add an audit log."
  budget   = "200k"
  estimate = "1h"
}

lot "after" {
  repo       = repo.api
  title      = "Audit dashboard"
  brief      = "Show the audit log."
  depends_on = [lot.held]
}

lot "later" {
  title      = "Publish the audit docs"
  run        = "make audit-docs"
  depends_on = [lot.after]
}

lot "again" {
  repo     = repo.web
  title    = "Styles"
  brief    = "Restyle the site."
  budget   = "100k"
  estimate = "30m"
}

lot "fresh" {
  repo           = repo.api
  title          = "Session store"
  brief          = "Move sessions next to tokens in internal/auth/store.go."
  model          = "opus"
  fallback_model = "sonnet"
  also           = [repo.web]
  precheck       = true
  depends_on     = [lot.base]
  budget         = "250k"
  estimate       = "90m"
}

lot "v2.api-docs" {
  repo   = repo.api
  title  = "v2.api-docs"
  agent  = agent.codex
  brief  = "Document the v2 API."
  budget = "50k"
}

lot "gen" {
  repo       = repo.api
  title      = "Regenerate"
  run        = "make gen"
  depends_on = [lot.resumer, lot.fresh]
}
