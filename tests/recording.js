// recording.js - a memtap recording (version 3, -i SECONDS --record)
// read here, apart from memtap's reader, for the browser tests to hold
// the timeline page against: read(TEXT) returns
//
//   samples[k]:   { pid, comm, event, functions (the frames' names, leaf
//                 first, those without one left out) }, those of
//                 one stack (same pid, comm, event and locations) merged,
//                 in order of first appearance, as the report numbers them
//   intervals[i]: { end, captured, rss, size (summed over the processes),
//                   changes: Map sample -> { acquired, released, held } }
//   total(a, b, weight): the flame graph's total of intervals a..b
//                 (0-based, inclusive): the sum over stacks of their
//                 acquired, released or net bytes there, the stacks whose
//                 sum is not positive left out
//   trend(k):     stack k's held bytes over the intervals (acquired -
//                 released so far without held figures): { sample, slope
//                 (least squares over the interval index), perHour,
//                 grew (intervals with more than the one before, the
//                 first against 0), end, gaveBack (largest fall from a
//                 high) }, or null unless the slope and grew are positive
//   trends():     trend(k) of every stack that has one
"use strict";

function read(text) {
	const rec = JSON.parse(text);
	const keys = new Map(), samples = [], of = [];

	for (const s of rec.samples) {
		const key = JSON.stringify([s.pid, s.comm, s.event, s.locations || s.frames]);
		if (!keys.has(key)) {
			keys.set(key, samples.length);
			samples.push({ pid: s.pid, comm: s.comm, event: s.event,
				       functions: (s.frames || []).map((f) => f.function).filter((f) => f) });
		}
		of.push(keys.get(key));
	}
	const intervals = (rec.intervals || []).map((iv) => {
		const changes = new Map();
		for (const [s, , acquired, released, held] of iv.changes) {
			const c = changes.get(of[s]) || { acquired: 0, released: 0, held: 0 };
			c.acquired += acquired;
			c.released += released;
			c.held = held;
			changes.set(of[s], c);
		}
		return { end: iv.end_nanos, captured: iv.captured, changes,
			 rss: iv.vm.reduce((a, v) => a + v[1], 0), size: iv.vm.reduce((a, v) => a + v[2], 0) };
	});
	const n = intervals.length, held = !!rec.intervals_held;

	function total(a, b, weight) {
		const w = new Array(samples.length).fill(0);
		for (let i = a; i <= b; i++)
			for (const [s, c] of intervals[i].changes)
				w[s] += weight === "acquired" ? c.acquired : weight === "released" ? c.released :
					c.acquired - c.released;
		return w.reduce((sum, v) => sum + (v > 0 ? v : 0), 0);
	}

	const series = samples.map(() => new Array(n).fill(0));
	const level = new Array(samples.length).fill(0);
	intervals.forEach((iv, i) => {
		for (const [s, c] of iv.changes)
			level[s] = held ? c.held : level[s] + c.acquired - c.released;
		level.forEach((v, s) => { series[s][i] = v; });
	});
	const span = n > 1 ? (intervals[n - 1].end - intervals[0].end) / (n - 1) : n ? intervals[0].end : 0;

	function trend(k) {
		const y = series[k];
		if (!y || n === 0)
			return null;
		let mx = 0, my = 0, sxy = 0, sxx = 0, grew = 0, high = 0, gaveBack = 0, prev = 0;
		for (let i = 0; i < n; i++) {
			mx += i;
			my += y[i];
			if (y[i] > prev)
				grew++;
			high = Math.max(high, y[i]);
			gaveBack = Math.max(gaveBack, high - y[i]);
			prev = y[i];
		}
		mx /= n;
		my /= n;
		for (let i = 0; i < n; i++) {
			sxy += (i - mx) * (y[i] - my);
			sxx += (i - mx) * (i - mx);
		}
		const slope = sxx > 0 ? sxy / sxx : 0;
		if (!(slope > 0) || !grew)
			return null;
		return { sample: k, slope, perHour: span > 0 ? slope * 3600e9 / span : 0, grew,
			 end: Math.max(y[n - 1], 0), gaveBack };
	}

	return { samples, intervals, total, trend,
		 trends: () => samples.map((s, k) => trend(k)).filter((t) => t) };
}

module.exports = { read };
