// Package agent is cadence's kind-neutral view of agent CLIs: the session
// types the executor hands over (Session, Outcome, Report), the Adapter
// interface each kind of agent CLI implements, and the registry that maps
// an agent block's kind (spec.Agent.Kind, "claude" by default) to its
// adapter. The executor runs every session through a Router, which looks
// the adapter up by the lot's agent kind; preflight (`cadence plan`) and
// `cadence version` read an adapter's Tool to find and check the CLI.
//
// Nothing here knows a particular CLI: its flags, output format, result
// classification, transcript and environment live in the adapter's own
// package (executor/agent/claude for Claude Code and the CLIs that behave
// like it, which an agent block reaches with command = "...").
//
// Adding a second agent touches three places, and only them:
//
//  1. the adapter package, executor/agent/<kind>: a type implementing
//     Adapter (Run, Tool, KillLeftovers, Recount), and Sandboxer when its CLI has
//     an OS sandbox (else `plan` says pushes are only detected), with its
//     tests;
//  2. spec: the kind's attributes in the agent block (spec.Agent and the
//     per-kind schema in spec/decode.go; the attributes common to every
//     kind, kind and command, need nothing), and schemas/wave.schema.json;
//  3. one registration line in internal/cli/agents.go:
//     agent.Register("<kind>", <kind>.New()).
//
// The kinds an agent block may name are the registered ones: the CLI passes
// Kinds() to spec.Options.AgentKinds, so spec never imports this package.
package agent
