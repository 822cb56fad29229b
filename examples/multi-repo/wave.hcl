# Agent lots over two repositories: an API and the web client that uses it.
# Lot "login" edits both (also = [repo.web]); the API runs two lots at once.
#
#   sh examples/multi-repo/setup.sh   # throwaway repos/api and repos/web
#   go run ./cmd/cadence plan examples/multi-repo/wave.hcl

variable "model" {
  type        = string
  default     = "sonnet"
  description = "Model of the write steps (implement, fix)."
}

locals {
  style = "Keep changes small, add tests, and cite the lot id in every commit message."
}

wave "auth-rework" {
  budget       = "2M"
  budget_usd   = 40
  max_sessions = 2
  on_quota     = "suspend"
}

defaults {
  model        = var.model
  review_model = "opus"
  fix_passes   = 2
  timeout      = "45m"
}

repo "api" {
  path      = "repos/api"
  base      = "main"
  test      = "go test ./..."
  parallel  = 2
  changelog = "CHANGELOG.md"
}

repo "web" {
  path = "repos/web"
  test = "npm test"
}

lot "tokens" {
  repo     = repo.api
  title    = "Token store"
  brief    = templatefile("briefs/tokens.md", { style = local.style })
  budget   = "300k"
  estimate = "2h"
}

lot "audit" {
  repo     = repo.api
  title    = "Audit log of logins"
  brief    = "Add an append-only audit log of login attempts in internal/audit. ${local.style}"
  budget   = "200k"
  estimate = "1h"
}

lot "login" {
  repo       = repo.api
  title      = "OAuth login"
  brief      = file("briefs/login.md")
  model      = "opus"
  depends_on = [lot.tokens]
  also       = [repo.web]
  budget     = "400k"
  estimate   = "3h"
}

lot "docs" {
  repo       = repo.api
  title      = "Regenerate the API docs"
  run        = "mkdir -p docs && ls internal > docs/packages.txt && git add docs && git commit -qm 'docs: regenerate (docs)'"
  depends_on = [lot.login, lot.audit]
}
