package workspace

import (
	"time"

	"golang.org/x/sys/unix"
)

// scratchFull reports whether the scratch file system has no block or no
// inode left: a write there fails with ENOSPC.
func (m *Manager) scratchFull() bool {
	var st unix.Statfs_t
	if err := unix.Statfs(m.cfg.Scratch, &st); err != nil {
		return false
	}
	return st.Bavail == 0 || (st.Files > 0 && st.Ffree == 0)
}

// noteFull records, on each check, whether the scratch was full then.
func (m *Manager) noteFull() {
	if m.scratchFull() {
		m.fullAt.Store(time.Now().UnixNano())
	}
}

// FullDuring reports whether the scratch was seen full at some check
// since start, or is full now: a call running meanwhile may have had
// writes fail with ENOSPC, and must say so instead of ending "ok".
func (m *Manager) FullDuring(start time.Time) bool {
	return m.fullAt.Load() >= start.UnixNano() || m.scratchFull()
}

// FullMessage is the note a call gets when FullDuring holds.
const FullMessage = "the sandbox's scratch disk was full during this call: writes may have failed with " +
	"\"no space left on device\" (ENOSPC), so its files may be incomplete; remove files you do not need, or end turns"
