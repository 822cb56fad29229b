// Package transport moves a lot's repositories to a remote worker and its
// commits back with git bundles, without any push and without any remote:
// it reads and writes bundle files; the caller moves them (the queue of
// executor/remote is not its business). Every git call goes through
// gitint (bounded, no hooks, explicit environment); docs/remote.md,
// "Repository transport", says what users see.
//
// The flow, per repository of a lot (its `also` neighbours included):
//
//   - the lead makes a complete bundle of the lot's base commit once per
//     commit, cached and shared by the lots ([Transport.BaseBundle]), and
//     a thin bundle of the lot's branch above it ([Transport.LotBundle]);
//   - the worker makes a fresh repository of both ([Transport.Checkout]):
//     no remote, no hooks, no configuration of the lead's;
//   - the worker sends back a thin bundle of the commits it made above
//     what it was sent ([Transport.ResultBundle], [Transport.Checkpoint]);
//   - the lead verifies that bundle before fetching anything of it and
//     fast-forwards the lot's branch and worktree to it ([Transport.Accept]),
//     or refuses it whole ([Refused]).
//
// A bundle carries refs and objects only: never hooks, configuration,
// remotes, or a working tree's files (gitformat-bundle(5)), so nothing a
// bundle holds runs on the machine that reads it. What it names is
// checked: a result naming any ref but the lot's branch is refused whole.
//
// An empty range (a branch still at the commit it is measured from) is a
// valid bundle too: git refuses to create one, so this package writes it
// itself (writeEmptyBundle): the one ref at that commit, the commit as its
// prerequisite, and a pack of no objects, which git fetches as any other.
package transport
