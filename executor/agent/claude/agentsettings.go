package claude

import (
	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Settings are the attributes an agent block of kind "claude" takes beyond
// the common ones: the Claude Code CLI's permissions, prompt and retries.
// The adapter decodes them (DecodeSettings) and reads them back from
// spec.Agent.Settings when it runs a session (settingsOf).
type Settings struct {
	// PermissionMode is passed as --permission-mode (permission_mode).
	PermissionMode string
	// AllowedTools are passed as --allowedTools (allowed_tools).
	AllowedTools []string
	// DisallowedTools are passed as --disallowedTools (disallowed_tools).
	DisallowedTools []string
	// AppendSystemPrompt is passed as --append-system-prompt when not
	// empty (append_system_prompt).
	AppendSystemPrompt string
	// MaxRetries bounds the CLI's own API retries
	// (CLAUDE_CODE_MAX_RETRIES; max_retries).
	MaxRetries int
}

var _ agent.SettingsDecoder = (*Adapter)(nil)

// PermissionModes are the values Claude Code accepts for --permission-mode.
var PermissionModes = []string{"default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"}

// DefaultMaxRetries bounds the CLI's own API retries
// (CLAUDE_CODE_MAX_RETRIES): its default of 10 turns a dead API into a
// wait of about three minutes.
const DefaultMaxRetries = 3

// bypassMode is the permission mode under which the CLI's file tools
// (outside its sandbox) may write anywhere.
const bypassMode = "bypassPermissions"

// DefaultSettings are the settings of an agent of kind "claude" that sets
// none of its own, the built-in agent's. Its permissions let an agent edit,
// test and commit unattended without bypassPermissions: acceptEdits plus
// the whole Bash tool (Bash prefix rules refuse redirections and compound
// commands), with pushes and sub-agents denied. The push denial is a soft
// guard; gitint enforces the real one.
func DefaultSettings() *Settings {
	return &Settings{
		PermissionMode:  "acceptEdits",
		AllowedTools:    []string{"Bash", "Edit", "Write"},
		DisallowedTools: []string{"Agent", "Bash(git push:*)"},
		MaxRetries:      DefaultMaxRetries,
	}
}

// SandboxBypass implements agent.Settings: permission_mode =
// "bypassPermissions" lets the file tools, which run outside the sandbox,
// write anywhere.
func (s *Settings) SandboxBypass() string {
	if s.PermissionMode == bypassMode {
		return `permission_mode = "bypassPermissions" (its file tools run outside the sandbox, not confined to the worktrees)`
	}
	return ""
}

// attributes are the attributes of Settings, in the order the docs list
// them.
var attributes = []spec.KindAttribute{
	{Name: "permission_mode", Type: cty.String, Enum: PermissionModes},
	{Name: "allowed_tools", Type: cty.List(cty.String)},
	{Name: "disallowed_tools", Type: cty.List(cty.String)},
	{Name: "append_system_prompt", Type: cty.String},
	{Name: "max_retries", Type: cty.Number},
}

// Attributes implements agent.SettingsDecoder, each with its docs
// (attrdocs.go, generated from docs/wave-file.md).
func (*Adapter) Attributes() []spec.KindAttribute {
	return spec.WithDocs(attributes, attributeDocs)
}

// DecodeSettings implements agent.SettingsDecoder: DefaultSettings, with
// what body sets over them. append_system_prompt, which a plan never shows,
// may derive from a sensitive value; no other may.
func (*Adapter) DecodeSettings(body hcl.Body, ectx *hcl.EvalContext) (agent.Settings, hcl.Diagnostics) {
	s := DefaultSettings()
	if body == nil {
		return s, nil
	}
	c, diags := body.Content(spec.BodySchemaOf(attributes))
	r := spec.NewBodyReader(ectx, "append_system_prompt")
	r.Add(diags)
	if v, ok := r.Enum(c.Attributes["permission_mode"], PermissionModes...); ok {
		s.PermissionMode = v
	}
	if l, ok := r.StrList(c.Attributes["allowed_tools"]); ok {
		s.AllowedTools = l
	}
	if l, ok := r.StrList(c.Attributes["disallowed_tools"]); ok {
		s.DisallowedTools = l
	}
	if v, ok := r.Str(c.Attributes["append_system_prompt"]); ok {
		s.AppendSystemPrompt = v
	}
	if n, ok := r.Whole(c.Attributes["max_retries"], 0); ok {
		s.MaxRetries = n
	}
	return s, r.Diagnostics()
}

// settingsOf returns the settings of agent a: those its adapter decoded,
// or DefaultSettings for an agent whose settings were not decoded (nil:
// made in code, as the built-in agent is, not loaded with a decoder).
func settingsOf(a *spec.Agent) *Settings {
	if a != nil {
		if s, ok := a.Settings.(*Settings); ok && s != nil {
			return s
		}
	}
	return DefaultSettings()
}
