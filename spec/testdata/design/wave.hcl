wave "auth-rework" {
  budget       = "2M"
  budget_usd   = 40
  max_sessions = 2
  on_quota     = "suspend"
}

defaults {
  agent        = agent.claude
  model        = "sonnet"
  review_model = "opus"
  fix_passes   = 2
  timeout      = "45m"
}

agent "claude" {
  command          = "claude"
  permission_mode  = "acceptEdits"
  allowed_tools    = ["Bash", "Edit", "Write"]
  disallowed_tools = ["Agent", "Bash(git push:*)"]
}

repo "api" {
  path      = "../api"
  base      = "main"
  test      = "go test ./..."
  parallel  = 2
  changelog = "CHANGELOG.md"
}

repo "web" {
  path = "../web"
}

lot "L40" {
  repo  = repo.api
  title = "Token store"
  brief = file("briefs/L40.md")
}

lot "L41" {
  repo       = repo.api
  title      = "OAuth login"
  brief      = <<-EOT
    Add OAuth login with the token store of L40 ...
  EOT
  model      = "opus"
  depends_on = [lot.L40]
  also       = [repo.web]
  budget     = "400k"
  estimate   = "3h"
}

lot "docs" {
  repo       = repo.api
  run        = "make docs && git commit -qam 'docs: regenerate (docs)'"
  depends_on = [lot.L41]
}
