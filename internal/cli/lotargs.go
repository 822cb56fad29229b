package cli

import (
	"fmt"
	"os"
	"strings"
)

// waveFileFirst splits the positional arguments of a command whose wave
// file is optional and comes first (logs [FILE] LOT, answer [FILE] LOT
// TEXT). The first argument is the wave file when it ends in .hcl or
// .hcl.json, or names a file that exists (not a folder); else the wave
// file is wave.hcl in the current folder and every argument is in rest.
// (Lot ids are names: they never end in .hcl.)
func waveFileFirst(pos []string) (file string, rest []string) {
	if len(pos) > 0 && looksLikeWaveFile(pos[0]) {
		return pos[0], pos[1:]
	}
	return "wave.hcl", pos
}

// looksLikeWaveFile says whether arg names a wave file rather than a lot:
// it ends in .hcl or .hcl.json, or is an existing file.
func looksLikeWaveFile(arg string) bool {
	if strings.HasSuffix(arg, ".hcl") || strings.HasSuffix(arg, ".hcl.json") {
		return true
	}
	fi, err := os.Stat(arg)
	return err == nil && !fi.IsDir()
}

// noWaveFile is the error of a command that reads a wave's state when
// neither the wave file nor its state file is there: "no wave file: …",
// naming what to do. It is nil when either is there.
func noWaveFile(cmd, file, stateFile string) error {
	if fi, err := os.Stat(file); err == nil && !fi.IsDir() {
		return nil
	}
	if _, err := os.Stat(stateFile); err == nil {
		return nil
	}
	return fmt.Errorf("no wave file: %s is not a file here (name the wave file: cadence %s FILE …)", file, cmd)
}
