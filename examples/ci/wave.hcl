# A small wave for the CI example: the workflow in cadence-plan.yml comments
# the plan of waves like this one on the pull requests that change them.
wave "ci-demo" {
  budget = "500k"
}

repo "app" {
  path = "../quickstart/repos/app"
  test = "sh test.sh"
}

lot "readme" {
  repo     = repo.app
  title    = "Explain the greeting in the README"
  brief    = "Add a section to README.md that explains src/greeting.txt. Cite the lot id (readme) in the commit message."
  budget   = "150k"
  estimate = "20m"
}

lot "count" {
  repo       = repo.app
  title      = "Count the files"
  run        = "ls | wc -l > COUNT && git add COUNT && git commit -qm 'count: record the file count (count)'"
  depends_on = [lot.readme]
}
