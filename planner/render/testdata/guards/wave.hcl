# A wave for the renderer tests of the push guards and long commands: with
# the fake machine of render_test.go, a push from repo app's lots is
# prevented (its one lot's agent has its sandbox), from repo tools' lots
# only detected (a command lot, and an agent with sandbox = false), lot
# gen's run is too long for one argument of /bin/sh -c, and repo tools
# turns the step sandbox off for its lots' command steps (sandbox = false),
# while repo app's may also write the build folder in it (sandbox_writable).

wave "guards" {}

agent "nobox" {
  sandbox = false
}

repo "app" {
  path             = "repos/app"
  test             = "make test"
  sandbox_writable = ["build"]
}

repo "tools" {
  path    = "repos/tools"
  test    = "make test"
  sandbox = false
}

lot "feature" {
  repo  = repo.app
  brief = "Add the feature."
}

lot "script" {
  repo  = repo.tools
  agent = agent.nobox
  brief = "Write the release script."
}

lot "gen" {
  repo = repo.tools
  run  = format(": %0131072d", 0)
}
