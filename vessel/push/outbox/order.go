package outbox

import (
	"sync"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// doneKeys remembers, per delivery key, the highest job id that ended here
// (delivered, or given up), and wakes the deliveries waiting for it. A job
// of a key is worked only once no earlier job of its key is pending, so
// when it ends every job of the key up to its id has ended: a later one
// need not wait for River to record that (River marks finished jobs in
// batches, a little after they returned, which held one config's
// deliveries to about 3 a second). Jobs that ended on another replica are
// read from the table as before.
type doneKeys struct {
	mu   sync.Mutex
	keys map[string]*doneKey
}

type doneKey struct {
	upTo  int64
	wake  chan struct{} // closed and replaced when upTo moves
	users int           // waiting or finishing deliveries holding the entry
}

// acquire is the key's entry, held until release.
func (d *doneKeys) acquire(key string) *doneKey {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.keys == nil {
		d.keys = map[string]*doneKey{}
	}
	k := d.keys[key]
	if k == nil {
		k = &doneKey{wake: make(chan struct{})}
		d.keys[key] = k
	}
	k.users++
	return k
}

// release lets go of the entry; the last user removes it, so the map holds
// only keys with deliveries in flight here.
func (d *doneKeys) release(key string, k *doneKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k.users--; k.users == 0 {
		delete(d.keys, key)
	}
}

// state is the id every job of the key has ended up to, and a channel
// closed when that moves.
func (d *doneKeys) state(k *doneKey) (int64, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return k.upTo, k.wake
}

// ended records that job id of the key ended here.
func (d *doneKeys) ended(k *doneKey, id int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if id > k.upTo {
		k.upTo = id
		close(k.wake)
		k.wake = make(chan struct{})
	}
}

// firstOrderPoll bounds the first wait for an earlier delivery that runs
// on another replica (nothing here wakes the waiter); it doubles up to a
// quarter of OrderSnooze.
const firstOrderPoll = 10 * time.Millisecond

// orderSnooze is how long a delivery snoozes for the earlier one e of its
// key: until just after e is due when e waits to be worked (a retry, or a
// snooze of its own), so a chain of one config's deliveries does not
// snooze a full period each; the full period while e runs long.
func orderSnooze(e *rivertype.JobRow, full time.Duration, now time.Time) time.Duration {
	if e.State == rivertype.JobStateRunning {
		return full
	}
	return min(max(e.ScheduledAt.Sub(now)+orderSlack, orderSlack), full)
}

// orderSlack is the least snooze, and how long after the earlier job is
// due the later one comes back.
const orderSlack = 20 * time.Millisecond
