package bench

import (
	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/procstat"
)

// ReadThreads reads a process's threads now (internal/procstat).
func ReadThreads(role string, pid int) artifacts.ProcessThreads {
	p := artifacts.ProcessThreads{Role: role, Pid: pid, Polls: 1}
	threads, err := procstat.Threads(pid)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	for _, th := range threads {
		p.Threads = append(p.Threads, artifacts.ThreadReading{TID: th.TID, AllowedCPUs: affinity.FormatCPUList(th.AllowedCPUs),
			LastCPU: th.LastCPU, CPUS: th.CPU.Seconds(), State: th.State,
			Voluntary: th.VoluntarySwitches, Nonvoluntary: th.NonvoluntarySwitches})
	}
	return p
}
