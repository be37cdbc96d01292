package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"github.com/netagent/netagent/internal/statefile"
)

// LockFile is the name of a target's writer lock in its state directory.
const LockFile = "lock"

// Holder says who holds a target's lock: the holder writes it into the
// lock file once it has the lock, and empties the file when it lets go.
// Its content is only believed while the lock is held (an flock, which the
// kernel releases when its holder dies, however it dies).
type Holder struct {
	PID     int    `json:"pid"`
	Command string `json:"command"` // "apply", "run"
	// Socket is the daemon's API, for a daemon ("run").
	Socket string    `json:"socket,omitempty"`
	Since  time.Time `json:"since"`
}

// Daemon reports whether the holder is a daemon serving its socket API.
func (h Holder) Daemon() bool { return h.Socket != "" }

// String names the holder: "netagent run (pid 42, socket /run/netagent/netagent.sock)".
func (h Holder) String() string {
	if h.PID == 0 {
		return "an unknown netagent process"
	}
	s := fmt.Sprintf("netagent %s (pid %d", h.Command, h.PID)
	if h.Socket != "" {
		s += ", socket " + h.Socket
	}
	if !h.Since.IsZero() {
		s += ", since " + h.Since.UTC().Format(time.RFC3339)
	}
	return s + ")"
}

// Lock is a target's writer lock, held: every writer of a target (a
// one-shot apply for its whole run, the daemon for its lifetime) holds it,
// so that two never interleave their changes or their records (sysctl
// originals).
type Lock struct {
	fd   int
	path string
}

// TryLock takes the lock of the target whose state directory is stateDir,
// if it is free. When it is not, it returns a nil Lock and who holds it.
func TryLock(stateDir string, me Holder) (*Lock, *Holder, error) {
	fd, path, err := openLock(stateDir)
	if err != nil {
		return nil, nil, err
	}
	if err := flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			syscall.Close(fd)
			return nil, nil, fmt.Errorf("locking %s: %w", path, err)
		}
		h := readHolder(fd)
		syscall.Close(fd)
		return nil, &h, nil
	}
	return held(fd, path, me)
}

// lockPoll is how often WaitLock tries the lock again.
const lockPoll = 20 * time.Millisecond

// WaitLock waits for the lock until ctx ends, or until a daemon holds it
// (a daemon holds it for its life: there is no point waiting); then it
// fails with a *LockedError (errors.Is ErrLocked) naming the holder. It
// tries the lock every lockPoll rather than blocking in flock(2), which
// cannot be cancelled: an abandoned blocking waiter would take the lock
// later, behind everyone's back, if only for a moment.
func WaitLock(ctx context.Context, stateDir string, me Holder) (*Lock, error) {
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		lk, h, err := TryLock(stateDir, me)
		switch {
		case err != nil || lk != nil:
			return lk, err
		case h.Daemon():
			return nil, &LockedError{Holder: *h, Path: filepath.Join(stateDir, LockFile), Cause: errors.New("a daemon serves it")}
		}
		select {
		case <-ctx.Done():
			return nil, &LockedError{Holder: *h, Path: filepath.Join(stateDir, LockFile), Cause: context.Cause(ctx)}
		case <-tick.C:
		}
	}
}

// LockedError is a lock another netagent holds: who, and why the wait
// for it ended.
type LockedError struct {
	Holder Holder
	Path   string
	Cause  error
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%v: %s holds %s (%v)", ErrLocked, e.Holder, e.Path, e.Cause)
}

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// HolderOf returns who holds the target's lock, or nil when no one does.
// It never waits and takes no lock that a writer could wait for.
func HolderOf(stateDir string) (*Holder, error) {
	path := filepath.Join(stateDir, LockFile)
	if err := statefile.CheckDir(stateDir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	fd, err := statefile.OpenFile(stateDir, LockFile, syscall.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer syscall.Close(fd)
	// A shared lock that is free at once says that no writer holds it;
	// held for a moment only.
	if err := flock(fd, syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		return nil, nil
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("probing %s: %w", path, err)
	}
	h := readHolder(fd)
	return &h, nil
}

// Release empties the lock file and lets go of the lock.
func (l *Lock) Release() {
	if l == nil || l.fd < 0 {
		return
	}
	syscall.Ftruncate(l.fd, 0)
	syscall.Close(l.fd)
	l.fd = -1
}

// openLock opens the lock file of the state directory, which it makes if
// needed and checks (statefile.PrepareDir: a directory others can change
// is refused), without following a link planted at its name.
func openLock(stateDir string) (int, string, error) {
	if err := statefile.PrepareDir(stateDir); err != nil {
		return -1, "", err
	}
	path := filepath.Join(stateDir, LockFile)
	fd, err := statefile.OpenFile(stateDir, LockFile, syscall.O_RDWR|syscall.O_CREAT)
	if err != nil {
		return -1, "", fmt.Errorf("opening %s: %w", path, err)
	}
	return fd, path, nil
}

// held writes me into the lock file of a lock just taken.
func held(fd int, path string, me Holder) (*Lock, *Holder, error) {
	data, _ := json.Marshal(me)
	if err := syscall.Ftruncate(fd, 0); err != nil {
		syscall.Close(fd)
		return nil, nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := syscall.Pwrite(fd, append(data, '\n'), 0); err != nil {
		syscall.Close(fd)
		return nil, nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &Lock{fd: fd, path: path}, nil, nil
}

// readHolder reads who holds the lock from the lock file open at fd; the
// zero Holder when the file says nothing (yet), or names a process that is
// gone: the lock is then held for a moment by a reader's probe (HolderOf)
// or a new holder that has not written itself yet, and the content is a
// dead holder's.
func readHolder(fd int) Holder {
	var h Holder
	buf := make([]byte, maxHolder)
	n, err := syscall.Pread(fd, buf, 0)
	if err != nil || json.Unmarshal(buf[:max(n, 0)], &h) != nil {
		return Holder{}
	}
	if h.PID <= 0 || errors.Is(syscall.Kill(h.PID, 0), syscall.ESRCH) {
		return Holder{}
	}
	return h
}

// maxHolder bounds what is read of a lock file (a holder is about 150
// bytes).
const maxHolder = 4096

// flock is flock(2), retried when a signal interrupts it.
func flock(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
