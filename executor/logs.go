package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/internal/layout"
)

// setAsideLogs moves the files of a lot's earlier run out of the way when
// -replace starts it afresh: its steps are numbered from 0 again, so the
// old <n>-<kind> files would pass for the new steps' (cadence logs lists a
// step's files by its number). They go, whole, to the lot's next free
// replaced-<k> folder (layout.Wave.ReplacedDir); earlier replaced-<k>
// folders stay where they are. A lot without files is left alone.
func setAsideLogs(lay layout.Wave, lot string) error {
	dir := lay.LotDir(lot)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("set aside the earlier run's files of lot %s: %w", lot, err)
	}
	var move []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "replaced-") {
			move = append(move, e.Name())
		}
	}
	if len(move) == 0 {
		return nil
	}
	k := 1
	for ; ; k++ {
		if _, err := os.Lstat(lay.ReplacedDir(lot, k)); errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	dest := lay.ReplacedDir(lot, k)
	if err := os.Mkdir(dest, 0o700); err != nil {
		return fmt.Errorf("set aside the earlier run's files of lot %s: %w", lot, err)
	}
	for _, name := range move {
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(dest, name)); err != nil {
			return fmt.Errorf("set aside the earlier run's files of lot %s: %w", lot, err)
		}
	}
	return nil
}

// ensureLogDir makes the lot's log folder, once.
func (lr *lotRun) ensureLogDir() error {
	if lr.logDirMade {
		return nil
	}
	if err := os.MkdirAll(lr.logDir, 0o700); err != nil {
		return err
	}
	lr.logDirMade = true
	return nil
}
