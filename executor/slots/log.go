package slots

import (
	"time"

	"github.com/hashicorp/go-hclog"
)

// logWait logs a wait for a slot (the pool's folder, the slot given, how
// long, or why none) at debug level on the "slots" sub-logger of hclog.L().
func logWait(dir string, s *Slot, waited time.Duration, err error) {
	if l := hclog.L(); l.IsDebug() {
		if err != nil {
			l.Named("slots").Debug("slot wait ended", "pool", dir, "waited", waited, "error", err)
		} else {
			l.Named("slots").Debug("slot taken after wait", "pool", dir, "slot", s.index, "waited", waited)
		}
	}
}

// logHolds logs a holds file that could not be read (the pool keeps the
// number of live holds it read last) at warn level.
func logHolds(dir string, err error) {
	hclog.L().Named("slots").Warn("holds unreadable, keeping the last count", "pool", dir, "error", err)
}
