package store

import (
	"context"
	"database/sql"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"github.com/astraldeep/astralvessel-go/vessel/store/internal/sqldb"
	"github.com/astraldeep/astralvessel-go/vessel/store/migrate"
)

//go:embed migrations/sqlite/*.sql
var sqliteMigrationFiles embed.FS

// SQLiteMigrations are the SQLite store's numbered migrations: the
// embedded files, and step 5 in Go.
func SQLiteMigrations() ([]migrate.Migration, error) {
	return sqliteMigrations(sqliteMigrationFiles, "migrations/sqlite")
}

// sqliteMigrations are the files of dir in fsys and the steps in Go; a
// file numbered like a step in Go is refused (migrate.Check).
func sqliteMigrations(fsys fs.FS, dir string) ([]migrate.Migration, error) {
	ms, err := migrate.Load(fsys, dir)
	if err != nil {
		return nil, err
	}
	ms = append(ms, migrate.Migration{Version: 5, Name: "0005_merge_agent_tables (Go)", Func: mergeAgentTables})
	if err := migrate.Check(ms); err != nil {
		return nil, fmt.Errorf("sqlite task store: %w", err)
	}
	migrate.Sort(ms)
	return ms, nil
}

// mergeAgentTables moves the rows of the tables each agent had before
// migration 4, "tasks_<agent>", into vessel_tasks and drops them (with
// their indexes).
func mergeAgentTables(ctx context.Context, tx sqldb.Querier) error {
	rows, err := tx.Query(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 6) = 'tasks_'`)
	if err != nil {
		return fmt.Errorf("find agent tables: %w", err)
	}
	names, err := sqldb.Collect(rows, func(r sqldb.Row) (string, error) {
		var n string
		return n, r.Scan(&n)
	})
	if err != nil {
		return fmt.Errorf("find agent tables: %w", err)
	}
	for _, name := range names {
		if _, err := tx.Exec(ctx, `INSERT INTO vessel_tasks (agent_id, id, owner, context_id, state, version, updated_at, task)
			SELECT ?, id, owner, context_id, state, version, updated_at, task FROM `+quoteIdent(name), strings.TrimPrefix(name, "tasks_")); err != nil {
			return fmt.Errorf("move tasks of %s: %w", name, err)
		}
		if _, err := tx.Exec(ctx, `DROP TABLE `+quoteIdent(name)); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
	}
	return nil
}

// migrateSQLite brings the database to the latest version.
func migrateSQLite(ctx context.Context, db *sql.DB) error {
	ms, err := SQLiteMigrations()
	if err != nil {
		return err
	}
	return migrate.Run(ctx, migrate.SQLite(db), ms)
}

// RestartReason is the status text of tasks found unfinished at start:
// the vessel stopped (or its store could not take the end, a full disk)
// before the turn's end was stored, so whether it finished is unknown.
const RestartReason = "the vessel stopped before this turn's end was stored"

type sqliteBackend struct {
	db     *sql.DB
	path   string
	opt    Options
	mu     sync.Mutex
	stores map[string]*sqliteStore
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once

	// failMu guards the last write failure, which Ping reports until a
	// write succeeds again.
	failMu   sync.Mutex
	writeErr error

	// queue, once set, enqueues the pushes of status writes (PushQueuing).
	queue atomic.Pointer[PushQueue]

	// The statements, prepared once for the database (prepare) and shared
	// by every agent's store, whose agent is a parameter: listConfigs
	// lists a task's push configs (every write with pushes runs it, in its
	// transaction: enqueueTx); insert, upsert and get are the statements
	// every turn runs. database/sql prepares a statement again on each pool
	// connection it first runs on, so one is shared safely across them.
	listConfigs, insert, upsert, get *sql.Stmt
}

// FlushInterval is how often task ends that could not be written (a full
// disk) are written again.
const FlushInterval = 2 * time.Second

// noteWrite records how a write went: Ping fails from a failed write until
// the next one succeeds.
func (b *sqliteBackend) noteWrite(err error) {
	b.failMu.Lock()
	defer b.failMu.Unlock()
	if err == nil {
		b.writeErr = nil
		return
	}
	if b.writeErr == nil {
		slog.Default().Warn("task store writes failing; finished turns and pushes are kept in memory and written again",
			"component", "store/sqlite", "error", err.Error())
	}
	b.writeErr = err
}

// openSQLite opens sqlite:///abs/path or sqlite://relative/path.
func openSQLite(ctx context.Context, url string, opt Options) (Backend, error) {
	path := strings.TrimPrefix(url, "sqlite://")
	if path == "" {
		return nil, fmt.Errorf("sqlite URL %q has no path", url)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	b := &sqliteBackend{db: db, path: path, opt: opt, stores: map[string]*sqliteStore{}, stop: make(chan struct{})}
	if err := migrateSQLite(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	if err := b.prepare(ctx); err != nil {
		db.Close()
		return nil, err
	}
	for _, id := range opt.Agents {
		if _, err := b.open(ctx, id); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := b.Cleanup(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if opt.TTL > 0 {
		b.wg.Add(1)
		go b.every(b.opt.CleanupInterval, func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_ = b.Cleanup(ctx) // retried at the next tick
			cancel()
		})
	}
	// The ends of turns whose write failed are written again every
	// FlushInterval, so a full disk that frees up loses nothing.
	b.wg.Add(1)
	go b.every(FlushInterval, func() { b.flush(context.Background()) })
	return b, nil
}

// every runs f every interval until the backend closes.
func (b *sqliteBackend) every(interval time.Duration, f func()) {
	defer b.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			f()
		}
	}
}

// allStores are the agents' stores opened so far.
func (b *sqliteBackend) allStores() []*sqliteStore {
	b.mu.Lock()
	defer b.mu.Unlock()
	stores := make([]*sqliteStore, 0, len(b.stores))
	for _, s := range b.stores {
		stores = append(stores, s)
	}
	return stores
}

// flush writes every unsaved task end once.
func (b *sqliteBackend) flush(ctx context.Context) {
	stores := b.allStores()
	for _, s := range stores {
		s.flushUnsaved(ctx)
	}
}

// Cleanup deletes tasks whose last update is older than the TTL.
func (b *sqliteBackend) Cleanup(ctx context.Context) error {
	if b.opt.TTL <= 0 {
		return nil
	}
	cut := b.opt.Now().Add(-b.opt.TTL).UnixNano()
	stores := b.allStores()
	for _, s := range stores {
		if _, err := b.db.ExecContext(ctx, `DELETE FROM vessel_tasks WHERE agent_id=? AND updated_at < ?`, s.agent, cut); err != nil {
			return fmt.Errorf("delete expired tasks of %s: %w", s.agent, err)
		}
		// Push configs go with their task (a config saved for a task not
		// yet stored is kept until the task is older than the TTL).
		if _, err := b.db.ExecContext(ctx, `DELETE FROM vessel_push_configs WHERE agent_id=? AND created_at < ?
			AND task_id NOT IN (SELECT id FROM vessel_tasks WHERE agent_id=?)`, s.agent, cut, s.agent); err != nil {
			return fmt.Errorf("delete push configs of expired tasks of %s: %w", s.agent, err)
		}
	}
	return nil
}

// Agent implements Backend.
func (b *sqliteBackend) Agent(agentID string) taskstore.Store {
	s, err := b.open(context.Background(), agentID)
	if err != nil {
		return errStore{err}
	}
	return s
}

// Close implements Backend.
func (b *sqliteBackend) Close() error {
	b.once.Do(func() { close(b.stop) })
	b.wg.Wait()
	b.flush(context.Background()) // a last try for ends not yet written
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("close sqlite: %w", err)
	}
	return nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// prepare prepares the backend's statements, once for all agents.
func (b *sqliteBackend) prepare(ctx context.Context) error {
	for _, st := range []struct {
		name string
		stmt **sql.Stmt
		sql  string
	}{
		{"push config listing", &b.listConfigs, sqliteListConfigs},
		{"insert", &b.insert, `INSERT INTO vessel_tasks (agent_id, id, owner, context_id, state, version, updated_at, task) VALUES (?,?,?,?,?,?,?,?)`},
		{"upsert", &b.upsert, `INSERT INTO vessel_tasks (agent_id, id, owner, context_id, state, version, updated_at, task) VALUES (?,?,?,?,?,?,?,?)
		ON CONFLICT(agent_id, id) DO UPDATE SET state=excluded.state, context_id=excluded.context_id, version=excluded.version,
		updated_at=excluded.updated_at, task=excluded.task`},
		{"get", &b.get, GetTaskSQL},
	} {
		var err error
		if *st.stmt, err = b.db.PrepareContext(ctx, st.sql); err != nil {
			return fmt.Errorf("prepare %s: %w", st.name, err)
		}
	}
	return nil
}

// open opens an agent's store and fails its tasks left running.
func (b *sqliteBackend) open(ctx context.Context, agent string) (*sqliteStore, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.stores[agent]; s != nil {
		return s, nil
	}
	s := &sqliteStore{b: b, agent: agent, Live: NewLive()}
	if err := s.failRunning(ctx); err != nil {
		return nil, err
	}
	b.stores[agent] = s
	return s, nil
}

// sqliteStore is one agent's tasks in vessel_tasks. Tasks in flight are kept in memory:
// the disk sees a task when it is created, when its state changes and when
// it ends, so working updates (one per streamed event) never touch it, and
// the state column, which ListTasks filters on, is never stale; a vessel
// restart fails tasks left non-terminal on disk anyway.
type sqliteStore struct {
	b     *sqliteBackend
	agent string

	Live // the tasks running here
}

// flushUnsaved writes the ends that could not be written before.
func (s *sqliteStore) flushUnsaved(ctx context.Context) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for id, lt := range s.Tasks {
		if !lt.Unsaved {
			continue
		}
		var seen PushSeen
		err := s.writeTask(ctx, lt.Owner, lt.Task, lt.Version, lt.Pending, &seen)
		s.b.noteWrite(err)
		if err != nil {
			return // still failing: try again at the next flush
		}
		if lt.Task.Status.State.Terminal() {
			delete(s.Tasks, id)
			continue
		}
		lt.Unsaved, lt.Pending, lt.DiskState = false, nil, lt.Task.Status.State
		lt.Working.Seen(seen)
	}
}

// writeTask writes a stripped task's row and, in the same transaction, the
// deliveries of its pushes to the task's configs; seen tells what it
// found among them.
func (s *sqliteStore) writeTask(ctx context.Context, owner string, st *a2a.Task, v taskstore.TaskVersion, pushes []Push, seen *PushSeen) error {
	raw, err := EncodeTask(st)
	if err != nil {
		return err
	}
	args := []any{s.agent, string(st.ID), owner, st.ContextID, string(st.Status.State), int64(v), s.b.opt.Now().UnixNano(), raw}
	if len(pushes) == 0 || s.b.pushQueue() == nil {
		if _, err := s.b.upsert.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("write task: %w", err)
		}
		return nil
	}
	ctx, cancel := PushTxContext(ctx)
	defer cancel()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.StmtContext(ctx, s.b.upsert).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("write task: %w", err)
		}
		return s.b.enqueueTx(ctx, tx, s.agent, st.ID, pushes, seen)
	})
}

// inTx runs f in a transaction, committed when f succeeds.
func (s *sqliteStore) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.b.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// pushes is the push of an update, if any, when pushes are enqueued.
func (s *sqliteStore) pushes(event a2a.Event, task *a2a.Task) []Push {
	if s.b.pushQueue() == nil {
		return nil
	}
	if p := PushOf(event, task); p != nil {
		return []Push{*p}
	}
	return nil
}

func (s *sqliteStore) failRunning(ctx context.Context) error {
	rows, err := s.b.db.QueryContext(ctx, `SELECT id, version, task FROM vessel_tasks WHERE agent_id=?`+
		` AND state NOT IN ('TASK_STATE_COMPLETED','TASK_STATE_FAILED','TASK_STATE_CANCELED','TASK_STATE_REJECTED')`, s.agent)
	if err != nil {
		return fmt.Errorf("find running tasks of %s: %w", s.agent, err)
	}
	type row struct {
		id  string
		ver int64
		raw []byte
	}
	var todo []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.ver, &r.raw); err != nil {
			rows.Close()
			return fmt.Errorf("read running task of %s: %w", s.agent, err)
		}
		todo = append(todo, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read running tasks of %s: %w", s.agent, err)
	}
	now := s.b.opt.Now().UTC()
	for _, r := range todo {
		var t a2a.Task
		if err := json.Unmarshal(r.raw, &t); err != nil {
			t = a2a.Task{ID: a2a.TaskID(r.id)}
		}
		msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, &t, a2a.NewTextPart(RestartReason))
		t.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Message: msg, Timestamp: &now}
		raw, err := json.Marshal(&t)
		if err != nil {
			return fmt.Errorf("encode failed task: %w", err)
		}
		if err := s.failOne(ctx, r.id, raw, now); err != nil {
			return err
		}
	}
	if len(todo) > 0 {
		slog.Default().Warn("failed tasks left unfinished by the previous run", "component", "store/sqlite",
			"agent", s.agent, "count", len(todo), "reason", RestartReason)
	}
	return nil
}

// failOne stores a task failed at start and, in the same transaction, a
// self-failed mark when the task has push configs (SelfFailures).
func (s *sqliteStore) failOne(ctx context.Context, id string, raw []byte, now time.Time) error {
	tx, err := s.b.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("fail running task %s of %s: %w", id, s.agent, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `UPDATE vessel_tasks SET state=?, version=version+1, updated_at=?, task=? WHERE agent_id=? AND id=?`,
		string(a2a.TaskStateFailed), now.UnixNano(), raw, s.agent, id); err != nil {
		return fmt.Errorf("fail running task %s of %s: %w", id, s.agent, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO vessel_self_failed (agent_id, task_id, created_at)
		SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM vessel_push_configs WHERE agent_id=? AND task_id=?)`,
		s.agent, id, now.UnixNano(), s.agent, id); err != nil {
		return fmt.Errorf("mark failed task %s of %s for push: %w", id, s.agent, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("fail running task %s of %s: %w", id, s.agent, err)
	}
	return nil
}

// Create implements taskstore.Store.
func (s *sqliteStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	owner, err := Owner(ctx)
	if err != nil {
		return 0, err
	}
	ev := *task // the event as the SDK had it, for its push
	pushes := s.pushes(&ev, &ev)
	task.History = UserText(task.History) // keep the SDK's copy small too
	st := s.b.opt.Strip(task)
	raw, err := EncodeTask(st)
	if err != nil {
		return 0, err
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if _, ok := s.Tasks[task.ID]; ok {
		return 0, taskstore.ErrTaskAlreadyExists
	}
	args := []any{s.agent, string(task.ID), owner, task.ContextID, string(task.Status.State), 1, s.b.opt.Now().UnixNano(), raw}
	if len(pushes) == 0 {
		_, err = s.b.insert.ExecContext(ctx, args...)
	} else {
		tctx, cancel := PushTxContext(ctx)
		err = s.inTx(tctx, func(tx *sql.Tx) error {
			if _, err := tx.StmtContext(tctx, s.b.insert).ExecContext(tctx, args...); err != nil {
				return err
			}
			return s.b.enqueueTx(tctx, tx, s.agent, task.ID, pushes, nil)
		})
		cancel()
	}
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return 0, taskstore.ErrTaskAlreadyExists
		}
		s.b.noteWrite(err)
		return 0, fmt.Errorf("insert task: %w", err)
	}
	s.b.noteWrite(nil)
	var lt *LiveTask
	if !task.Status.State.Terminal() {
		lt = &LiveTask{Owner: owner, Version: 1, DiskState: task.Status.State, Task: st}
	}
	s.Start(task.ID, lt, false, s.b.opt.Now())
	return 1, nil
}

// Update implements taskstore.Store.
func (s *sqliteStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	owner, err := Owner(ctx)
	if err != nil {
		return 0, err
	}
	st := s.b.opt.Strip(req.Task) // before Shrink: the answer of a final update must be kept
	pushes := s.pushes(req.Event, st)
	Shrink(req)
	task := req.Task

	s.Mu.Lock()
	defer s.Mu.Unlock()
	if lt := s.Tasks[task.ID]; lt != nil {
		if lt.Owner != owner {
			return 0, a2a.ErrTaskNotFound
		}
		if req.PrevVersion != lt.Version {
			return 0, fmt.Errorf("task %s: version %d, stored %d: %w", task.ID, req.PrevVersion, lt.Version, taskstore.ErrConcurrentModification)
		}
		v := lt.Version + 1
		// Only a new state goes to disk (a task found non-terminal on disk is
		// failed at the next start whatever its last working update was),
		// and an update with pushes, which are stored with it.
		if s.b.pushQueue() != nil {
			// A WORKING update, for a task whose configs want them (never
			// one with a push of its own: those are of other states).
			if p := lt.Working.Next(req.Event, st, s.agent); p != nil {
				pushes = append(pushes, *p)
			}
		}
		pushes = append(lt.Pending, pushes...)
		if state := task.Status.State; state.Terminal() || state != lt.DiskState || len(pushes) > 0 {
			var seen PushSeen
			err := s.writeTask(ctx, owner, st, v, pushes, &seen)
			s.b.noteWrite(err)
			switch {
			case err != nil:
				// A failed write (a full disk) must not cost the turn the
				// end it earned: the task stays here as it is now, served
				// to GetTask, and a finished one, or one with pushes, is
				// written again later, its pushes with it (none was
				// stored: they share the write's transaction). Ping
				// reports the failure meanwhile.
				lt.Pending = pushes
				lt.Unsaved = state.Terminal() || len(pushes) > 0
			case state.Terminal():
				delete(s.Tasks, task.ID)
				return v, nil
			default:
				lt.DiskState, lt.Pending, lt.Unsaved = state, nil, false
				lt.Working.Seen(seen)
			}
		}
		lt.Version, lt.Task = v, st
		return v, nil
	}
	raw, err := EncodeTask(st)
	if err != nil {
		return 0, err
	}
	update := `UPDATE vessel_tasks SET state=?, context_id=?, version=version+1, updated_at=?, task=? WHERE agent_id=? AND id=? AND owner=? AND version=?`
	args := []any{string(task.Status.State), task.ContextID, s.b.opt.Now().UnixNano(), raw, s.agent, string(task.ID), owner, int64(req.PrevVersion)}
	var n int64
	if len(pushes) == 0 {
		res, err := s.b.db.ExecContext(ctx, update, args...)
		if err != nil {
			return 0, fmt.Errorf("update task: %w", err)
		}
		n, _ = res.RowsAffected()
	} else {
		tctx, cancel := PushTxContext(ctx)
		err = s.inTx(tctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(tctx, update, args...)
			if err != nil {
				return err
			}
			if n, _ = res.RowsAffected(); n != 1 {
				return nil // nothing written, nothing to tell
			}
			return s.b.enqueueTx(tctx, tx, s.agent, task.ID, pushes, nil)
		})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("update task: %w", err)
		}
	}
	if n == 1 {
		return req.PrevVersion + 1, nil
	}
	return 0, WhyNoRow(ctx, sqldb.SQL(s.b.db), s.agent, task.ID, owner, req.PrevVersion)
}

// Get implements taskstore.Store.
func (s *sqliteStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	owner, err := Owner(ctx)
	if err != nil {
		return nil, err
	}
	if t, found, err := s.Live.Get(id, owner); found {
		return t, err
	}
	return ScanStoredTask(sqldb.SQLRow(s.b.get.QueryRowContext(ctx, s.agent, string(id), owner)), id)
}

// List implements taskstore.Store: the caller's tasks, newest first. A
// task running here is shown as its latest update (as Get shows it); the
// table's state column, written at every state change, keeps the status
// filter right.
func (s *sqliteStore) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	owner, err := Owner(ctx)
	if err != nil {
		return nil, err
	}
	size := DefaultPageSize
	if req.PageSize > 0 {
		size = min(req.PageSize, MaxPageSize)
	}
	offset := 0
	if req.PageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.PageToken)
		if err != nil {
			return nil, fmt.Errorf("bad page token: %w", a2a.ErrInvalidParams)
		}
		if offset, err = strconv.Atoi(string(b)); err != nil || offset < 0 {
			return nil, fmt.Errorf("bad page token: %w", a2a.ErrInvalidParams)
		}
	}
	where := ` WHERE agent_id=? AND owner=?`
	args := []any{s.agent, owner}
	if req.ContextID != "" {
		where += ` AND context_id=?`
		args = append(args, req.ContextID)
	}
	if req.Status != "" {
		where += ` AND state=?`
		args = append(args, string(req.Status))
	}
	if req.StatusTimestampAfter != nil {
		where += ` AND updated_at>?`
		args = append(args, req.StatusTimestampAfter.UnixNano())
	}
	var total int
	if err := s.b.db.QueryRowContext(ctx, `SELECT count(*) FROM vessel_tasks`+where, args...).Scan(&total); err != nil {
		return nil, fmt.Errorf("count tasks: %w", err)
	}
	rows, err := s.b.db.QueryContext(ctx, `SELECT task FROM vessel_tasks`+where+` ORDER BY updated_at DESC, id LIMIT ? OFFSET ?`,
		append(args, size, offset)...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	defer rows.Close()
	resp := &a2a.ListTasksResponse{Tasks: []*a2a.Task{}, TotalSize: total, PageSize: size}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("read task: %w", err)
		}
		t, err := DecodeTask(raw)
		if err != nil {
			return nil, fmt.Errorf("list tasks: %w", err)
		}
		resp.Tasks = append(resp.Tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	s.Mu.Lock()
	for i, t := range resp.Tasks {
		if lt := s.Tasks[t.ID]; lt != nil && lt.Owner == owner && lt.Task.Status.State == t.Status.State {
			cp := *lt.Task
			resp.Tasks[i] = &cp
		}
	}
	s.Mu.Unlock()
	ShapeListed(resp.Tasks, req)
	if offset+len(resp.Tasks) < total {
		resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset + len(resp.Tasks))))
	}
	return resp, nil
}

// errStore answers every call with the error that kept a store from opening.
type errStore struct{ err error }

func (e errStore) Create(context.Context, *a2a.Task) (taskstore.TaskVersion, error) { return 0, e.err }
func (e errStore) Update(context.Context, *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	return 0, e.err
}
func (e errStore) Get(context.Context, a2a.TaskID) (*taskstore.StoredTask, error) { return nil, e.err }
func (e errStore) List(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, e.err
}
