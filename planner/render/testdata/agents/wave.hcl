# A wave for the renderer tests of agents per step: lot mixed implements
# with the built-in claude and is reviewed by agent codex (of kind codex,
# whose sandbox the fake machine of render_test.go lacks: pushes from repo
# app are then only detected); lot second runs every step with claude but
# is reviewed by agent reviewer (another claude agent, another model and
# fallback); lot plain uses claude alone, its agent not shown.

wave "agents" {}

agent "codex" {
  kind = "codex"
}

agent "reviewer" {
  fallback_model = "sonnet"
}

repo "app" {
  path = "repos/app"
  test = "make test"
}

repo "lib" {
  path = "repos/lib"
  test = "make test"
}

lot "mixed" {
  repo         = repo.app
  brief        = "Add the feature."
  precheck     = true
  review_agent = agent.codex
}

lot "second" {
  repo         = repo.lib
  brief        = "Fix the parser."
  review_agent = agent.reviewer
  review_model = "haiku"
}

lot "plain" {
  repo  = repo.lib
  brief = "Document the parser."
}
