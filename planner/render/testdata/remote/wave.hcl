# A wave for the renderer tests of remote steps: an executor "nats" block
# whose engine is on another machine without TLS (a warning), the fake
# remote machine of render_test.go answering with two workers and a pool.

wave "remote" {}

executor "nats" {
  url   = "nats://engine.team.example:4222"
  queue = "team"
  lease = "45s"
}

repo "app" {
  path = "repos/app"
  test = "make test"
}

lot "feature" {
  repo  = repo.app
  brief = "Add the feature."
}

lot "lint" {
  repo = repo.app
  run  = "make lint"
}
