package store

import (
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// Live are the tasks running in one agent's store, which both backends
// keep in memory: the table sees a task when it is created, when its state
// changes and when it ends, so working updates (one per streamed event)
// never touch it. Mu guards Tasks and the notes of configs wanting
// WORKING updates; a backend holds it through an update.
type Live struct {
	Mu    sync.Mutex
	Tasks map[a2a.TaskID]*LiveTask
	// want are the tasks not running here yet given a config that wants
	// WORKING updates.
	want WorkingWants
}

// LiveTask is a task running in a store.
type LiveTask struct {
	Owner       string
	Version     taskstore.TaskVersion // the SDK's view, bumped on every update
	DiskVersion taskstore.TaskVersion // the version in the table (PostgreSQL's conditional writes)
	DiskState   a2a.TaskState         // the state last written to the table
	Task        *a2a.Task             // stripped
	// Working: whether its configs want WORKING updates, and how many
	// this turn had.
	Working WorkingTurn
	// Unsaved is set (SQLite) on a task whose write failed that must be
	// written still: a finished one (served as finished meanwhile) or one
	// with pushes.
	Unsaved bool
	// Pending are the pushes of writes that failed (SQLite), stored with
	// the next write of the task.
	Pending []Push
}

// NewLive is an empty set.
func NewLive() Live { return Live{Tasks: map[a2a.TaskID]*LiveTask{}} }

// WantWorking notes that a task was given a config wanting WORKING
// updates: at once when it runs here, otherwise for when it starts here.
func (l *Live) WantWorking(id a2a.TaskID, now time.Time) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	if lt := l.Tasks[id]; lt != nil {
		lt.Working.On()
		return
	}
	l.want.Add(id, now)
}

// LearnWorking marks a task running here as wanting WORKING updates; a
// task not running here is left alone.
func (l *Live) LearnWorking(id a2a.TaskID) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	if lt := l.Tasks[id]; lt != nil {
		lt.Working.On()
	}
}

// Start keeps lt as running here (nil: the task is finished, kept
// nowhere), wanting WORKING updates when working says so or when a config
// wanting them was saved for it before; the note is used up either way.
// Mu is held.
func (l *Live) Start(id a2a.TaskID, lt *LiveTask, working bool, now time.Time) {
	wanted := l.want.Take(id, now)
	if lt == nil {
		return
	}
	if wanted || working {
		lt.Working.On()
	}
	l.Tasks[id] = lt
}

// Get is a task running here as the SDK last saw it, for its owner:
// found is false when it does not run here (read the table then), and
// another owner's task is a2a.ErrTaskNotFound.
func (l *Live) Get(id a2a.TaskID, owner string) (_ *taskstore.StoredTask, found bool, _ error) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	lt := l.Tasks[id]
	if lt == nil {
		return nil, false, nil
	}
	if lt.Owner != owner {
		return nil, true, a2a.ErrTaskNotFound
	}
	cp := *lt.Task // callers may reassign fields; the parts are never modified
	return &taskstore.StoredTask{Task: &cp, Version: lt.Version}, true, nil
}
