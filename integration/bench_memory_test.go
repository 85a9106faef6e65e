package integration

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// footprint is one process's (or a sum's) footprint from /proc/<pid>/smaps_rollup, in kB: RSS counts
// every resident page, PSS divides shared pages among their users (what a host provisions for the
// process), anonymous is its own memory (heap, stacks) that no file backs; PSS of files is PSS's
// share in pages a file backs (the executable's code and read-only data, touched as they run).
type footprint struct{ rss, pss, anon, pssFile int }

func (m footprint) plus(o footprint) footprint {
	return footprint{m.rss + o.rss, m.pss + o.pss, m.anon + o.anon, m.pssFile + o.pssFile}
}

func (m footprint) String() string {
	return fmt.Sprintf("PSS %s (RSS %s, anon %s, PSS of files %s)", mb(m.pss), mb(m.rss), mb(m.anon), mb(m.pssFile))
}

// smapsRollup reads pid's memory (zero when it cannot: the process is gone).
func smapsRollup(pid int) footprint {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return footprint{}
	}
	var m footprint
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "Rss:":
			m.rss = n
		case "Pss:":
			m.pss = n
		case "Anonymous:":
			m.anon = n
		case "Pss_File:":
			m.pssFile = n
		}
	}
	return m
}

// pairMemory is the gateway's, temporal-dev's and their sum's memory at one moment (or their peaks).
type pairMemory struct{ gateway, dev, sum footprint }

func pairNow(gw, dev int) pairMemory {
	g, d := smapsRollup(gw), smapsRollup(dev)
	return pairMemory{g, d, g.plus(d)}
}

// settledPair waits until both processes' PSS moved less than 1 % over a second (at most 30 s).
func settledPair(gw, dev int) pairMemory {
	prev, since := pairNow(gw, dev), time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond) // sampling interval, not a wait for an event
		cur := pairNow(gw, dev)
		if diff := cur.sum.pss - prev.sum.pss; diff*100 > prev.sum.pss || -diff*100 > prev.sum.pss {
			prev, since = cur, time.Now()
			continue
		}
		if time.Since(since) >= time.Second {
			return cur
		}
	}
	return pairNow(gw, dev)
}

// peakSampler samples a gateway and its temporal-dev every 100 ms until stopped: each process's
// peak of each figure, and the sum's peaks taken at the same moments.
type peakSampler struct {
	stop chan struct{}
	wg   sync.WaitGroup
	peak pairMemory
}

func samplePeaks(gw, dev int) *peakSampler {
	s := &peakSampler{stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			now := pairNow(gw, dev)
			s.peak = pairMemory{maxMemory(s.peak.gateway, now.gateway), maxMemory(s.peak.dev, now.dev), maxMemory(s.peak.sum, now.sum)}
			select {
			case <-s.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return s
}

// done stops sampling and returns the peaks.
func (s *peakSampler) done() pairMemory {
	close(s.stop)
	s.wg.Wait()
	return s.peak
}

func maxMemory(a, b footprint) footprint {
	return footprint{max(a.rss, b.rss), max(a.pss, b.pss), max(a.anon, b.anon), max(a.pssFile, b.pssFile)}
}

// cpuMS is the CPU time pid has used (user + system), in milliseconds; 0 when it is gone.
func cpuMS(pid int) float64 {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) * 1000 / clockTicks
}

// procStat is /proc/<pid>/stat's fields after the command (nil when it cannot be read): the
// command may hold spaces, so they start after its closing parenthesis.
func procStat(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(data)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux Go runs on.
const clockTicks = 100

// memoryRows compare the pair with the executable-page madvise (the default) and without it,
// idle and at the B4 peak, against the targets on the sum.
func memoryRows(with, without b4Result) []benchRow {
	row := func(what string, a, b footprint, target string, met bool) benchRow {
		m := "-"
		if target != "" {
			m = yes(met)
		}
		return benchRow{"M", what + " (baseline column: without madvise(DONTNEED) of the binaries' start-up pages)", a.String(), b.String(),
			ratio(float64(a.pss), float64(b.pss)), target, m}
	}
	return []benchRow{
		row("memory, idle: gateway", with.idle.gateway, without.idle.gateway, "", false),
		row("… idle: temporal-dev (file database, Web UI)", with.idle.dev, without.idle.dev, "", false),
		row("… idle: sum", with.idle.sum, without.idle.sum, "anon ≤ 60 MB", with.idle.sum.anon <= 60*1024),
		row("… at the B4 peak: gateway", with.peak.gateway, without.peak.gateway, "", false),
		row("… at the B4 peak: temporal-dev", with.peak.dev, without.peak.dev, "", false),
		row("… at the B4 peak: sum (sampled together)", with.peak.sum, without.peak.sum, "PSS ≤ 200 MB", with.peak.sum.pss <= 200*1024),
	}
}
