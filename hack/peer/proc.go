package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat
// (100 on every Linux architecture Go supports).
const clockTicks = 100

// proc is a process of a system under test.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	// oneShot: the process ends by itself (verdict scan), which is no
	// failure.
	oneShot bool
	endedAt time.Time // set before done is closed
	// hwm is the largest VmHWM read while the process ran (sampled every
	// hwmInterval): the peak of one that exited. Its rusage cannot tell:
	// exec keeps, in ru_maxrss, the peak of the memory it replaces, which
	// for a child of this process (started with CLONE_VM) is this
	// process's peak, so a scan started after the harness read every
	// report of the previous system reported the harness's peak.
	hwm atomic.Int64
}

// hwmInterval is how often the peak resident set of a running process is
// read.
const hwmInterval = 100 * time.Millisecond

// start runs bin with args under taskset -c cpus with GOMAXPROCS set,
// its output in dir/name.log, until r's cleanups stop it.
func start(r *runner, dir, name, cpus string, gomaxprocs int, env []string, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("taskset", append([]string{"-c", cpus, bin}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if gomaxprocs > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(gomaxprocs))
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); p.endedAt = time.Now(); f.Close(); close(p.done) }()
	go func() {
		t := time.NewTicker(hwmInterval)
		defer t.Stop()
		for {
			if v, err := p.peakRSS(); err == nil && v > p.hwm.Load() {
				p.hwm.Store(v)
			}
			select {
			case <-t.C:
			case <-p.done:
				return
			}
		}
	}()
	r.Cleanup(p.stop)
	return p, nil
}

// stop sends SIGTERM, then SIGKILL after 10 s.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// cpuSeconds is the user + system CPU time of the process so far
// (taskset execs the binary, so the pid is the binary's).
func (p *proc) cpuSeconds() (float64, error) { return pidCPUSeconds(p.cmd.Process.Pid) }

// pidCPUSeconds is the user + system CPU time of a process so far.
func pidCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return float64(ut+st) / clockTicks, nil
}

// peakRSS is VmHWM, the peak resident set since the start or the last
// resetPeak, in bytes.
func (p *proc) peakRSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", p.cmd.Process.Pid)
}

// resetPeak sets VmHWM back to the current resident set.
func (p *proc) resetPeak() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0)
}

// system is one side of the comparison: its processes, measured together.
type system struct {
	name  string
	procs []*proc
	url   string // the webhook's base URL, https://127.0.0.1:PORT
}

func (s *system) cpuSeconds() (float64, error) { return sumProcs(s.procs, (*proc).cpuSeconds) }

func (s *system) peakRSS() (int64, error) { return sumProcs(s.procs, (*proc).peakRSS) }

// sumProcs is the sum of measure over procs; the first error stops it.
func sumProcs[T int64 | float64](procs []*proc, measure func(*proc) (T, error)) (T, error) {
	var sum T
	for _, p := range procs {
		c, err := measure(p)
		if err != nil {
			return 0, err
		}
		sum += c
	}
	return sum, nil
}

func (s *system) resetPeak() error {
	for _, p := range s.procs {
		if err := p.resetPeak(); err != nil {
			return err
		}
	}
	return nil
}

// exited reports whether a process of the system has exited.
func (s *system) exited() bool { return s.exitedName() != "" }

// exitedName is the name of the first process that exited, or "".
func (s *system) exitedName() string {
	for _, p := range s.procs {
		if p.exited() {
			return p.name
		}
	}
	return ""
}

func (s *system) stop() {
	for _, p := range s.procs {
		p.stop()
	}
}

// tailLog returns the last n lines of a log.
func tailLog(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
