//go:build !linux

package proc

import "github.com/hashicorp/go-hclog"

// AdoptOrphans does nothing off Linux: there is no child subreaper.
func AdoptOrphans(log hclog.Logger) error { return nil }
