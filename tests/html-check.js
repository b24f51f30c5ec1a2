// html-check.js - a timeline page (memtap report -F html) held against
// the recording it was written from, in a headless chromium (through
// playwright-core).  Run by tests/html-trend-browser.test and by
// bench/redis.sh --html-check:
//
//   node html-check.js MODULES_DIR CHROMIUM PROFILE_DIR REC.json PAGE.html SUSPECTS.txt [EXPECT...]
//
// Every figure is computed here from REC.json alone (recording.js), not
// by memtap, and compared with what the page holds and draws:
//  - its data: each interval's end, captured bytes, VmRSS and VmSize
//    (summed over the processes), and the points of the memory chart's
//    three series, read back from the drawing;
//  - the suspects' table: each row's slope, bytes per hour, intervals
//    in which it grew, what it holds at the end and gave back, as held
//    and as shown; which stacks are listed, in order; the count of
//    suspects the same as SUSPECTS.txt's (memtap report --suspects);
//  - the flame graph's total for the whole run and for selected ranges
//    (one of them dragged with the mouse), acquired, released and net;
//  - no script or console error, no network request.
// EXPECT: what the recording's target is known to have done, FUNCTION
// being a frame of the stacks meant: suspect=FUNCTION (a suspect),
// quiet=FUNCTION (listed as not a suspect, or not listed),
// acquired=FUNCTION:BYTES (the whole run's bytes acquired through it,
// as the page's search matches it).
// Prints one line per check; exit 0 when all passed, else 1.
"use strict";

const fs = require("fs");
const path = require("path");
const [modules, chromiumPath, profileDir, recFile, pageFile, suspectsFile, ...expects] =
	process.argv.slice(2);
const { check, launch, run, watch } = require("./browser-lib.js");
const R = require("./recording.js").read(fs.readFileSync(recFile, "utf8"));
const N = R.intervals.length;

// the page's human(): bytes in KiB, MiB, ... with two decimals
function human(n) {
	const units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
	let v = Math.abs(n), u = -1;
	if (v < 1024)
		return n + " bytes";
	while (v >= 1024 && u < 5) { v /= 1024; u++; }
	return (n < 0 ? "-" : "") + v.toFixed(2) + " " + units[u];
}

// a and b equal but for the last digit printed (digits after the point)
function near(a, b, digits) {
	return Math.abs(a - b) <= 0.51 * Math.pow(10, -digits) + 1e-9 * Math.abs(b);
}

async function checkData(page, D) {
	check(D.intervals.length === N, N + " intervals in the page (" + D.intervals.length + ")");
	check(D.stacks.length === R.samples.length,
	      R.samples.length + " stacks in the page (" + D.stacks.length + ")");
	let bad = [];
	R.samples.forEach((s, k) => {
		// the recording's frames, root first, in the page's stack in order
		const names = (D.stacks[k] || "").split(";");
		let at = 0;
		for (const f of s.functions.slice().reverse()) {
			while (at < names.length && names[at] !== f)
				at++;
			if (at++ >= names.length) {
				bad.push(k);
				break;
			}
		}
	});
	check(bad.length === 0, "each stack has its recording's frames" +
	      (bad.length ? ": not " + bad.slice(0, 5).join(", ") : ""));
	bad = [];
	R.intervals.forEach((iv, i) => {
		const d = D.intervals[i] || [];
		if (d[0] !== iv.end || d[1] !== iv.captured || d[2] !== iv.rss || d[3] !== iv.size)
			bad.push((i + 1) + ": page " + d.slice(0, 4).join(",") + ", recording " +
				 [iv.end, iv.captured, iv.rss, iv.size].join(","));
	});
	check(bad.length === 0, "each interval's end, captured, VmRSS and VmSize" +
	      (bad.length ? ": " + bad.slice(0, 3).join("; ") : ""));

	// the memory chart: each series' points read back into bytes
	const lines = await page.evaluate(() => {
		const svg = document.getElementById("memory"), vb = svg.viewBox.baseVal;
		return { h: vb.height, lines: Array.from(svg.querySelectorAll("polyline.series")).map((p) =>
			({ name: p.getAttribute("data-name"), points: p.getAttribute("points") })) };
	});
	const want = { "VmRSS": R.intervals.map((iv) => iv.rss), "VmSize": R.intervals.map((iv) => iv.size),
		       "captured": R.intervals.map((iv) => iv.captured) };
	const max = Math.max(0, ...want.VmRSS, ...want.VmSize, ...want.captured) || 1;
	const top = 24, bottom = lines.h - 22, T = N ? R.intervals[N - 1].end : 1;
	const W = 1200, PAD_L = 80, PAD_R = 20;
	for (const name of Object.keys(want)) {
		const l = lines.lines.find((x) => x.name.split(" ")[0] === name);
		bad = [];
		const pts = l ? l.points.split(" ").map((p) => p.split(",").map(Number)) : [];
		want[name].forEach((v, i) => {
			const x = PAD_L + (W - PAD_L - PAD_R) * R.intervals[i].end / T;
			const p = pts[i] || [NaN, NaN], got = (bottom - p[1]) * max / (bottom - top);
			// drawn to 0.1 unit of the 1200-wide box
			if (!(Math.abs(p[0] - x) <= 0.051 && Math.abs(got - v) <= 0.051 * max / (bottom - top)))
				bad.push((i + 1) + ": drawn " + Math.round(got) + ", recording " + v);
		});
		check(l && pts.length === N && bad.length === 0, "the memory chart's " + name + " series" +
		      (bad.length ? ": " + bad.slice(0, 3).join("; ") : ""));
	}
}

async function checkSuspects(page, D) {
	const rose = R.trends();		// the stacks whose held bytes rose
	const listed = D.suspects.map((r) => r[0]);
	check(D.suspects.length === Math.min(rose.length, 25),
	      D.suspects.length + " stacks listed, " + rose.length + " rose in the recording");
	let bad = [];
	D.suspects.forEach((r, k) => {
		const t = R.trend(r[0]);
		if (!t || !near(r[2], t.slope, 3) || !near(r[3], t.perHour, 1) || r[4] !== t.grew ||
		    r[5] !== t.end || r[6] !== t.gaveBack)
			bad.push("row " + (k + 1) + ": page " + r.slice(0, 7).join(",") + ", recording " +
				 (t ? [r[0], "-", t.slope, t.perHour, t.grew, t.end, t.gaveBack].join(",") : "none"));
		else if (k && (r[1] > D.suspects[k - 1][1] ||
			       (r[1] === D.suspects[k - 1][1] && r[2] > D.suspects[k - 1][2])))
			bad.push("row " + (k + 1) + " out of order");
	});
	check(bad.length === 0, "each listed stack's slope, per hour, grew, holds, gave back" +
	      (bad.length ? ": " + bad.slice(0, 3).join("; ") : ""));
	// the ones left out rose less than the last listed one
	if (D.suspects.length === 25) {
		const last = R.trend(listed[24]).slope;
		check(rose.filter((t) => !listed.includes(t.sample) && t.slope > last).length === 0 ||
		      D.suspects[24][1] === 1, "no stack left out rose faster than the last listed");
	}
	// the table as shown
	const rows = await page.evaluate(() => Array.from(document.querySelectorAll("#suspects tr")).slice(1)
		.map((tr) => Array.from(tr.children).map((td) => td.textContent)
		     .concat([tr.querySelector("a").getAttribute("data-sample")])));
	bad = [];
	rows.forEach((c, k) => {
		const t = R.trend(Number(c[8])), r = D.suspects[k];
		const want = [String(k + 1), r[1] ? "yes" : "no", (t.slope >= 0 ? "+" : "") + Math.round(t.slope),
			      null, t.grew + " of " + N, human(t.end), human(t.gaveBack)];
		want.forEach((w, j) => {
			if (w !== null && c[j] !== w)
				bad.push("row " + (k + 1) + " column " + (j + 1) + ": '" + c[j] + "', not '" + w + "'");
		});
		if (!c[3].startsWith(human(Math.round(r[3]))))
			bad.push("row " + (k + 1) + " per hour: " + c[3]);
		if (Number(c[8]) !== r[0])
			bad.push("row " + (k + 1) + " links stack " + c[8]);
	});
	check(rows.length === D.suspects.length && bad.length === 0, "the suspects' table shows them" +
	      (bad.length ? ": " + bad.slice(0, 3).join("; ") : ""));
	// the count of suspects, as memtap report --suspects tells it
	const text = fs.readFileSync(suspectsFile, "utf8");
	const m = /^Leak suspects: (\d+) stack/m.exec(text), o = /^ {2}\((\d+) other stack/m.exec(text);
	const yes = D.suspects.filter((r) => r[1]).length;
	const nsus = m ? Number(m[1]) : -1, others = o ? Number(o[1]) : 0;
	check(nsus === Math.min(yes, 25) || (yes === 25 && nsus >= 25),
	      yes + " suspects in the page, " + nsus + " in memtap report --suspects");
	check(nsus + others === rose.length, "memtap report --suspects: " + (nsus + others) + " stacks rose");
}

// the page's flame graph total of intervals a..b (0-based) by weight w
async function pageTotal(page, a, b, w) {
	return page.evaluate(([a, b, w]) => {
		window.memtap.weigh(w);
		window.memtap.select(a, b);
		return [window.memtap.total(), document.getElementById("total").textContent];
	}, [a, b, w]);
}

async function checkFlame(page) {
	const ranges = [[0, N - 1], [0, Math.floor((N - 1) / 2)], [Math.floor(N / 2), N - 1],
			[Math.floor(N / 3), Math.floor(2 * N / 3)], [N - 1, N - 1], [0, 0]];
	let bad = [];
	for (const [a, b] of ranges)
		for (const w of ["acquired", "released", "net"]) {
			const want = R.total(a, b, w), [got, shown] = await pageTotal(page, a, b, w);
			if (got !== want || !shown.includes("(" + want + " bytes)"))
				bad.push((a + 1) + "-" + (b + 1) + " " + w + ": " + got + " bytes, recording " + want);
		}
	check(bad.length === 0, "flame graph totals of " + ranges.length + " ranges by 3 weights" +
	      (bad.length ? ": " + bad.slice(0, 3).join("; ") : ""));
	await pageTotal(page, 0, N - 1, "acquired");
	await page.selectOption("#weight", "acquired");

	// a drag on the memory chart over the middle third
	const a = Math.floor(N / 3), b = Math.max(a, Math.floor(2 * N / 3) - 1);
	const box = await page.locator("#memory").boundingBox(), y = box.y + box.height / 2;
	const T = R.intervals[N - 1].end, W = 1200, PAD_L = 80, PAD_R = 20;
	const x = (i) => box.x + (PAD_L + (W - PAD_L - PAD_R) * (R.intervals[i].end -
		(R.intervals[i].end - (i ? R.intervals[i - 1].end : 0)) / 2) / T) * box.width / W;
	await page.mouse.move(x(a), y);
	await page.mouse.down();
	await page.mouse.move((x(a) + x(b)) / 2, y);
	await page.mouse.move(x(b), y);
	await page.mouse.up();
	const got = await page.evaluate(() => window.memtap.total());
	const range = await page.textContent("#range");
	// a pixel may hold several intervals of a long run: the range shown is the one weighed
	const m = /^Intervals (\d+) to (\d+) of/.exec(range);
	check(m && Math.abs(m[1] - 1 - a) <= 1 && Math.abs(m[2] - 1 - b) <= 1 &&
	      got === R.total(m[1] - 1, m[2] - 1, "acquired"),
	      "dragged " + range + ": " + got + " bytes acquired, recording " +
	      (m ? R.total(m[1] - 1, m[2] - 1, "acquired") : "?"));
	await page.click("#whole");
}

async function checkExpected(page, D) {
	for (const e of expects) {
		const m = /^(suspect|quiet|acquired)=([^:]+)(?::(\d+))?$/.exec(e);
		if (!m) {
			check(false, "expectation " + e);
			continue;
		}
		const fn = m[2], stacks = D.stacks.map((s, k) => s.split(";").includes(fn) ? k : -1)
			.filter((k) => k >= 0);
		if (m[1] === "acquired") {
			const got = await page.evaluate((re) => { window.memtap.select(0, 1e9); return window.memtap.search(re); },
							"^" + fn + "$");
			await page.evaluate(() => window.memtap.search(""));
			check(got === Number(m[3]), fn + " acquired " + got + " bytes, known " + m[3]);
			continue;
		}
		const rows = D.suspects.filter((r) => stacks.includes(r[0]));
		if (m[1] === "suspect")
			check(rows.length > 0 && rows.every((r) => r[1] === 1),
			      fn + " a suspect (" + rows.map((r) => r[1] ? "yes" : "no").join(",") + ")");
		else
			check(stacks.length > 0 && rows.every((r) => r[1] === 0),
			      fn + " not a suspect (" + rows.map((r) => r[1] ? "yes" : "no").join(",") + ")");
	}
}

async function main() {
	const { context, page } = await launch(modules, chromiumPath, profileDir, { viewport: { width: 1280, height: 1400 } });
	const seen = watch(page);

	await page.goto("file://" + path.resolve(pageFile));
	await page.waitForFunction(() => window.memtap && window.memtap.frames);
	const D = await page.evaluate(() => JSON.parse(document.getElementById("data").textContent));
	check(N > 0, N + " intervals in the recording");
	await checkData(page, D);
	await checkSuspects(page, D);
	await checkFlame(page);
	await checkExpected(page, D);
	seen.done();
	await context.close();
}

run(main);
