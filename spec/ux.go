package spec

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// DefaultUXTimeout is how long a ux block's url gets to answer when its
// timeout is not written.
const DefaultUXTimeout = 60 * time.Second

// UX is a ux block (docs/ux.md): the running application a visible lot's
// UX review looks at in a browser.
type UX struct {
	// Command starts the application in the lot's worktree, with the
	// lot's environment and toolchain, as /bin/sh -c Command; "" when the
	// application is already running at URL.
	Command string
	// URL is the application's address, http or https, which must answer
	// (a status below 500) before the session starts.
	URL string
	// Timeout is how long URL gets to answer once Command started (at
	// least a second; DefaultUXTimeout unless written).
	Timeout time.Duration
	// Paths are the pages the review visits first, each a path on URL's
	// origin beginning with "/"; none: URL only.
	Paths []string
	// DeclRange is the range of the block header.
	DeclRange hcl.Range
}

// UXReview reports whether the lot gets a UX review after each write
// step: an agent lot written visible, with a ux block in scope (its own or
// its repo's), not skipped by ux = false.
func (l *Lot) UXReview() bool {
	return l.Kind == AgentLot && l.Visible && !l.NoUX && l.UX != nil
}

var uxBlock = hcl.BlockHeaderSchema{Type: "ux"}

var uxSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "command"}, {Name: "url", Required: true}, {Name: "timeout"}, {Name: "paths"},
}}

// uxBlocks reads the ux blocks of a repo or a lot (what names it in
// messages): at most one.
func (d *decoder) uxBlocks(blocks hcl.Blocks, what string) *UX {
	var u *UX
	for i, b := range blocks {
		if b.Type != uxBlock.Type {
			continue
		}
		if u != nil {
			d.errorf(b.DefRange, "Duplicate ux block", "%s has one ux block at most; the first is at %s.", capitalize(what), blocks[i-1].DefRange)
			continue
		}
		c, diags := b.Body.Content(uxSchema)
		d.values.diags = append(d.values.diags, diags...)
		u = d.uxAttrs(c.Attributes, b.DefRange, what)
	}
	return u
}

// uxObject reads a lot's ux attribute: false (skip the UX review; skip
// true) or, as the JSON syntax spells a block, an object of the ux
// block's attributes (nil then).
func (d *decoder) uxObject(attr *hcl.Attribute, what string) (u *UX, skip bool) {
	if attr == nil {
		return nil, false
	}
	pairs, diags := hcl.ExprMap(attr.Expr)
	if diags.HasErrors() {
		on, ok := d.boolean(attr)
		return nil, ok && !on
	}
	attrs := hcl.Attributes{}
	for _, p := range pairs {
		name := hcl.ExprAsKeyword(p.Key)
		if name == "" {
			if v, err := p.Key.Value(nil); err == nil && v.Type().FriendlyName() == "string" {
				name = v.AsString()
			}
		}
		known := false
		for _, s := range uxSchema.Attributes {
			known = known || s.Name == name
		}
		if !known {
			d.errorf(p.Key.Range(), "Unsupported argument", "A ux block takes command, url, timeout and paths; %q is not one of them.", name)
			continue
		}
		attrs[name] = &hcl.Attribute{Name: name, Expr: p.Value, Range: hcl.RangeBetween(p.Key.Range(), p.Value.Range()), NameRange: p.Key.Range()}
	}
	if attrs["url"] == nil {
		d.errorf(attr.Expr.Range(), "Missing required argument", "The argument %q is required in the ux block of %s.", "url", what)
		return nil, false
	}
	return d.uxAttrs(attrs, attr.Range, what), false
}

// uxAttrs reads the attributes of one ux block.
func (d *decoder) uxAttrs(attrs hcl.Attributes, rng hcl.Range, what string) *UX {
	u := &UX{Timeout: DefaultUXTimeout, DeclRange: rng}
	if s, ok := d.str(attrs["command"]); ok {
		u.Command = commandLineEnds(s)
		d.warnLongCommand(attrs["command"], fmt.Sprintf("The ux command of %s", what), u.Command)
	}
	if s, ok := d.str(attrs["url"]); ok {
		if why := uxURLProblem(s); why != "" {
			d.invalid(attrs["url"], "Invalid ux url", "The ux url of %s, %q, %s: write the application's address, like \"http://127.0.0.1:8080/\".", what, s, why)
		}
		u.URL = s
	}
	if t, ok := d.timeout(attrs["timeout"]); ok {
		if t < time.Second {
			d.invalid(attrs["timeout"], "Invalid ux timeout", "The ux timeout of %s is how long the application gets to answer: at least \"1s\".", what)
		} else {
			u.Timeout = t
		}
	}
	if a := attrs["paths"]; a != nil {
		if list, ok := d.strList(a); ok {
			for _, p := range list {
				if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
					d.invalid(a, "Invalid ux path", "The ux paths of %s are pages of the application's origin, each beginning with \"/\" (like \"/settings\"); %q is not.", what, p)
					continue
				}
				u.Paths = append(u.Paths, p)
			}
		}
	}
	return u
}

// uxURLProblem says why s cannot be a ux url ("" when it can).
func uxURLProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "does not begin with http:// or https://"
	case u.Host == "" || u.Hostname() == "":
		return "names no host"
	case u.User != nil:
		return "holds a user name or password"
	}
	return ""
}

// mergeUX fills every lot's UX (its own block, else its repo's) and
// checks that a visible lot has one in scope, unless ux = false.
func (d *decoder) mergeUX() {
	for _, l := range d.cfg.Lots {
		own := d.lotUX[l]
		if own == nil && l.Repo != nil {
			own = l.Repo.UX
		}
		l.UX = own
		attrs := d.lotAttrs[l]
		if l.Kind == CommandLot {
			if d.lotUX[l] != nil {
				d.errorf(d.lotUX[l].DeclRange, "Not for a command lot", "A ux block applies to agent lots only (their UX review); lot %q is a command lot (it has run).", l.ID)
			}
			continue
		}
		if l.Visible && !l.NoUX && l.UX == nil {
			d.errorf(attrs["visible"].NameRange, "No ux block for a visible lot",
				"Lot %q is visible, so it gets a UX review, which needs to know how to start and open the application: add a ux block (command, url) to the lot or to its repo, or ux = false to skip the review.", l.ID)
		}
	}
}
