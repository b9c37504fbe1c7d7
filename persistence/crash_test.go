package persistence

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const (
	crashDirEnv   = "REVOLVER_CRASH_DIR"
	crashFsyncEnv = "REVOLVER_CRASH_FSYNC"
	crashWriters  = 4
)

// TestMain runs the package's tests, or, in the process TestCrash starts
// (crashDirEnv set), only crashChild: a child that is a test of its own
// would skip, and be reported as skipped, in every other run.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir)
	}
	os.Exit(m.Run())
}

// crashChild is the process TestCrash kills: writers change keys, wait on
// the barrier as the server does before replying, and print each
// acknowledged "writer seq" line. It never returns.
func crashChild(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	policy, err := ParseFsync(os.Getenv(crashFsyncEnv))
	if err != nil {
		fail(err)
	}
	s, err := Open(Options{Dir: dir, Fsync: policy, Logger: quiet})
	if err != nil {
		fail(err)
	}
	var engineLock, out sync.Mutex
	for w := range crashWriters {
		go func() {
			for i := 0; ; i++ {
				key := fmt.Appendf(nil, "w%d-%d", w, i)
				engineLock.Lock()
				s.PutValue(0, key, 1, key)
				s.PutExpire(0, key, int64(i))
				if i > 0 && i%10 == 0 {
					s.DeleteKey(0, fmt.Appendf(nil, "w%d-%d", w, i-10), false)
				}
				ch := s.Barrier()
				engineLock.Unlock()
				if ch != nil {
					<-ch
				}
				out.Lock()
				fmt.Printf("%d %d\n", w, i)
				out.Unlock()
			}
		}()
	}
	time.Sleep(20 * time.Second) // the parent kills us long before
	fail(errors.New("not killed"))
}

func TestCrash(t *testing.T) {
	for _, policy := range []Fsync{FsyncAlways, FsyncEverySec} {
		t.Run(policy.String(), func(t *testing.T) { crashOnce(t, policy) })
	}
}

func crashOnce(t *testing.T, policy Fsync) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0]) // TestMain runs crashChild
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashFsyncEnv+"="+policy.String())
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := make([]int, crashWriters)
	for i := range acked {
		acked[i] = -1
	}
	var lines atomic.Int64
	read := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 2 {
				read <- fmt.Errorf("child printed %q", sc.Text())
				return
			}
			w, err1 := strconv.Atoi(f[0])
			i, err2 := strconv.Atoi(f[1])
			if err1 != nil || err2 != nil || w < 0 || w >= crashWriters {
				read <- fmt.Errorf("child printed %q", sc.Text())
				return
			}
			acked[w] = max(acked[w], i)
			lines.Add(1)
		}
		read <- sc.Err()
	}()
	time.Sleep(300 * time.Millisecond)
	// A slow machine may not have acknowledged anything yet.
	for deadline := time.Now().Add(10 * time.Second); lines.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if lines.Load() == 0 {
		t.Fatal("the child acknowledged nothing before it was killed")
	}

	s := openTest(t, dir, FsyncNo)
	defer s.Close()
	got := map[string]string{}
	for _, l := range load(t, s) {
		f := strings.Fields(l)
		k, _ := strconv.Unquote(f[2])
		got[k] += f[0] + " "
	}
	for w, last := range acked {
		for i := 0; i <= last; i++ {
			k := fmt.Sprintf("w%d-%d", w, i)
			switch {
			case i%10 == 0 && i+10 <= last:
				// Its deletion was acknowledged (with write i+10).
				if got[k] != "" {
					t.Errorf("key %s: acknowledged deletion lost, found %q", k, got[k])
				}
			case i%10 != 0 || i+10 > last+1:
				if got[k] != "value expire " {
					t.Errorf("key %s: acknowledged write lost, found %q (writer %d acknowledged up to %d)", k, got[k], w, last)
				}
			}
		}
	}
	t.Logf("%s: %d acknowledged writes survived SIGKILL", policy, lines.Load())
}
