package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where the numbers came from.
type Machine struct {
	Cores    int    `json:"cores"`
	CPU      string `json:"cpu"`
	MemTotal int64  `json:"mem_total_bytes"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
	Commit   string `json:"commit"`
	Redis    string `json:"redis_server,omitempty"`
}

func (m Machine) String() string {
	s := fmt.Sprintf("%d cores (%s), %.0f GiB, Linux %s, %s", m.Cores, m.CPU, float64(m.MemTotal)/(1<<30),
		m.Kernel, m.Go)
	if m.Redis != "" {
		s += ", " + m.Redis
	}
	return s
}

// describeMachine gathers the machine line. root is the checkout (for the
// commit); redisBin is the redis-server in use, "" without --vs redis.
func describeMachine(root, redisBin string) Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), CPU: "unknown CPU", Commit: gitCommit(root)}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.MemTotal = kb * 1024
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if redisBin != "" {
		m.Redis = redisVersion(redisBin)
	}
	return m
}

// redisVersion is "redis-server 7.0.15" from `redis-server --version`.
func redisVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "redis-server (unknown version)"
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return "redis-server " + v
		}
	}
	return strings.TrimSpace(string(out))
}

// gitCommit is the checkout's short commit, with "+uncommitted changes"
// when the work tree differs from it (read-only git commands).
func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil &&
		len(strings.TrimSpace(string(st))) > 0 {
		commit += " + uncommitted changes"
	}
	return commit
}
