package confine

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// StartFromThreadThatExits: a call started by a goroutine that then ends
// locked to its thread (so the runtime terminates the thread, as the disk
// monitor does with a thread whose fs uid it could not restore) outlives
// that thread. Forked on the starting thread, the call would get its
// parent-death signal (SIGKILL) as soon as the thread exits.
func TestStartFromThreadThatExits(t *testing.T) {
	var p *Process
	for p == nil {
		started := make(chan *Process)
		go func() {
			runtime.LockOSThread()
			if unix.Gettid() == os.Getpid() {
				// The runtime never terminates the main thread (it
				// parks it instead): try another.
				runtime.UnlockOSThread()
				started <- nil
				return
			}
			// Never unlocked: the thread ends with the goroutine.
			started <- startShell(t, "sleep 0.5; echo alive")
		}()
		p = <-started
	}
	var out strings.Builder
	res := p.Wait(func(stream int, data []byte) error {
		if stream == Stdout {
			out.Write(data)
		}
		return nil
	})
	if res.Code != 0 || res.Signal != "" || out.String() != "alive\n" {
		t.Fatalf("the call died with the thread that started it: result %+v, stdout %q", res, out.String())
	}
}
