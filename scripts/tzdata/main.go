// Command tzdata prints, for each zone name given on standard input (one per line), its UTC offsets from
// 1970 until the start of the year given as its argument, as Go's time package computes them (the reference
// controller's own arithmetic), as JSON:
// {"<zone>": [<offset in seconds on 1970-01-01>, <transition unix seconds>, <new offset>, ...]}.
// The zone data is whatever time.LoadLocation reads: run it with ZONEINFO set to Go's lib/time/zoneinfo.zip
// so that the system's tz database, if any, is not the one read (scripts/zoneinfo.ts does).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tzdata UNTIL-YEAR < names")
		os.Exit(2)
	}
	year, err := strconv.Atoi(os.Args[1])
	if err != nil || year <= 1970 {
		fmt.Fprintln(os.Stderr, "tzdata: UNTIL-YEAR must be a year after 1970")
		os.Exit(2)
	}
	from := time.Date(1970, time.January, 1, 0, 0, 0, 0, time.UTC)
	until := time.Date(year, time.January, 1, 0, 0, 0, 0, time.UTC)
	out := map[string][]int64{}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		name := in.Text()
		if name == "" {
			continue
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "tzdata: %s: %v\n", name, err)
			os.Exit(1)
		}
		_, offset := from.In(loc).Zone()
		row := []int64{int64(offset)}
		for t := from; t.Before(until); {
			_, end := t.In(loc).ZoneBounds()
			if end.IsZero() || !end.Before(until) {
				break
			}
			if !end.After(t) {
				// Near a year's end, a zone ruled by its POSIX TZ string (after the file's last transition)
				// can report a boundary equal to t for hours (Africa/Cairo, whose rule ends DST at 24:00,
				// in Go 1.26): step an hour, finding to the second any change of offset within it.
				end = t.Add(time.Hour)
				if _, o := end.In(loc).Zone(); o != offset {
					end = firstChange(loc, t, end, offset)
				}
			}
			t = end
			if _, next := t.In(loc).Zone(); next != offset {
				row = append(row, t.Unix(), int64(next))
				offset = next
			}
		}
		out[name] = row
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "tzdata:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "tzdata:", err)
		os.Exit(1)
	}
}

// firstChange is the first second in (from, to] whose offset is not offset, given that to's is not.
func firstChange(loc *time.Location, from, to time.Time, offset int) time.Time {
	for to.Sub(from) > time.Second {
		mid := from.Add(to.Sub(from) / 2).Truncate(time.Second)
		if _, o := mid.In(loc).Zone(); o != offset {
			to = mid
		} else {
			from = mid
		}
	}
	return to
}
