package main

import (
	"sort"

	"google.golang.org/protobuf/proto"
)

func protoSize(m proto.Message) int { return proto.Size(m) }

// Metric is one row of client.json's metrics list (the runner's client contract).
type Metric struct {
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
}

// Report is client.json: the summary metrics, then everything raw.
type Report struct {
	Metrics    []Metric `json:"metrics"`
	Options    Options  `json:"options"`
	Failed     int      `json:"failed"`
	FirstError string   `json:"first_error,omitempty"`
	Watches    []Watch  `json:"watches"`
}

// percentile of sorted values, by the nearest rank; NaN-free: callers pass at least one value.
func percentile(sorted []float64, p float64) float64 {
	rank := int(p/100*float64(len(sorted))+0.5) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func makeReport(o Options, watches []Watch, servedS float64) Report {
	r := Report{Options: o, Watches: watches}
	var first, done []float64
	pairs, bytes := 0, 0
	for _, w := range watches {
		if w.Error != "" {
			r.Failed++
			if r.FirstError == "" {
				r.FirstError = w.Error
			}
			continue
		}
		first = append(first, w.FirstMs)
		done = append(done, w.DoneMs)
		pairs += w.Pairs
		bytes += w.Bytes
	}
	add := func(metric string, value float64, unit string) {
		r.Metrics = append(r.Metrics, Metric{metric, value, unit})
	}
	add("watches", float64(len(watches)), "watches")
	add("watches_ok", float64(len(watches)-r.Failed), "watches")
	add("watches_failed", float64(r.Failed), "watches")
	add("serve_all", servedS, "s")
	add("pairs_received", float64(pairs), "pairs")
	add("bytes_received", float64(bytes)/(1<<20), "MiB")
	if len(first) > 0 {
		sort.Float64s(first)
		sort.Float64s(done)
		for _, p := range []float64{50, 95, 100} {
			name := map[float64]string{50: "p50", 95: "p95", 100: "max"}[p]
			add("first_message_"+name, percentile(first, p), "ms")
			add("complete_"+name, percentile(done, p), "ms")
		}
	}
	return r
}
