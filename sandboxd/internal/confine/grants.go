package confine

import (
	"fmt"
	"runtime"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// roAccess is what landlock.RODirs grants under the V6 config (it
// handles all three): read, list and execute.
const roAccess = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir

// Grants are the read-only trees and device files every call is granted,
// opened once (O_PATH) so a turn's ruleset adds their rules from these
// descriptors instead of looking up and opening every path again. A rule
// binds to the inode a descriptor names either way, but here to the one
// named at start: a tree root replaced later stays granted as it was (a
// tree renamed elsewhere stays readable there, the new one is not granted)
// until sandboxd restarts; only root can move these trees. The descriptors
// are close-on-exec and the launcher closes all but stdio, so no call ever
// holds one.
type Grants struct {
	ro, devs []int
}

// OpenGrants opens the trees ro and the device files devs as a Spec's
// ReadOnly and Devices would be opened for each ruleset.
func OpenGrants(ro, devs []string) (*Grants, error) {
	g := &Grants{}
	open := func(paths []string) ([]int, error) {
		fds := make([]int, 0, len(paths))
		for _, p := range paths {
			fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				for _, fd := range fds {
					unix.Close(fd)
				}
				return nil, fmt.Errorf("opening %s for the Landlock ruleset: %w", p, err)
			}
			fds = append(fds, fd)
		}
		return fds, nil
	}
	var err error
	if g.ro, err = open(ro); err != nil {
		return nil, err
	}
	if g.devs, err = open(devs); err != nil {
		closeAll(g.ro)
		return nil, err
	}
	runtime.AddCleanup(g, func(fds [][]int) {
		for _, f := range fds {
			closeAll(f)
		}
	}, [][]int{g.ro, g.devs})
	return g, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// addTo adds the grants' rules to the ruleset fd, with the access rights
// the path rules of ruleset give them.
func (g *Grants) addTo(fd int) error {
	defer runtime.KeepAlive(g)
	add := func(fds []int, access uint64) error {
		for _, f := range fds {
			attr := ll.PathBeneathAttr{ParentFd: f, AllowedAccess: access}
			if err := ll.LandlockAddPathBeneathRule(fd, &attr, 0); err != nil {
				return fmt.Errorf("landlock_add_rule: %w", err)
			}
		}
		return nil
	}
	if err := add(g.ro, roAccess); err != nil {
		return err
	}
	return add(g.devs, uint64(deviceAccess))
}
