# The UX example: one visible lot whose work a read-only UX review looks at
# in a browser before the code review (docs/ux.md). setup.sh creates the
# throwaway repository repos/web, a tiny static site served by node.
#
#   sh examples/ux/setup.sh
#   go run ./cmd/cadence plan examples/ux/wave.hcl

wave "ux" {
  max_sessions = 1
}

repo "web" {
  path = "repos/web"
  test = "sh test.sh"
  ux {
    command = "PORT=18431 node server.js" # started in the lot's worktree
    url     = "http://127.0.0.1:18431/"   # must answer before the review starts
    timeout = "30s"
    paths   = ["/"]
  }
}

lot "greeting" {
  repo    = repo.web
  title   = "A greeting form"
  brief   = "Add to index.html a form with a name field and a Greet button that shows \"Hello, NAME.\" under it, without a page reload. Keep the page's title."
  visible = true
}
