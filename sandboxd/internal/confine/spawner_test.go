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
	type started struct {
		p   *Process
		err error
	}
	ws := t.TempDir()
	var p *Process
	// A try that lands on the main thread keeps it (locked and waiting)
	// until the test ends, so the next try runs elsewhere; twenty tries
	// without another thread would be a broken runtime, not bad luck.
	release := make(chan struct{})
	defer close(release)
	for try := 0; p == nil; try++ {
		if try == 20 {
			t.Fatal("every try ran on the main thread, which never exits")
		}
		ch := make(chan started)
		go func() {
			runtime.LockOSThread()
			if unix.Gettid() == os.Getpid() {
				// The runtime never terminates the main thread (it
				// parks it instead): hold it and try another.
				ch <- started{}
				<-release
				runtime.UnlockOSThread()
				return
			}
			// Never unlocked: the thread ends with the goroutine.
			p, err := startShellIn(ws, "sleep 0.5; echo alive", false)
			ch <- started{p, err}
		}()
		s := <-ch
		if s.err != nil {
			t.Fatalf("starting the call: %v", s.err)
		}
		p = s.p
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
