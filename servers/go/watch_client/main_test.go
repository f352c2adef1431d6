package main

import (
	"strings"
	"testing"
)

func TestParseOptionsRefusesBadValues(t *testing.T) {
	good := []string{"--target", "127.0.0.1:1", "--out", "x.json", "--pairs", "10"}
	if _, err := parseOptions(good); err != nil {
		t.Fatalf("good options refused: %v", err)
	}
	for _, bad := range [][]string{
		{"--out", "x.json", "--pairs", "10"},
		append(append([]string{}, good...), "--method", "both"),
		append(append([]string{}, good...), "--clients", "0"),
		{"--target", "127.0.0.1:1", "--out", "x.json"},
	} {
		if _, err := parseOptions(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestPartCheckerAcceptsOneToNInOrder(t *testing.T) {
	c := partChecker{}
	for part := uint32(1); part <= 3; part++ {
		if err := c.next(part, 3, 1); err != nil {
			t.Fatalf("part %d: %v", part, err)
		}
	}
}

func TestPartCheckerRefusesGapsRepeatsAndEmptyParts(t *testing.T) {
	cases := []struct {
		parts [][3]uint32 // part, parts, pairs
		want  string
	}{
		{[][3]uint32{{1, 3, 1}, {3, 3, 1}}, "part 3 of 3 after part 1"},
		{[][3]uint32{{1, 3, 1}, {1, 3, 1}}, "part 1 of 3 after part 1"},
		{[][3]uint32{{1, 3, 1}, {2, 4, 1}}, "part 2 of 4"},
		{[][3]uint32{{1, 3, 0}}, "holds 0 pairs"},
		{[][3]uint32{{2, 1, 1}}, "part 2 of 1"},
	}
	for _, tc := range cases {
		c := partChecker{}
		var err error
		for _, p := range tc.parts {
			if err = c.next(p[0], p[1], int(p[2])); err != nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error with %q", tc.parts, err, tc.want)
		}
	}
}

func TestPercentileByNearestRank(t *testing.T) {
	values := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for p, want := range map[float64]float64{50: 5, 95: 10, 100: 10, 1: 1} {
		if got := percentile(values, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
}

func TestReportCountsFailuresAndSkipsThemInTimes(t *testing.T) {
	o := Options{Pairs: 2}
	watches := []Watch{
		{FirstMs: 1, DoneMs: 10, Pairs: 2, Bytes: 100},
		{FirstMs: 3, DoneMs: 30, Pairs: 2, Bytes: 100},
		{FirstMs: -1, DoneMs: 5, Error: "NOT_FOUND"},
	}
	r := makeReport(o, watches, 0.5)
	got := map[string]float64{}
	for _, m := range r.Metrics {
		got[m.Metric] = m.Value
	}
	if r.Failed != 1 || r.FirstError != "NOT_FOUND" || got["watches_failed"] != 1 || got["watches_ok"] != 2 {
		t.Fatalf("failures miscounted: %+v", r)
	}
	if got["complete_max"] != 30 || got["first_message_p50"] != 1 || got["pairs_received"] != 4 || got["serve_all"] != 0.5 {
		t.Fatalf("wrong summary: %v", got)
	}
}
