// Package agent is cadence's kind-neutral view of agent CLIs: the session
// types the executor hands over (Session, Outcome, Report), the Adapter
// interface each kind of agent CLI implements, and the Registry that maps
// an agent block's kind (spec.Agent.Kind, "claude" by default) to its
// adapter. The executor runs every session through a Router over the
// registry; preflight (`cadence plan`) and `cadence version` read an
// adapter's Tool to find and check the CLI; the wave's load has each
// kind's adapter decode its agents' own settings (Registry.DecodeSettings
// as spec.Options.AgentSettings).
//
// Nothing here knows a particular CLI: its flags, settings, output format,
// result classification, transcript and environment live in the adapter's
// own package (executor/agent/claude for Claude Code and the CLIs that
// behave like it, which an agent block reaches with command = "...").
//
// Adding an agent kind touches these places, and only them:
//
//  1. the adapter package, executor/agent/<kind>: a type implementing
//     Adapter (Kind, Run, Tool with its default command, KillLeftovers,
//     Recount); SettingsDecoder when its agent blocks take attributes of
//     their own (their schema, decoding, defaults and docs: attrdocs.go,
//     generated from the kind's table in docs/wave-file.md; spec reads
//     only kind, command, sandbox and fallback_model); Sandboxer when its
//     CLI has an OS sandbox (else `plan` says pushes are only detected);
//     its reports read with DecodeReport; with its tests, which run the
//     conformance suite (executor/agent/agenttest);
//  2. the docs' table of the kind (docs/wave-file.md, "Kind `<kind>`") and
//     its branch of the agent block in schemas/wave.schema.json;
//  3. its adapter among agent.NewRegistry's arguments in
//     internal/cli/agents.go.
//
// The kinds an agent block may name are the registry's: the CLI passes
// Registry.Kinds to spec.Options.AgentKinds, so spec never imports this
// package.
package agent
